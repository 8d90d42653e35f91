-- The chat transcript: markdown inside, read-only, folds set by the chat window.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

-- Tree-sitter based highlighters (nvim-treesitter, vim.treesitter.start) parse it as markdown.
pcall(vim.treesitter.language.register, "markdown", { "claude_sidecar", "claude_sidecar_prompt" })
vim.bo.commentstring = "> %s"
vim.b.undo_ftplugin = "setl commentstring<"
