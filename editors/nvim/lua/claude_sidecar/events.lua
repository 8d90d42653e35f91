--- `User` autocmd events, so users can script the plugin:
---   autocmd User ClaudeTurnEnded lua print(vim.inspect(vim.v.event))   -- or args.data in Lua
--- Every event carries `data` (a table: at least `chat`, the chat number).
local M = {}

--- Fire `User <name>` with `data`; a failing user autocmd is reported, never breaks the plugin.
---@param name string e.g. "ClaudeTurnEnded"
---@param data table
function M.emit(name, data)
  local ok, err = pcall(vim.api.nvim_exec_autocmds, "User", { pattern = name, data = data, modeline = false })
  if not ok then
    require("claude_sidecar.log").notify(vim.log.levels.ERROR, "a User %s autocmd failed: %s", name, err)
  end
end

return M
