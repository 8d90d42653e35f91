local config = require("claude_sidecar.config")

return {
  ["options merge over the defaults"] = function()
    local merged = config.apply({ layout = "below", keymaps = { send = "<C-CR>" } })
    assert(merged.layout == "below" and merged.keymaps.send == "<C-CR>")
    assert(merged.keymaps.interrupt == "<C-c>", "unset keymaps keep their defaults")
    assert(merged.warm_pool == 1 and merged.coalesce_ms == 16)
  end,

  ["a bad option is refused with its name"] = function()
    local ok, err = pcall(config.apply, { layout = "diagonal" })
    assert(not ok and tostring(err):match("layout"), tostring(err))
    ok, err = pcall(config.apply, { cmd = "claude-sidecar --stdio" })
    assert(not ok and tostring(err):match("cmd"), tostring(err))
  end,
}
