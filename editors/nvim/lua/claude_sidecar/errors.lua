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

--- Tell the user a request failed (the one way daemon errors reach the user as messages); an
--- error already told (`reported`: the daemon did not fit the plugin) is not told again.
---@param err table|string|nil
function M.report(err)
  if type(err) == "table" and err.reported then
    return
  end
  require("claude_sidecar.log").notify(vim.log.levels.ERROR, "%s", M.describe(err))
end

--- Whether a turn's error (claude/turnEnded `error`) or a daemon error says the CLI must sign
--- in: no credentials, or a key the API refused (`authRequired`).
---@param err table|string|nil
---@return boolean
function M.auth_required(err)
  return type(err) == "table" and (err.kind == "authRequired" or M.name(err) == "authRequired")
end

--- Tell the user the CLI must sign in: the daemon's message (what is wrong and both ways to
--- fix it), then the command to run in a terminal on a line of its own.
---@param err table
function M.report_auth_required(err)
  local data = type(err.data) == "table" and err.data or {}
  local text = err.message or "Claude Code needs you to sign in"
  if type(data.how) == "string" then
    text = text .. "\nSign in from a terminal: " .. data.how
  end
  require("claude_sidecar.log").notify(vim.log.levels.ERROR, "%s", text)
end

--- The daemon's error name (e.g. "channelNotFound"), if it sent one.
---@param err table|string|nil
---@return string|nil
function M.name(err)
  return type(err) == "table" and type(err.data) == "table" and err.data.name or nil
end

return M
