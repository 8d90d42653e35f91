--- The daemon: one `claude-sidecar --stdio` per Neovim (over connection.lua), started on first use, started
--- again on the next request if it died, and shut down when Neovim exits.
---
--- With the shared daemon (`daemon = "shared"`, `claude-sidecar connect`) the process is only a bridge to
--- the per-user daemon, whose chats outlive it: when it exits while chats are open, it is started again
--- (after 0.25 s, doubling up to 8 s, at most RECONNECT_TRIES times in a row), requests wait meanwhile,
--- and the reconnect listeners re-attach the chats before the waiting requests go out.
local log = require("claude_sidecar.log")

local M = {}

---@type claude_sidecar.Connection|nil
local client = nil
local ready = false
---@type {method: string, params: table, callback: fun(err: any, result: any)}[]
local queued = {}
local notification_handlers = {} ---@type table<string, fun(params: table)>
local request_handlers = {} ---@type table<string, fun(params: table): any, table?>
local exit_listeners = {} ---@type fun(code: integer, signal: integer)[]
local drop_listeners = {} ---@type fun()[]
local reconnect_listeners = {} ---@type fun()[]
local ready_listeners = {} ---@type fun()[]
local keep_alive = function()
  return false
end
-- Shared daemon: tries in a row that ended before `initialize` answered (0: connected, or not reconnecting).
local reconnecting = 0
local RECONNECT_TRIES = 8
local generation = 0
local daemon_pid = nil ---@type integer|nil
local server = nil ---@type table|nil the daemon's initialize answer, as M.describe_initialize gives it

--- Handle a notification from the daemon (one handler per method).
function M.on_notification(method, handler)
  notification_handlers[method] = handler
end

--- Answer a request from the daemon (e.g. claude/callEditorTool): handler returns result, err.
function M.on_request(method, handler)
  request_handlers[method] = handler
end

--- Be told when the daemon exits (its channels are gone with it; with the shared daemon, when
--- the connection is gone for good: it could not be made again).
function M.on_exit(listener)
  table.insert(exit_listeners, listener)
end

--- Shared daemon: be told when the connection dropped and is being made again (the chats go on
--- in the daemon).
function M.on_drop(listener)
  table.insert(drop_listeners, listener)
end

--- Shared daemon: be told when a dropped connection is back (initialized); requests made in
--- the listener go out before those that waited for the connection.
function M.on_reconnect(listener)
  table.insert(reconnect_listeners, listener)
end

--- Be told each time a connection to the daemon is initialized (the first one, a daemon started
--- again, a shared daemon's connection made again): M.server() says what it serves; requests made
--- in the listener go out before those that waited for the connection.
function M.on_ready(listener)
  table.insert(ready_listeners, listener)
end

--- Shared daemon: `fn()` says whether a dropped connection is worth making again (chats are open).
---@param fn fun(): boolean
function M.set_keep_alive(fn)
  keep_alive = fn
end

local function fail_queued(err)
  local pending = queued
  queued = {}
  for _, item in ipairs(pending) do
    item.callback(err, nil)
  end
end

local function initialization_options()
  local config = require("claude_sidecar.config").options
  local options = {
    clientName = "claude_sidecar.nvim",
    coalesceDeltasMs = config.coalesce_ms,
    warmPool = { size = config.warm_pool, cwd = vim.fn.getcwd() },
    autoAllowTools = config.auto_allow_tools,
    protocol = require("claude_sidecar.protocol").options(),
  }
  if #options.autoAllowTools == 0 then
    options.autoAllowTools = nil
  end
  if config.cli_path then
    options.cliPath = config.cli_path
  end
  if config.editor_tools then
    options.editorTools = require("claude_sidecar.editor_tools").declarations()
  end
  return options
end

--- Why `cmd` could not run, in the user's terms (nil if it looks runnable).
local function unrunnable(cmd)
  local program = cmd[1]
  if type(program) ~= "string" or program == "" then
    return "no command given"
  end
  if vim.fn.executable(program) == 1 then
    return nil
  end
  if program:find("/", 1, true) and vim.uv.fs_stat(program) then
    return "not executable"
  end
  return "not found"
end

--- The message for a daemon that cannot be started: names the option and the fixes.
local function cannot_start(cmd, reason)
  return string.format(
    "cannot start the daemon `%s`: %s; set require('claude_sidecar').setup({ cmd = ... })"
      .. " or install it (:help claude_sidecar-install)",
    table.concat(cmd, " "),
    reason
  )
end

local start

--- The daemon (or the connection to it) is gone for good: the waiting requests fail and the
--- exit listeners learn it.
local function gone(code, signal)
  reconnecting = 0
  fail_queued({ code = -32099, message = "the claude-sidecar daemon exited" })
  for _, listener in ipairs(exit_listeners) do
    listener(code, signal)
  end
end

--- Shared daemon: the connection dropped (`dropped`: it was up; else a try to make it again
--- failed). Start it again after a delay that doubles with each failed try; after RECONNECT_TRIES
--- failed tries give up (M.gone).
local function reconnect_later(code, signal, dropped)
  if dropped then
    reconnecting = 0
    log.notify(vim.log.levels.WARN, "the connection to the shared daemon dropped; connecting again")
    for _, listener in ipairs(drop_listeners) do
      listener()
    end
  end
  if reconnecting >= RECONNECT_TRIES then
    log.notify(
      vim.log.levels.ERROR,
      "could not connect to the shared daemon again (%d tries); the next message tries once more",
      reconnecting
    )
    return gone(code, signal)
  end
  reconnecting = reconnecting + 1
  local delay = math.min(250 * 2 ^ (reconnecting - 1), 8000)
  log.info("connecting to the shared daemon again in %d ms (try %d)", delay, reconnecting)
  local this = generation
  vim.defer_fn(function()
    if this ~= generation or client then
      return -- stopped (or started by a request) meanwhile
    end
    local ok, err = pcall(start)
    if not ok then
      log.info("connecting again failed: %s", err)
      reconnect_later(code, signal, false)
    end
  end, delay)
end

start = function()
  local config = require("claude_sidecar.config")
  local cmd = config.daemon_cmd()
  generation = generation + 1
  local this = generation
  local daemon_log = log.daemon_reader()
  local ok, started = pcall(require("claude_sidecar.connection").start, cmd, { env = config.options.env }, {
    notification = function(method, params)
      local handler = notification_handlers[method]
      if handler then
        local handled, err = pcall(handler, params)
        if not handled then
          log.error("handling %s failed: %s", method, err)
        end
      end
    end,
    request = function(method, params)
      local handler = request_handlers[method]
      if not handler then
        return nil, { code = -32601, message = "claude_sidecar.nvim does not handle " .. method }
      end
      return handler(params)
    end,
    stderr = daemon_log,
    exit = function(code, signal)
      daemon_log(nil)
      if this ~= generation then
        return
      end
      log.info("daemon exited (code %s, signal %s)", code, signal)
      local was_ready = ready
      client, ready, server = nil, false, nil
      if config.shared() and (was_ready or reconnecting > 0) and keep_alive() then
        return reconnect_later(code, signal, was_ready)
      end
      gone(code, signal)
    end,
    error = function(message)
      log.warn("daemon stream: %s", message)
    end,
  })
  if not ok then
    error(cannot_start(cmd, unrunnable(cmd) or tostring(started)), 0)
  end
  client = started
  daemon_pid = started.pid
  log.info("daemon started: %s", table.concat(cmd, " "))
  client.request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "Neovim", version = tostring(vim.version()) },
    capabilities = vim.empty_dict(),
    initializationOptions = initialization_options(),
  }, function(err, result)
    if this ~= generation then
      return
    end
    if err then
      -- The requests waiting for the daemon report it (e.g. the chat that was opening).
      log.info("initialize failed: %s", require("claude_sidecar.errors").describe(err))
      local mismatch = require("claude_sidecar.protocol").mismatch(err)
      if mismatch then
        -- Plugin and daemon do not fit: told once, with the fix; the waiting requests say the
        -- same where they show errors (a chat's notice), without telling it again.
        log.notify(vim.log.levels.ERROR, "%s", mismatch)
        err = { code = err.code, message = mismatch, data = err.data, reported = true }
      end
      if reconnecting > 0 then
        if started.is_closing() then
          return -- it exited: its exit handler tries again
        end
        -- It answered with an error: trying again would get the same.
        M.stop()
        return gone(nil, nil)
      end
      fail_queued(err)
      M.stop()
      return
    end
    ready = true
    server = M.describe_initialize(result)
    if reconnecting > 0 then
      reconnecting = 0
      log.info("connected to the shared daemon again")
      for _, listener in ipairs(reconnect_listeners) do
        local called, lerr = pcall(listener)
        if not called then
          log.error("after reconnecting: %s", lerr)
        end
      end
    end
    for _, listener in ipairs(ready_listeners) do
      local called, lerr = pcall(listener)
      if not called then
        log.error("once connected: %s", lerr)
      end
    end
    local pending = queued
    queued = {}
    for _, item in ipairs(pending) do
      M.request(item.method, item.params, item.callback)
    end
  end)
end

--- What the initialize result says about the daemon and the CLI it runs.
---@param result table the InitializeResult
---@return table: name, version, protocol, features, ignored_options, cli (path, version, error, ...)
function M.describe_initialize(result)
  local info = result and result.serverInfo or {}
  local sidecar = vim.tbl_get(result or {}, "capabilities", "experimental", "claudeSidecar") or {}
  local cli = sidecar.cli or {}
  local function text(v)
    return type(v) == "string" and v or nil
  end
  -- Not `x and y or nil`: a false `tested` is the one that matters.
  local tested = nil
  if type(cli.tested) == "boolean" then
    tested = cli.tested
  end
  local function strings(v)
    return type(v) == "table" and vim.tbl_filter(function(item)
      return type(item) == "string"
    end, v) or {}
  end
  return {
    name = text(info.name),
    version = text(info.version),
    protocol = type(sidecar.protocolVersion) == "number" and sidecar.protocolVersion or nil,
    features = strings(sidecar.features),
    ignored_options = strings(sidecar.ignoredOptions),
    cli = {
      path = text(cli.path),
      version = text(cli.version),
      error = text(cli.error),
      source = text(cli.source),
      tested = tested,
      tested_versions = type(cli.testedVersions) == "table" and cli.testedVersions or {},
    },
  }
end

--- What the running daemon said about itself when it started (nil before initialize answered).
function M.server()
  return server
end

--- Send a request; callback(err, result) runs on the main loop. Starts the daemon if needed.
--- `params` may be a function that makes them once the daemon has answered initialize (params
--- that depend on its features).
---@param method string
---@param params table|fun(): table
---@param callback? fun(err: table|nil, result: any)
function M.request(method, params, callback)
  callback = callback
    or function(err)
      if err and not err.reported then
        log.error("%s failed: %s", method, require("claude_sidecar.errors").describe(err))
      end
    end
  if not client and reconnecting > 0 then
    -- The shared daemon's connection is being made again: the request goes out once it is.
    table.insert(queued, { method = method, params = params, callback = callback })
    return
  end
  if not client then
    local ok, err = pcall(start)
    if not ok then
      log.notify(vim.log.levels.ERROR, "%s", err)
      vim.schedule(function()
        callback({ code = -32099, message = err }, nil)
      end)
      return
    end
  end
  if not ready then
    table.insert(queued, { method = method, params = params, callback = callback })
    return
  end
  if type(params) == "function" then
    params = params()
  end
  assert(client).request(method, params, callback)
end

--- True while a daemon runs.
function M.running()
  return client ~= nil and not client.is_closing()
end

--- The daemon's process id while it runs.
function M.pid()
  return M.running() and daemon_pid or nil
end

--- Shut the daemon down politely (it closes every CLI), waiting up to timeout_ms.
function M.stop(timeout_ms)
  local running = client
  generation = generation + 1
  if reconnecting > 0 then
    reconnecting = 0
    fail_queued({ code = -32099, message = "the claude-sidecar daemon was stopped" })
  end
  if not running then
    return
  end
  client, ready, server = nil, false, nil
  queued = {}
  if running.is_closing() then
    return
  end
  local done = false
  running.request("shutdown", vim.NIL, function()
    done = true
  end)
  vim.wait(timeout_ms or 5000, function()
    return done
  end, 10)
  running.notify("exit", vim.NIL)
  vim.wait(500, function()
    return running.is_closing()
  end, 10)
  running.terminate()
end

return M
