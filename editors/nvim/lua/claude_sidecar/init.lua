--- claude_sidecar.nvim: chat with Claude Code inside Neovim, through the claude-sidecar daemon.
local log = require("claude_sidecar.log")

local M = {}

local configured = false
local started = false

--- Configure the plugin (see lua/claude_sidecar/config.lua for every option). Only the options
--- are taken here: the rest of the client loads with the first command, so a setup() in the
--- user's init.lua costs startup next to nothing.
---@param opts table|nil
function M.setup(opts)
  require("claude_sidecar.config").apply(opts)
  configured = true
end

--- Wire the client up, once, at its first use: the daemon's notifications and requests go to
--- the chats, file buffers are followed, the daemon stops when Neovim exits.
local function start()
  started = true
  local chat = require("claude_sidecar.chat")
  local rpc = require("claude_sidecar.rpc")
  for _, method in ipairs({
    "claude/delta",
    "claude/entry",
    "claude/status",
    "claude/permissionRequest",
    "claude/permissionCancelled",
    "claude/fileUpdated",
    "claude/turnEnded",
  }) do
    rpc.on_notification(method, function(params)
      chat.dispatch(method, params)
    end)
  end
  rpc.on_request("claude/callEditorTool", function(params)
    return require("claude_sidecar.editor_tools").call(params)
  end)
  rpc.on_exit(function()
    chat.daemon_exited()
    require("claude_sidecar.permissions").daemon_exited()
  end)
  -- The shared daemon: a dropped connection is made again while chats (or :ClaudeAgents) are
  -- open, and they re-attach.
  local roster = require("claude_sidecar.roster")
  rpc.set_keep_alive(function()
    return chat.any_open() or roster.holds("list")
  end)
  rpc.on_drop(chat.connection_dropped)
  rpc.on_reconnect(chat.reattach_all)
  -- Every chat of the daemon (:ClaudeAgents, and the alerts of a chat waiting elsewhere).
  rpc.on_notification("claude/channelsChanged", roster.channels_changed)
  rpc.on_ready(roster.connected)
  rpc.on_exit(roster.disconnected)
  rpc.on_drop(roster.disconnected)
  require("claude_sidecar.files").track()
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = vim.api.nvim_create_augroup("claude_sidecar", { clear = true }),
    callback = function()
      rpc.stop(3000)
    end,
  })
end

--- Whether setup() has run: by the user's config, or with the defaults by the first command.
---@return boolean
function M.is_setup()
  return configured
end

local function ensure_setup()
  if not configured then
    M.setup({})
  end
  if not started then
    start()
  end
end

local function chat_or_warn()
  ensure_setup()
  local chat = require("claude_sidecar.chat")
  local c = chat.for_buffer(vim.api.nvim_get_current_buf()) or chat.current()
  if not c then
    log.notify(vim.log.levels.WARN, "no chat yet; :Claude opens one")
  end
  return c
end

--- Whether the running daemon serves `feature` (it says so otherwise); true before it answered
--- initialize: the command's own request starts it, and says what goes wrong.
local function served(feature, command)
  return require("claude_sidecar.rpc").server() == nil or require("claude_sidecar.protocol").require(feature, command)
end

--- Show chat `c` with the cursor in its prompt, typing if `start_insert` says so.
local function show_for_typing(c)
  local chat = require("claude_sidecar.chat")
  if require("claude_sidecar.config").options.start_insert then
    chat.focus_prompt(c)
  else
    chat.show(c)
  end
end

--- :Claude — show the current chat, or start one in the current directory.
function M.open()
  ensure_setup()
  local chat = require("claude_sidecar.chat")
  show_for_typing(chat.current() or chat.new(vim.fn.getcwd()))
end

--- :ClaudeNew — start another chat.
function M.new()
  ensure_setup()
  show_for_typing(require("claude_sidecar.chat").new(vim.fn.getcwd()))
end

--- :ClaudeSend [text] — send text, or (with a range) the lines as context plus text. In a
--- chat's transcript the lines are quoted back to Claude; in its prompt they are the prompt.
function M.send(text, line1, line2)
  ensure_setup()
  local chat = require("claude_sidecar.chat")
  local source = vim.api.nvim_get_current_buf()
  local here = chat.for_buffer(source)
  if line1 and line2 then
    local lines = vim.api.nvim_buf_get_lines(source, line1 - 1, line2, false)
    local context
    if here and source == here.buf then
      local quoted = vim.tbl_map(function(line)
        return "> " .. line
      end, lines)
      context = "About this part of our conversation:\n" .. table.concat(quoted, "\n")
    elseif here then
      context = table.concat(lines, "\n")
    else
      local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(source), ":~:.")
      context = string.format(
        "%s lines %d-%d:\n```%s\n%s\n```",
        path ~= "" and path or "[buffer]",
        line1,
        line2,
        vim.bo[source].filetype,
        table.concat(lines, "\n")
      )
    end
    text = text ~= "" and (context .. "\n\n" .. text) or context
  end
  if text:match("^%s*$") then
    log.notify(vim.log.levels.WARN, "nothing to send")
    return
  end
  local c = here or chat.current() or chat.new(vim.fn.getcwd())
  chat.send(c, text)
  chat.show(c)
end

function M.interrupt()
  local c = chat_or_warn()
  if c then
    require("claude_sidecar.chat").interrupt(c)
  end
end

--- :ClaudeClose — close the current chat: its CLI ends, its windows and buffers go.
function M.close()
  local c = chat_or_warn()
  if c then
    require("claude_sidecar.chat").close(c)
  end
end

--- :ClaudeDetach — close the current chat here and leave it running in the shared daemon
--- (:ClaudeAttach or :ClaudeSessions opens it again, here or in another editor).
function M.detach()
  ensure_setup()
  if not require("claude_sidecar.config").shared() then
    log.notify(
      vim.log.levels.WARN,
      ':ClaudeDetach needs the shared daemon: setup({ daemon = "shared" }) (:help claude_sidecar-shared);'
        .. " :ClaudeClose ends a chat, q hides it"
    )
    return
  end
  local c = chat_or_warn()
  if c and served("attach", ":ClaudeDetach") then
    require("claude_sidecar.chat").close(c, true)
  end
end

local MODES = { "default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions" }

--- Returns apply(value): sends `method` with { [field] = value } for chat c once its channel
--- is open (an empty value does nothing).
local function setter(c, method, field)
  return function(value)
    if not value or value == "" then
      return
    end
    require("claude_sidecar.chat").when_open(c, function()
      require("claude_sidecar.rpc").request(method, { channelId = c.channel_id, [field] = value }, function(err)
        if err then
          require("claude_sidecar.errors").report(err)
        end
      end)
    end)
  end
end

--- :ClaudeMode [mode] — switch the permission mode (a picker without an argument).
function M.mode(mode)
  local c = chat_or_warn()
  if not c then
    return
  end
  local apply = setter(c, "claude/setPermissionMode", "mode")
  if mode and mode ~= "" then
    apply(mode)
  else
    vim.ui.select(MODES, { prompt = "Permission mode (now " .. tostring(c.mode) .. ")" }, apply)
  end
end

--- :ClaudeModel [model [effort]] — switch the model (a picker of the CLI's models, then of
--- the effort levels, without an argument).
function M.model(model, effort)
  local c = chat_or_warn()
  if c then
    require("claude_sidecar.model_picker").pick(c, model, effort)
  end
end

--- :ClaudeImage [path] — attach an image (PNG, JPEG, GIF, WebP) to the next message.
function M.image(path)
  local c = chat_or_warn()
  if c then
    require("claude_sidecar.images").command(c, path)
  end
end

--- The prompt (entry) at the cursor in a chat window, for fork and rewind.
local function prompt_at_cursor(c)
  local chat = require("claude_sidecar.chat")
  local index = #c.t.entries
  if vim.api.nvim_get_current_buf() == c.buf then
    index = chat.entry_at(c, vim.api.nvim_win_get_cursor(0)[1]) or 1
  end
  local entry, at = require("claude_sidecar.transcript").prompt_at(c.t, index)
  if not entry then
    log.notify(vim.log.levels.WARN, "put the cursor on (or below) a prompt that was sent")
    return nil
  end
  return entry, at
end

--- :ClaudeFork — a new chat continuing this one up to the answer to the prompt at the cursor.
function M.fork()
  local c = chat_or_warn()
  if not c or not served("fork", ":ClaudeFork") then
    return
  end
  local entry = prompt_at_cursor(c)
  if not entry then
    return
  end
  local chat = require("claude_sidecar.chat")
  -- The daemon cuts the conversation where the fork starts; the new chat shows what it kept.
  local fork = chat.create(c.cwd)
  local params = { atMessageId = entry.id }
  if c.channel_id then
    params.channelId = c.channel_id
  else
    params.sessionId = c.session_id
  end
  local marker = string.format("forked from Claude #%d: the conversation goes on from here", c.number)
  chat.open_channel(fork, params, "claude/forkSession", marker)
  chat.show(fork)
end

--- :ClaudeRewind — show what rewinding files to before the prompt at the cursor does, then ask.
function M.rewind()
  local c = chat_or_warn()
  if not c or not served("rewind", ":ClaudeRewind") then
    return
  end
  local entry = prompt_at_cursor(c)
  if entry then
    require("claude_sidecar.rewind").start(c, entry)
  end
end

--- :ClaudePermissions — the permission requests waiting for an answer, in every chat.
function M.permissions()
  ensure_setup()
  require("claude_sidecar.permissions").pick()
end

--- :ClaudeAttach — pick a chat running in the shared daemon (started by another editor, or by
--- this Neovim before a restart) and open it here.
function M.attach()
  ensure_setup()
  local config = require("claude_sidecar.config")
  if not config.shared() then
    log.notify(
      vim.log.levels.WARN,
      ':ClaudeAttach needs the shared daemon: setup({ daemon = "shared" }) (:help claude_sidecar-shared)'
    )
    return
  end
  require("claude_sidecar.attach").pick()
end

--- :ClaudeAgents — every chat of the daemon in one list, the ones waiting for you first.
function M.agents()
  ensure_setup()
  require("claude_sidecar.agents").open()
end

--- :ClaudeWorktree [name] — a new chat in a git worktree of its own, on a branch of its own.
--- Without a name it asks for the chat's task first, then a name made from the task.
function M.worktree(name)
  ensure_setup()
  local worktrees = require("claude_sidecar.worktrees")
  if not name or name == "" then
    return worktrees.ask(show_for_typing)
  end
  local chat = worktrees.new_chat(name)
  if chat then
    show_for_typing(chat)
  end
end

--- :ClaudeSessions — resume a stored session of the current directory.
function M.sessions()
  ensure_setup()
  require("claude_sidecar.sessions").pick(vim.fn.getcwd())
end

--- :ClaudeChats — switch between the open chats.
function M.chats()
  ensure_setup()
  local chat = require("claude_sidecar.chat")
  if #chat.chats == 0 then
    return M.open()
  end
  vim.ui.select(chat.chats, {
    prompt = "Claude chats",
    kind = "claude_sidecar.chat",
    format_item = function(c)
      local first = require("claude_sidecar.transcript").prompt_at(c.t, #c.t.entries)
      return string.format(
        "#%d %s · %s%s",
        c.number,
        vim.fn.fnamemodify(c.cwd, ":~"),
        c.state,
        first and (" · " .. first.text:gsub("\n", " "):sub(1, 50)) or ""
      )
    end,
  }, function(c)
    if c then
      chat.show(c)
    end
  end)
end

--- :ClaudeDiff [path] — Claude's latest change (of path) as a side-by-side diff.
function M.diff(path)
  require("claude_sidecar.files").diff(path)
end

--- For the statusline: "Claude: running · plan · ctx 23% · $0.0123" for the current chat ("" without one).
function M.statusline()
  local chat = package.loaded["claude_sidecar.chat"]
  local c = chat and (chat.for_buffer(vim.api.nvim_get_current_buf()) or chat.current())
  if not c then
    return ""
  end
  local parts = { "Claude: " .. c.state }
  if c.retry then
    table.insert(parts, string.format("retry %d/%d", c.retry.attempt or 0, c.retry.maxRetries or 0))
  end
  if c.mode and c.mode ~= "default" then
    table.insert(parts, c.mode)
  end
  local meter = require("claude_sidecar.meter").text(c)
  if meter ~= "" then
    table.insert(parts, meter)
  end
  return table.concat(parts, " · ")
end

return M
