local sessions = require("claude_sidecar.sessions")

local function session(fields)
  return vim.tbl_extend("force", {
    sessionId = "9a3c1f0e-5b7d-4e2a-8c6f-0d1e2f3a4b5c",
    title = "Port the checkout",
    firstPrompt = "port the checkout",
    updatedAt = "2026-11-29T09:12:44.318Z",
    createdAt = "2026-11-24T08:01:02.114Z",
    messageCount = 42,
  }, fields)
end

return {
  ["a session read whole shows its message count"] = function()
    local label = sessions.label(session({}))
    assert(label == "2026-11-29 09:12  Port the checkout  (42 messages)", label)
  end,

  ["a partial session says its messages are not counted yet instead of a count"] = function()
    local label = sessions.label(session({ partial = true, messageCount = 0 }))
    assert(label == "2026-11-29 09:12  Port the checkout  (not counted yet)", label)
  end,
}
