-- The prompt buffer: <C-x><C-u> completes `@` mentions (files, buffers, agents) and `/` commands.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

vim.bo.completefunc = "v:lua.require'claude_sidecar.completion'.completefunc"
vim.b.undo_ftplugin = "setl completefunc<"
