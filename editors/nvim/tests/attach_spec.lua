local attach = require("claude_sidecar.attach")

return {
  [":ClaudeAttach lists a chat by directory, state, model and the editors attached"] = function()
    local label = attach.label({
      channelId = "ch-3",
      cwd = "/srv/shop",
      state = "awaitingPermission",
      model = "claude-sonnet-4-5",
      clients = {
        { connectionId = "conn-1", clientName = "claude_sidecar.nvim" },
        { connectionId = "conn-4" },
      },
      pendingPermissions = { { requestId = "r1" } },
    })
    assert(
      label
        == "ch-3 · /srv/shop · awaitingPermission · claude-sonnet-4-5 · 2 clients: claude_sidecar.nvim, conn-4"
          .. " · 1 waiting for an answer",
      label
    )
  end,

  ["a chat nobody is attached to says so, and has no model before its first turn"] = function()
    local label = attach.label({ channelId = "ch-1", cwd = "/srv/blog", state = "idle" })
    assert(label == "ch-1 · /srv/blog · idle · no client", label)
  end,
}
