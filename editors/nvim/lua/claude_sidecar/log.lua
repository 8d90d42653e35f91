--- Logging: to a file if configured, else warnings and errors via vim.notify.
local M = {}

local levels = vim.log.levels
local names = { [levels.DEBUG] = "DEBUG", [levels.INFO] = "INFO", [levels.WARN] = "WARN",
  [levels.ERROR] = "ERROR", [levels.TRACE] = "TRACE" }

local function emit(level, fmt, ...)
  local config = require("claude_sidecar.config").options
  if level < config.log_level then
    return
  end
  local text = select("#", ...) > 0 and string.format(fmt, ...) or fmt
  if config.log_file then
    local file = io.open(config.log_file, "a")
    if file then
      file:write(string.format("%s %s %s\n", os.date("%H:%M:%S"), names[level] or "?", text))
      file:close()
    end
  elseif level >= levels.WARN then
    vim.schedule(function()
      vim.notify("claude-sidecar: " .. text, level)
    end)
  end
end

function M.debug(...) emit(levels.DEBUG, ...) end
function M.info(...) emit(levels.INFO, ...) end
function M.warn(...) emit(levels.WARN, ...) end
function M.error(...) emit(levels.ERROR, ...) end

return M
