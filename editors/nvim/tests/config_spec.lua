local config = require("claude_sidecar.config")

return {
  ["options merge over the defaults"] = function()
    local merged = config.apply({ layout = "below", keymaps = { send = "<C-CR>" } })
    assert(merged.layout == "below" and merged.keymaps.send == "<C-CR>")
    assert(merged.keymaps.interrupt == "<C-c>", "unset keymaps keep their defaults")
    assert(merged.warm_pool == 1 and merged.coalesce_ms == 16 and merged.page_entries == 100)
  end,

  ["a bad option is refused with its name"] = function()
    local ok, err = pcall(config.apply, { layout = "diagonal" })
    assert(not ok and tostring(err):match("layout"), tostring(err))
    ok, err = pcall(config.apply, { cmd = "claude-sidecar --stdio" })
    assert(not ok and tostring(err):match("cmd"), tostring(err))
    ok, err = pcall(config.apply, { page_entries = 0 })
    assert(not ok and tostring(err):match("page_entries"), tostring(err))
  end,

  ["the daemon runs with the log level of the plugin, unless cmd is given"] = function()
    config.apply({ log_level = vim.log.levels.DEBUG })
    local cmd = config.daemon_cmd()
    assert(vim.deep_equal(vim.list_slice(cmd, 2), { "--stdio", "--log-level", "DEBUG" }), vim.inspect(cmd))
    config.apply({})
    assert(config.daemon_cmd()[4] == "WARNING")
    config.apply({ cmd = { "/opt/claude-sidecar", "--stdio" } })
    assert(vim.deep_equal(config.daemon_cmd(), { "/opt/claude-sidecar", "--stdio" }))
    config.apply({})
  end,

  ["the shared daemon is reached through connect, unless cmd is given"] = function()
    config.apply({ daemon = "shared" })
    local cmd = config.daemon_cmd()
    assert(vim.deep_equal(vim.list_slice(cmd, 2), { "--log-level", "WARNING", "connect" }), vim.inspect(cmd))
    assert(config.shared())
    local ssh = { "ssh", "devbox", "claude-sidecar", "connect" }
    config.apply({ daemon = "shared", cmd = ssh })
    assert(vim.deep_equal(config.daemon_cmd(), ssh))
    local ok, err = pcall(config.apply, { daemon = "remote" })
    assert(not ok and tostring(err):match("daemon"), tostring(err))
    config.apply({})
    assert(not config.shared())
  end,

  ["without cmd, the daemon the build step installed in this checkout is preferred"] = function()
    config.apply({})
    local installed = config.checkout() .. "/.venv/bin/claude-sidecar"
    local expected = vim.fn.executable(installed) == 1 and installed or "claude-sidecar"
    assert(config.daemon_cmd()[1] == expected, config.daemon_cmd()[1])
    assert(vim.fn.filereadable(config.checkout() .. "/editors/nvim/build.lua") == 1, config.checkout())
  end,

  ["the checkout is found through a symlinked plugin folder (pack/*/start)"] = function()
    local start = vim.fn.tempname() .. "/pack/claude/start"
    vim.fn.mkdir(start, "p")
    local plugin = vim.fn.fnamemodify(config.checkout() .. "/editors/nvim", ":p"):gsub("/$", "")
    assert(vim.uv.fs_symlink(plugin, start .. "/claude_sidecar"))
    local linked = dofile(start .. "/claude_sidecar/lua/claude_sidecar/config.lua")
    assert(linked.checkout() == config.checkout(), linked.checkout())
  end,
}
