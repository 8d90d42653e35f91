--- The plugin's highlight groups, linked to standard groups with `default = true` so a
--- colorscheme or the user's own `:highlight` wins.
local M = {}

M.links = {
  ClaudeSidecarPrompt = "Question", -- "> what you asked"
  ClaudeSidecarTool = "Function", -- "● Bash(make test)"
  ClaudeSidecarToolError = "DiagnosticError", -- "⎿ ✗ a tool that failed"
  ClaudeSidecarPermission = "WarningMsg", -- "? Edit(calc.py) — waiting for your answer"
  ClaudeSidecarNotice = "DiagnosticWarn", -- "⚠ ..." lines, retries, queued prompts
  ClaudeSidecarTurnEnd = "Comment", -- "─── done in 3.2 s ───", "═══ resumed ═══"
  ClaudeSidecarThinking = "Comment", -- "∴ Thinking" blocks
  ClaudeSidecarFile = "Directory", -- "✎ calc.py (+1 −1)"
  ClaudeSidecarAgentHeader = "Title", -- :ClaudeAgents: "Claude chats: 1 waiting, 2 idle"
  ClaudeSidecarAgentWaiting = "WarningMsg", -- "waiting": a chat waits for your answer
  ClaudeSidecarAgentRunning = "DiagnosticInfo", -- "running", "starting"
  ClaudeSidecarAgentIdle = "DiagnosticOk", -- "idle"
  ClaudeSidecarAgentExited = "Comment", -- "exited"
  ClaudeSidecarAgentFailed = "DiagnosticError", -- "failed": its CLI ended with an error
}

--- Define the groups (again after a :colorscheme, which clears them).
function M.setup()
  for group, link in pairs(M.links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

local done = false

--- Define the groups once, and after every :colorscheme.
function M.ensure()
  if done then
    return
  end
  done = true
  M.setup()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("claude_sidecar.highlights", { clear = true }),
    callback = M.setup,
  })
end

return M
