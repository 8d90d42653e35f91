--- The daemon: one `claude-sidecar --stdio` per Neovim, started on first use, started
--- again on the next request if it died, and shut down when Neovim exits.
local log = require("claude_sidecar.log")

local M = {}

---@type vim.lsp.rpc.PublicClient|nil
local client = nil
local ready = false
---@type {method: string, params: table, callback: fun(err: any, result: any)}[]
local queued = {}
local notification_handlers = {} ---@type table<string, fun(params: table)>
local request_handlers = {} ---@type table<string, fun(params: table): any, table?>
local exit_listeners = {} ---@type fun(code: integer, signal: integer)[]
local generation = 0
local daemon_pid = nil ---@type integer|nil

--- Handle a notification from the daemon (one handler per method).
function M.on_notification(method, handler)
  notification_handlers[method] = handler
end

--- Answer a request from the daemon (e.g. claude/callEditorTool): handler returns result, err.
function M.on_request(method, handler)
  request_handlers[method] = handler
end

--- Be told when the daemon exits (its channels are gone with it).
function M.on_exit(listener)
  table.insert(exit_listeners, listener)
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

local function start()
  local config = require("claude_sidecar.config").options
  generation = generation + 1
  local this = generation
  local dispatchers = {
    notification = function(method, params)
      local handler = notification_handlers[method]
      if handler then
        local ok, err = pcall(handler, params)
        if not ok then
          log.error("handling %s failed: %s", method, err)
        end
      end
    end,
    server_request = function(method, params)
      local handler = request_handlers[method]
      if not handler then
        return nil, { code = -32601, message = "claude_sidecar.nvim does not handle " .. method }
      end
      local ok, result, err = pcall(handler, params)
      if not ok then
        return nil, { code = -32603, message = tostring(result) }
      end
      return result, err
    end,
    on_exit = vim.schedule_wrap(function(code, signal)
      if this ~= generation then
        return
      end
      log.info("daemon exited (code %s, signal %s)", code, signal)
      client, ready = nil, false
      fail_queued({ code = -32099, message = "the claude-sidecar daemon exited" })
      for _, listener in ipairs(exit_listeners) do
        listener(code, signal)
      end
    end),
    on_error = function(code, err)
      log.warn("daemon stream error %s: %s", code, vim.inspect(err))
    end,
  }
  local before = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    before[pid] = true
  end
  local ok, started = pcall(vim.lsp.rpc.start, config.cmd, dispatchers, { env = config.env })
  if not ok then
    error(string.format("cannot start the claude-sidecar daemon (%s): %s",
      table.concat(config.cmd, " "), started), 0)
  end
  client = started
  daemon_pid = nil
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    if not before[pid] then
      daemon_pid = pid
    end
  end
  log.info("daemon started: %s", table.concat(config.cmd, " "))
  client.request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "Neovim", version = tostring(vim.version()) },
    capabilities = vim.empty_dict(),
    initializationOptions = initialization_options(),
  }, function(err)
    if this ~= generation then
      return
    end
    if err then
      log.error("initialize failed: %s", require("claude_sidecar.errors").describe(err))
      fail_queued(err)
      M.stop()
      return
    end
    ready = true
    local pending = queued
    queued = {}
    for _, item in ipairs(pending) do
      M.request(item.method, item.params, item.callback)
    end
  end)
end

--- Send a request; callback(err, result) runs on the main loop. Starts the daemon if needed.
---@param method string
---@param params table
---@param callback? fun(err: table|nil, result: any)
function M.request(method, params, callback)
  callback = callback or function(err)
    if err then
      log.error("%s failed: %s", method, require("claude_sidecar.errors").describe(err))
    end
  end
  if not client then
    local ok, err = pcall(start)
    if not ok then
      vim.schedule(function() callback({ code = -32099, message = err }, nil) end)
      return
    end
  end
  if not ready then
    table.insert(queued, { method = method, params = params, callback = callback })
    return
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
  if not running then
    return
  end
  generation = generation + 1
  client, ready = nil, false
  queued = {}
  if running.is_closing() then
    return
  end
  local done = false
  running.request("shutdown", vim.NIL, function()
    done = true
  end)
  vim.wait(timeout_ms or 5000, function() return done end, 10)
  running.notify("exit", vim.NIL)
  vim.wait(500, function() return running.is_closing() end, 10)
  running.terminate()
end

return M
