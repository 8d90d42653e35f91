local config = require("claude_sidecar.config")
local log = require("claude_sidecar.log")

--- The lines log_file gets while `fn` runs, with log_level = level.
local function logged(level, fn)
  local file = vim.fn.tempname()
  config.apply({ log_file = file, log_level = level })
  fn()
  local lines = vim.fn.filereadable(file) == 1 and vim.fn.readfile(file) or {}
  config.apply({})
  -- Drop the time: "12:00:00 WARN text" -> "WARN text".
  return vim.tbl_map(function(line)
    return (line:gsub("^%d%d:%d%d:%d%d ", ""))
  end, lines)
end

return {
  ["the daemon's lines are logged at the level the daemon gave them"] = function()
    local lines = logged(vim.log.levels.DEBUG, function()
      local read = log.daemon_reader()
      read("2026-11-22 23:43:20,123 DEBUG claude_sidecar.hub: routing")
      read("2026-11-22 23:43:20,124 INFO claude_sidecar.channel: channel ch-1: idle -> running")
      read("2026-11-22 23:43:20,125 WARNING claude_sidecar.pool: a spare CLI failed to start")
      read("2026-11-22 23:43:20,126 CRITICAL claude_sidecar.server: gone")
      read(nil)
    end)
    assert(
      vim.deep_equal(lines, {
        "DEBUG daemon: claude_sidecar.hub: routing",
        "INFO daemon: claude_sidecar.channel: channel ch-1: idle -> running",
        "WARN daemon: claude_sidecar.pool: a spare CLI failed to start",
        "ERROR daemon: claude_sidecar.server: gone",
      }),
      vim.inspect(lines)
    )
  end,

  ["a traceback is one entry with the line that logged it; below log_level nothing is written"] = function()
    local lines = logged(vim.log.levels.WARN, function()
      local read = log.daemon_reader()
      read("2026-11-22 23:43:20,123 INFO claude_sidecar.hub: fine")
      read("Traceback (most recent call last):")
      read("2026-11-22 23:43:20,125 ERROR claude_sidecar.channel: crashed")
      read("Traceback (most recent call last):")
      read('  File "x.py", line 1')
      read(nil)
    end)
    assert(
      vim.deep_equal(lines, {
        "ERROR daemon: claude_sidecar.channel: crashed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
      }),
      vim.inspect(lines)
    )
  end,

  ["output before the daemon's logging is set up is an error"] = function()
    local lines = logged(vim.log.levels.WARN, function()
      local read = log.daemon_reader()
      read("Traceback (most recent call last):")
      read("ModuleNotFoundError: No module named 'pygls'")
      read(nil)
    end)
    assert(
      vim.deep_equal(
        lines,
        { "ERROR daemon: Traceback (most recent call last):", "ModuleNotFoundError: No module named 'pygls'" }
      ),
      vim.inspect(lines)
    )
  end,
}
