--- JSON-RPC errors from the daemon, as the user should read them.
local M = {}

--- One line for an error object ({code, message, data}) or a string.
---@param err table|string|nil
---@return string
function M.describe(err)
  if err == nil then
    return "unknown error"
  end
  if type(err) ~= "table" then
    return tostring(err)
  end
  local text = err.message or vim.inspect(err)
  local data = type(err.data) == "table" and err.data or {}
  if data.stderrTail and data.stderrTail ~= "" then
    text = text .. "\n" .. data.stderrTail
  end
  return text
end

--- Tell the user a request failed (the one way daemon errors reach the user as messages).
---@param err table|string|nil
function M.report(err)
  require("claude_sidecar.log").notify(vim.log.levels.ERROR, "%s", M.describe(err))
end

--- The daemon's error name (e.g. "channelNotFound"), if it sent one.
---@param err table|string|nil
---@return string|nil
function M.name(err)
  return type(err) == "table" and type(err.data) == "table" and err.data.name or nil
end

return M
