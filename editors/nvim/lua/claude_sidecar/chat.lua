--- Chats: one buffer per channel (the transcript) and a prompt buffer to write in.
local config = require("claude_sidecar.config")
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local render = require("claude_sidecar.render")
local rpc = require("claude_sidecar.rpc")
local transcript = require("claude_sidecar.transcript")

local M = {}

---@class claude_sidecar.Chat
---@field number integer
---@field channel_id string|nil
---@field session_id string|nil
---@field cwd string
---@field state string
---@field model string|nil
---@field mode string|nil
---@field buf integer
---@field prompt_buf integer
---@field t claude_sidecar.Transcript
---@field starts integer[] first buffer line (0-based) of each entry
---@field folds {[1]: integer, [2]: integer}[] thinking line ranges (1-based, inclusive)
---@field outbox string[] prompts waiting for the channel to open
---@field opening boolean
---@field on_open fun(chat: claude_sidecar.Chat)[] run once the channel is open

---@type claude_sidecar.Chat[]
M.chats = {}
local by_channel = {} ---@type table<string, claude_sidecar.Chat>
local early = {} ---@type table<string, {method: string, params: table}[]>
local current = nil ---@type claude_sidecar.Chat|nil
local count = 0

--- The chat the user is working with, if any.
function M.current()
  return current
end

--- The chat shown in buffer `buf` (a chat or prompt buffer), if any.
function M.for_buffer(buf)
  for _, chat in ipairs(M.chats) do
    if chat.buf == buf or chat.prompt_buf == buf then
      return chat
    end
  end
  return nil
end

-- ------------------------------------------------------------------ rendering

--- Redraw entries from index `from` to the end (earlier entries never change).
function M.refresh(chat, from)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  from = math.max(1, math.min(from or 1, #chat.t.entries + 1))
  local opts = { tool_result_lines = config.options.tool_result_lines }
  local start = chat.starts[from] or vim.api.nvim_buf_line_count(chat.buf)
  if from == 1 then
    start = 1 -- line 0 holds the chat's title
  end
  local lines, line = {}, start
  for i = #chat.folds, 1, -1 do
    if chat.folds[i][1] > start then
      table.remove(chat.folds, i)
    end
  end
  for i = from, #chat.t.entries do
    chat.starts[i] = line
    local entry_lines, fold_from = render.entry(chat.t.entries[i], opts)
    if fold_from then
      table.insert(chat.folds, { line + fold_from, line + #entry_lines })
    end
    vim.list_extend(lines, entry_lines)
    line = line + #entry_lines
  end
  for i = #chat.t.entries + 1, #chat.starts do
    chat.starts[i] = nil
  end
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local last = vim.api.nvim_buf_line_count(chat.buf)
    follow[win] = vim.api.nvim_win_get_cursor(win)[1] >= last - 1
  end
  vim.bo[chat.buf].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf, start, -1, false, lines)
  vim.bo[chat.buf].modifiable = false
  local last = vim.api.nvim_buf_line_count(chat.buf)
  for win, at_end in pairs(follow) do
    if at_end and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

local function title(chat)
  return string.format("Claude #%d · %s · %s%s", chat.number, vim.fn.fnamemodify(chat.cwd, ":~"),
    chat.state, chat.mode and chat.mode ~= "default" and (" · " .. chat.mode) or "")
end

local function set_title(chat)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  vim.bo[chat.buf].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf, 0, 1, false, { "# " .. title(chat) })
  vim.bo[chat.buf].modifiable = false
end

--- Fold level of line `lnum` in a chat buffer: thinking blocks fold away.
function M.foldexpr(lnum)
  local chat = M.for_buffer(vim.api.nvim_get_current_buf())
  if chat then
    for _, range in ipairs(chat.folds) do
      if lnum >= range[1] and lnum <= range[2] then
        return 1
      end
    end
  end
  return 0
end

--- The transcript entry shown at 1-based line `lnum` of the chat buffer.
function M.entry_at(chat, lnum)
  local found = nil
  for i, start in ipairs(chat.starts) do
    if start < lnum then
      found = i
    end
  end
  return found
end

function M.add_notice(chat, text)
  M.refresh(chat, transcript.notice(chat.t, text))
end

-- ------------------------------------------------------------------ buffers and windows

local function buffer(name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  pcall(vim.api.nvim_buf_set_name, buf, name)
  return buf
end

local function map_keys(chat)
  local keys = config.options.keymaps
  local send = function()
    M.send_prompt_buffer(chat)
  end
  if keys.send then
    vim.keymap.set({ "n", "i" }, keys.send, send, { buffer = chat.prompt_buf, desc = "Send to Claude" })
  end
  vim.keymap.set("n", "<CR>", send, { buffer = chat.prompt_buf, desc = "Send to Claude" })
  if keys.interrupt then
    for _, buf in ipairs({ chat.buf, chat.prompt_buf }) do
      vim.keymap.set("n", keys.interrupt, function() M.interrupt(chat) end,
        { buffer = buf, desc = "Interrupt Claude" })
    end
  end
  if keys.close then
    vim.keymap.set("n", keys.close, function() M.hide(chat) end, { buffer = chat.buf, desc = "Hide the chat" })
  end
end

local function window_for(buf)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

local function setup_chat_window(win, chat)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].foldmethod = "expr"
  vim.wo[win].foldexpr = "v:lua.require'claude_sidecar.chat'.foldexpr(v:lnum)"
  vim.wo[win].foldlevel = 0
end

--- Show a chat (its transcript above its prompt) and put the cursor in the prompt.
function M.show(chat)
  current = chat
  local opts = config.options
  local chat_win = window_for(chat.buf)
  if not chat_win then
    -- Another chat's windows in this tab are reused, so switching chats keeps the layout.
    for _, other in ipairs(M.chats) do
      local win = other ~= chat and window_for(other.buf)
      if win then
        chat_win = win
        vim.api.nvim_win_set_buf(win, chat.buf)
        local prompt_win = window_for(other.prompt_buf)
        if prompt_win then
          vim.api.nvim_win_set_buf(prompt_win, chat.prompt_buf)
        end
        break
      end
    end
  end
  if not chat_win then
    local split = ({ right = "botright vsplit", left = "topleft vsplit", below = "botright split",
      above = "topleft split", tab = "tabnew" })[opts.layout]
    vim.cmd(split)
    chat_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(chat_win, chat.buf)
    if opts.layout == "right" or opts.layout == "left" then
      vim.api.nvim_win_set_width(chat_win, opts.width)
    elseif opts.layout ~= "tab" then
      vim.api.nvim_win_set_height(chat_win, opts.height)
    end
  end
  setup_chat_window(chat_win, chat)
  local prompt_win = window_for(chat.prompt_buf)
  if not prompt_win then
    vim.api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(prompt_win, chat.prompt_buf)
    vim.api.nvim_win_set_height(prompt_win, opts.prompt_height)
  end
  vim.api.nvim_set_current_win(prompt_win)
end

--- Close the chat's windows; the chat (and its CLI) goes on.
function M.hide(chat)
  for _, buf in ipairs({ chat.prompt_buf, chat.buf }) do
    local win = window_for(buf)
    if win and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(win, false)
    end
  end
end

-- ------------------------------------------------------------------ channels

local function attach(chat, channel_id, session_id)
  chat.channel_id, chat.session_id = channel_id, session_id or chat.session_id
  by_channel[channel_id] = chat
  for _, note in ipairs(early[channel_id] or {}) do
    M.dispatch(note.method, note.params)
  end
  early[channel_id] = nil
  local waiting = chat.on_open
  chat.on_open = {}
  for _, fn in ipairs(waiting) do
    fn(chat)
  end
  local outbox = chat.outbox
  chat.outbox = {}
  for _, text in ipairs(outbox) do
    M.send(chat, text)
  end
end

--- Open a channel for a chat: new, or resuming `resume` (a session id).
---@param chat claude_sidecar.Chat
---@param params table extra claude/newChannel params (resume, model, permissionMode)
function M.open_channel(chat, params, method)
  chat.opening = true
  chat.state = "starting"
  set_title(chat)
  params = vim.tbl_extend("keep", params or {}, { cwd = chat.cwd })
  rpc.request(method or "claude/newChannel", params, function(err, result)
    chat.opening = false
    if err then
      chat.state = "failed"
      set_title(chat)
      M.add_notice(chat, "could not start Claude: " .. errors.describe(err))
      for _, text in ipairs(chat.outbox) do
        log.warn("not sent: %s", text)
      end
      chat.outbox = {}
      return
    end
    attach(chat, result.channelId, result.sessionId)
  end)
end

--- Create a chat (and its buffers) without opening a channel.
function M.create(cwd, t)
  count = count + 1
  local chat = {
    number = count, cwd = cwd, state = "new", t = t or transcript.new(), starts = {}, folds = {},
    outbox = {}, opening = false, on_open = {},
  }
  chat.buf = buffer("claude://chat/" .. count, "markdown")
  chat.prompt_buf = buffer("claude://prompt/" .. count, "markdown")
  vim.bo[chat.buf].modifiable = false
  vim.b[chat.buf].claude_sidecar_chat = count
  map_keys(chat)
  table.insert(M.chats, chat)
  set_title(chat)
  M.refresh(chat, 1)
  return chat
end

--- A new chat in `cwd` with the configured model and mode.
function M.new(cwd)
  local chat = M.create(cwd or vim.fn.getcwd())
  local opts = config.options
  M.open_channel(chat, { model = opts.model, permissionMode = opts.permission_mode })
  return chat
end

--- Run fn(chat) now if the chat's channel is open, else once it is (in order, before
--- any queued prompt is sent).
function M.when_open(chat, fn)
  if chat.channel_id then
    fn(chat)
  else
    table.insert(chat.on_open, fn)
  end
end

--- Send a prompt; queued while the channel opens, and a dead channel is resumed first.
function M.send(chat, text)
  if text:match("^%s*$") then
    return
  end
  if not chat.channel_id then
    table.insert(chat.outbox, text)
    if not chat.opening then
      M.open_channel(chat, { resume = chat.session_id })
    end
    return
  end
  local index = transcript.prompt(chat.t, text, nil)
  M.refresh(chat, index)
  rpc.request("claude/sendMessage", { channelId = chat.channel_id, text = text }, function(err, result)
    if err then
      M.add_notice(chat, "not sent: " .. errors.describe(err))
      return
    end
    chat.t.entries[index].message_id = result.messageId
  end)
end

function M.send_prompt_buffer(chat)
  local lines = vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if text:match("^%s*$") then
    return
  end
  vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, {})
  M.send(chat, text)
end

function M.interrupt(chat)
  if not chat.channel_id then
    return
  end
  rpc.request("claude/interrupt", { channelId = chat.channel_id }, function(err)
    if err then
      M.add_notice(chat, "interrupt failed: " .. errors.describe(err))
    end
  end)
end

-- ------------------------------------------------------------------ notifications

local handlers = {}

function handlers.delta(chat, params)
  local index = transcript.delta(chat.t, params)
  if index then
    M.refresh(chat, index)
  end
end

function handlers.message(chat, params)
  local message = params.message
  if type(message) ~= "table" then
    return
  end
  local index = transcript.message(chat.t, message)
  if index then
    M.refresh(chat, index)
  end
end

function handlers.status(chat, params)
  chat.state = params.state
  chat.session_id = params.sessionId or chat.session_id
  chat.model = params.model or chat.model
  chat.mode = params.permissionMode or chat.mode
  set_title(chat)
  if params.state == "exited" and params.exit then
    local exit = params.exit
    M.add_notice(chat, string.format("the CLI exited (code %s, signal %s); the next message resumes the session",
      tostring(exit.code), tostring(exit.signal)))
  end
  vim.cmd("redrawstatus")
end

--- Route one notification to its chat (held until the chat knows its channel id).
function M.dispatch(method, params)
  local name = method:match("^claude/(.*)$")
  local channel_id = params.channelId
  local chat = by_channel[channel_id]
  if not chat then
    early[channel_id] = early[channel_id] or {}
    table.insert(early[channel_id], { method = method, params = params })
    return
  end
  local handler = handlers[name]
  if handler then
    handler(chat, params)
  elseif name == "permissionRequest" then
    require("claude_sidecar.permissions").request(chat, params)
  elseif name == "permissionCancelled" then
    require("claude_sidecar.permissions").cancelled(chat, params)
  elseif name == "fileUpdated" then
    require("claude_sidecar.files").updated(chat, params)
  end
end

--- The daemon died: every chat's channel is gone; the next message resumes its session.
function M.daemon_exited()
  for _, chat in ipairs(M.chats) do
    if chat.channel_id then
      by_channel[chat.channel_id] = nil
      chat.channel_id = nil
      chat.state = "exited"
      set_title(chat)
      M.add_notice(chat, "the claude-sidecar daemon exited; the next message resumes this session")
    end
  end
  early = {}
end

return M
