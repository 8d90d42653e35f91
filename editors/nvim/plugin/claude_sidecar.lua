-- Commands only; everything else loads on first use (require("claude_sidecar").setup() to configure).
if vim.g.loaded_claude_sidecar then
  return
end
vim.g.loaded_claude_sidecar = true

local function cs()
  return require("claude_sidecar")
end

local command = vim.api.nvim_create_user_command
command("Claude", function()
  cs().open()
end, { desc = "Open or focus the Claude chat" })
command("ClaudeNew", function()
  cs().new()
end, { desc = "Start another Claude chat" })
command("ClaudeChats", function()
  cs().chats()
end, { desc = "Switch between Claude chats" })
command("ClaudeSend", function(args)
  if args.range > 0 then
    cs().send(args.args, args.line1, args.line2)
  else
    cs().send(args.args)
  end
end, { nargs = "*", range = true, desc = "Send text (and the selected lines) to Claude" })
command("ClaudeClose", function()
  cs().close()
end, { desc = "Close the Claude chat (its CLI ends)" })
command("ClaudeInterrupt", function()
  cs().interrupt()
end, { desc = "Stop Claude's current turn" })
command("ClaudeMode", function(args)
  cs().mode(args.args)
end, {
  nargs = "?",
  desc = "Set the permission mode",
  complete = function()
    return { "default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions" }
  end,
})
command("ClaudeModel", function(args)
  cs().model(args.fargs[1], args.fargs[2])
end, {
  nargs = "*",
  desc = "Set the model (and effort)",
  complete = function(lead)
    return require("claude_sidecar.model_picker").complete(lead)
  end,
})
command("ClaudeImage", function(args)
  cs().image(args.args)
end, { nargs = "?", complete = "file", desc = "Attach an image to the next message" })
command("ClaudeFork", function()
  cs().fork()
end, { desc = "Fork the chat at the prompt under the cursor" })
command("ClaudeRewind", function()
  cs().rewind()
end, { desc = "Rewind files to before the prompt under the cursor" })
command("ClaudeDetach", function()
  cs().detach()
end, { desc = "Close the chat here; it runs on in the shared daemon" })
command("ClaudeAttach", function()
  cs().attach()
end, { desc = "Open a chat running in the shared daemon" })
command("ClaudeAgents", function()
  cs().agents()
end, { desc = "Every Claude chat of the daemon: who needs you" })
command("ClaudeWorktree", function(args)
  cs().worktree(args.args)
end, { nargs = "?", desc = "Start a Claude chat in a git worktree of its own" })
command("ClaudeSessions", function()
  cs().sessions()
end, { desc = "Resume a stored Claude session" })
command("ClaudeDiff", function(args)
  cs().diff(args.args)
end, { nargs = "?", complete = "file", desc = "Show Claude's latest change to a file as a diff" })
command("ClaudePermissions", function()
  cs().permissions()
end, { desc = "Answer the permission requests left for later" })
