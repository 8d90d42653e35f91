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

--- Whether vim.notify is Neovim's own, which echoes: a message longer than the command line,
--- of more than one line, or a second one before the screen is drawn again stops Neovim at a
--- hit-enter prompt, and until a key is pressed no chat is drawn and no UI's request is
--- answered. A notifier plugin's vim.notify shows it without stopping.
local function notify_echoes()
  local info = debug.getinfo(vim.notify, "S")
  return info ~= nil and info.source:find("vim/_editor.lua", 1, true) ~= nil
end

--- `text` as one line of at most `room` display cells: its first line, cut with "…" when it is
--- longer or more lines follow.
---@param text string
---@param room integer
---@return string
local function one_line(text, room)
  local first = text:match("^[^\n]*")
  if first == text and vim.fn.strdisplaywidth(first) <= room then
    return text
  end
  -- As many characters as cells, then fewer while wide ones make it wider.
  local cut = vim.fn.strcharpart(first, 0, room - 1)
  while cut ~= "" and vim.fn.strdisplaywidth(cut) > room - 1 do
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
  end
  return cut .. "…"
end

local RECENT = 20
local recent = {} ---@type string[] the last records shown as messages, whole
local pending = {} ---@type {level: integer, text: string}[] records not shown yet

--- The last log records shown as messages (without log_file), whole, oldest first.
---@return string[]
function M.recent()
  return vim.list_slice(recent, 1)
end

--- Show the records logged since the last time, the plugin's own and the daemon's: they come at
--- any time (while a chat streams, while the user types), so with Neovim's own vim.notify they
--- are one line that fits the command line (the last of the most severe, and how many more),
--- never a hit-enter prompt; the whole records are kept for :checkhealth.
local function show_pending()
  local records = pending
  pending = {}
  if #records == 0 then
    return
  end
  if not notify_echoes() then
    for _, record in ipairs(records) do
      vim.notify("claude-sidecar: " .. record.text, record.level, { title = "claude-sidecar" })
    end
    return
  end
  local shown = records[1]
  for _, record in ipairs(records) do
    if record.level >= shown.level then
      shown = record -- the last of the most severe
    end
    table.insert(recent, record.text)
  end
  while #recent > RECENT do
    table.remove(recent, 1)
  end
  local head = "claude-sidecar: " .. (#records > 1 and string.format("(+%d more) ", #records - 1) or "")
  local room = math.max(vim.v.echospace - vim.fn.strdisplaywidth(head), 10)
  vim.notify(head .. one_line(shown.text, room), shown.level, { title = "claude-sidecar" })
end

local function emit(level, fmt, ...)
  local text = format(fmt, ...)
  local logged = write(level, text)
  local config = require("claude_sidecar.config").options
  if not logged and level >= levels.WARN and level >= config.log_level then
    table.insert(pending, { level = level, text = text })
    if #pending == 1 then
      -- Scheduled: callers may run in a fast event (a daemon callback) where notify is not
      -- allowed; the records logged meanwhile are shown with it.
      vim.schedule(show_pending)
    end
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
