--- The one way the plugin speaks: log lines to a file (if configured) and, for what the
--- user must see, vim.notify.
---
--- log.debug/info/warn/error record what happened (to `log_file` when set, else warnings and
--- errors are also shown). log.notify is for messages meant for the user: always shown,
--- whatever `log_file` says, and logged too.
local M = {}

local levels = vim.log.levels
local names = {
  [levels.DEBUG] = "DEBUG",
  [levels.INFO] = "INFO",
  [levels.WARN] = "WARN",
  [levels.ERROR] = "ERROR",
  [levels.TRACE] = "TRACE",
}

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

function M.debug(...)
  emit(levels.DEBUG, ...)
end
function M.info(...)
  emit(levels.INFO, ...)
end
function M.warn(...)
  emit(levels.WARN, ...)
end
function M.error(...)
  emit(levels.ERROR, ...)
end

-- The daemon's log lines on stderr: "2026-11-22 23:43:20,123 WARNING claude_sidecar.hub: text".
local daemon_levels =
  { DEBUG = levels.DEBUG, INFO = levels.INFO, WARNING = levels.WARN, ERROR = levels.ERROR, CRITICAL = levels.ERROR }

--- A reader for the daemon's stderr: give it each line; it logs each of the daemon's records
--- at the level the daemon gave it ("daemon: name: text"). Lines that carry no level (a
--- traceback's) belong to the record before them and are logged with it, as one entry; lines
--- before any level (Python failing before its logging is set up) are an error. Call it with
--- nil when the daemon has exited.
---@return fun(line: string|nil)
function M.daemon_reader()
  local level, lines = levels.ERROR, {}
  local timer = nil ---@type uv.uv_timer_t|nil
  local function flush()
    if #lines > 0 then
      emit(level, "daemon: " .. table.concat(lines, "\n"))
    end
    lines = {}
  end
  return function(line)
    if timer then
      timer:stop()
    end
    if line == nil then
      flush()
      level = levels.ERROR
      if timer then
        timer:close()
        timer = nil
      end
      return
    end
    local name, rest = line:match("^%d%d%d%d%-%d%d%-%d%d [%d:,.]+ (%u+) (.*)$")
    if name and daemon_levels[name] then
      flush()
      level = daemon_levels[name]
      line = rest
    end
    if line ~= "" then
      table.insert(lines, line)
    end
    -- A record is complete once the next one starts, or when the daemon says nothing more.
    timer = timer or vim.uv.new_timer()
    timer:start(50, 0, vim.schedule_wrap(flush))
  end
end

--- Tell the user (always shown, also logged): log.notify(level, fmt, ...).
---@param level integer vim.log.levels.*
---@param fmt string
function M.notify(level, fmt, ...)
  local text = format(fmt, ...)
  write(level, text)
  show(level, text)
end

return M
