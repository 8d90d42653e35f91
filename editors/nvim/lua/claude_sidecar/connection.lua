--- One JSON-RPC connection to a child process over its stdin/stdout (Content-Length framing,
--- as LSP). Our own rather than vim.lsp.rpc so that the daemon's stderr is ours: vim.lsp.rpc
--- writes every stderr chunk to lsp.log as an ERROR, whatever the daemon meant.
---
--- Callbacks (responses, notifications, requests from the process, exit) run on the main loop,
--- in the order the messages arrived.
local M = {}

---@class claude_sidecar.Handlers
---@field notification fun(method: string, params: any)
---@field request fun(method: string, params: any): any, table? result, or nil and an error object
---@field stderr fun(line: string) one line of the process's stderr (without the newline)
---@field exit fun(code: integer, signal: integer)
---@field error fun(message: string) the stream carried something that is not JSON-RPC

---@class claude_sidecar.Connection
---@field pid integer
---@field request fun(method: string, params: any, callback: fun(err: table|nil, result: any)): boolean
---@field notify fun(method: string, params: any): boolean
---@field is_closing fun(): boolean
---@field terminate fun()

--- Splits a byte stream into lines; `emit` gets each complete line, and the rest at the end.
local function line_splitter(emit)
  local pending = ""
  return function(chunk)
    if chunk == nil then
      if pending ~= "" then
        emit(pending)
      end
      pending = ""
      return
    end
    pending = pending .. chunk
    local pos = 1
    while true do
      local newline = pending:find("\n", pos, true)
      if not newline then
        break
      end
      emit((pending:sub(pos, newline - 1):gsub("\r$", "")))
      pos = newline + 1
    end
    pending = pending:sub(pos)
  end
end

--- Splits a byte stream into Content-Length framed bodies; `emit` gets each body. The
--- buffer is cut once per chunk, not once per message: a chunk can hold hundreds of deltas.
local function frame_splitter(emit, on_error)
  local buffer = ""
  return function(chunk)
    buffer = buffer .. chunk
    local pos = 1
    while true do
      local header_end = buffer:find("\r\n\r\n", pos, true)
      if not header_end then
        break
      end
      local length = tonumber(buffer:sub(pos, header_end - 1):match("[Cc]ontent%-[Ll]ength:%s*(%d+)"))
      if not length then
        on_error("a message without Content-Length: " .. buffer:sub(pos, math.min(header_end, pos + 200)))
        pos = header_end + 4
      else
        local body_end = header_end + 3 + length
        if #buffer < body_end then
          break
        end
        emit(buffer:sub(header_end + 4, body_end))
        pos = body_end + 1
      end
    end
    buffer = buffer:sub(pos)
  end
end

--- Start `cmd` and speak JSON-RPC with it. Raises (with the OS's reason, e.g. "ENOENT: ...")
--- if the process cannot be started.
---@param cmd string[]
---@param opts {env?: table<string, string>, cwd?: string}
---@param handlers claude_sidecar.Handlers
---@return claude_sidecar.Connection
function M.start(cmd, opts, handlers)
  local callbacks = {} ---@type table<integer, fun(err: table|nil, result: any)>
  local next_id = 0
  local process ---@type vim.SystemObj

  local function send(message)
    if process:is_closing() then
      return false
    end
    local body = vim.json.encode(message)
    process:write(string.format("Content-Length: %d\r\n\r\n%s", #body, body))
    return true
  end

  local function answer(id, method, params)
    local ok, result, err = pcall(handlers.request, method, params)
    if not ok then
      result, err = nil, { code = -32603, message = tostring(result) }
    elseif result == nil and err == nil then
      result = vim.NIL
    end
    send({ jsonrpc = "2.0", id = id, result = err == nil and result or nil, error = err })
  end

  -- On the main loop, in arrival order (vim.schedule keeps order).
  local function dispatch(message)
    if type(message) ~= "table" then
      handlers.error("not a JSON-RPC message: " .. vim.inspect(message))
    elseif type(message.method) == "string" and message.id ~= nil then
      answer(message.id, message.method, message.params)
    elseif type(message.method) == "string" then
      handlers.notification(message.method, message.params)
    elseif message.id ~= nil then
      local callback = callbacks[message.id]
      callbacks[message.id] = nil
      if callback then
        callback(message.error, message.result)
      else
        handlers.error("an answer to no request: " .. vim.inspect(message))
      end
    else
      handlers.error("not a JSON-RPC message: " .. vim.inspect(message))
    end
  end

  local read_frames = frame_splitter(function(body)
    -- JSON null inside objects becomes nil (as vim.lsp.rpc does), so `x or default` works.
    local ok, message = pcall(vim.json.decode, body, { luanil = { object = true } })
    vim.schedule(function()
      if ok then
        dispatch(message)
      else
        handlers.error("invalid JSON from the daemon: " .. tostring(message))
      end
    end)
  end, vim.schedule_wrap(handlers.error))
  -- The last lines of stderr, for the error of requests the process never answered.
  local tail = {}
  local read_stderr = line_splitter(function(line)
    table.insert(tail, line)
    if #tail > 10 then
      table.remove(tail, 1)
    end
    vim.schedule(function()
      handlers.stderr(line)
    end)
  end)

  process = vim.system(
    cmd,
    {
      stdin = true,
      env = opts.env,
      cwd = opts.cwd,
      -- Its own process group: a Ctrl-C in Neovim's terminal must not reach the daemon.
      detach = vim.fn.has("win32") == 0,
      stdout = function(err, chunk)
        if err then
          vim.schedule(function()
            handlers.error("reading the daemon's stdout: " .. tostring(err))
          end)
        elseif chunk then
          read_frames(chunk)
        end
      end,
      stderr = function(_, chunk)
        read_stderr(chunk)
      end,
    },
    vim.schedule_wrap(function(result)
      local pending = callbacks
      callbacks = {}
      local exited = {
        code = -32099,
        message = result.signal ~= 0
            and string.format("the claude-sidecar daemon was killed (signal %d)", result.signal)
          or string.format("the claude-sidecar daemon exited (code %d)", result.code),
        data = { stderrTail = table.concat(tail, "\n") },
      }
      for _, callback in pairs(pending) do
        callback(exited, nil)
      end
      handlers.exit(result.code, result.signal)
    end)
  )

  ---@type claude_sidecar.Connection
  return {
    pid = process.pid,
    request = function(method, params, callback)
      next_id = next_id + 1
      if not send({ jsonrpc = "2.0", id = next_id, method = method, params = params }) then
        return false
      end
      callbacks[next_id] = callback
      return true
    end,
    notify = function(method, params)
      return send({ jsonrpc = "2.0", method = method, params = params })
    end,
    is_closing = function()
      return process:is_closing()
    end,
    terminate = function()
      if not process:is_closing() then
        process:kill(15)
      end
    end,
  }
end

return M
