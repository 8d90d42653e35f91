-- The chat transcript: markdown inside, read-only, folds set by the chat window.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

-- Tree-sitter based highlighters (nvim-treesitter, vim.treesitter.start) parse it as markdown.
pcall(vim.treesitter.language.register, "markdown", { "claude_sidecar", "claude_sidecar_prompt" })
vim.bo.commentstring = "> %s"
-- Where the text of a tool line (`⎿`, `●`, `✎`) or a list item starts: wrapped lines hang there.
vim.bo.formatlistpat = [[^\s*\(⎿\|●\|✎\|[-*+]\|\d\+[.)]\)\s\+]]
vim.b.undo_ftplugin = "setl commentstring< formatlistpat<"
