--- The one way the plugin speaks: log lines to a file (if configured) and, for what the
--- user must see, vim.notify.
---
--- log.debug/info/warn/error record what happened (to `log_file` when set, else warnings and
--- errors are also shown). log.notify is for messages meant for the user: always shown,
--- whatever `log_file` says, and logged too.
local M = {}

local levels = vim.log.levels
local names = { [levels.DEBUG] = "DEBUG", [levels.INFO] = "INFO", [levels.WARN] = "WARN",
  [levels.ERROR] = "ERROR", [levels.TRACE] = "TRACE" }

local function format(fmt, ...)
  return select("#", ...) > 0 and string.format(fmt, ...) or fmt
end

local function write(level, text)
  local config = require("claude_sidecar.config").options
  if level < config.log_level or not config.log_file then
    return false
  end
  local file = io.open(config.log_file, "a")
  if file then
    file:write(string.format("%s %s %s\n", os.date("%H:%M:%S"), names[level] or "?", text))
    file:close()
  end
  return true
end

local function show(level, text)
  -- Scheduled: callers may run in a fast event (a daemon callback) where notify is not allowed.
  vim.schedule(function()
    vim.notify("claude-sidecar: " .. text, level, { title = "claude-sidecar" })
  end)
end

local function emit(level, fmt, ...)
  local text = format(fmt, ...)
  local logged = write(level, text)
  local config = require("claude_sidecar.config").options
  if not logged and level >= levels.WARN and level >= config.log_level then
    show(level, text)
  end
end

function M.debug(...) emit(levels.DEBUG, ...) end
function M.info(...) emit(levels.INFO, ...) end
function M.warn(...) emit(levels.WARN, ...) end
function M.error(...) emit(levels.ERROR, ...) end

--- Tell the user (always shown, also logged): log.notify(level, fmt, ...).
---@param level integer vim.log.levels.*
---@param fmt string
function M.notify(level, fmt, ...)
  local text = format(fmt, ...)
  write(level, text)
  show(level, text)
end

return M
