--- Permission requests: the user decides each tool use the agent asks about.
---
--- A request shows in its tool's entry of the chat (with the diff, plan or questions), then
--- a `vim.ui.select` picker asks, one request at a time across all chats. "Later" (or
--- cancelling the picker) leaves the request pending: `:ClaudePermissions` asks it again.
local errors = require("claude_sidecar.errors")
local events = require("claude_sidecar.events")
local log = require("claude_sidecar.log")
local render = require("claude_sidecar.render")
local rpc = require("claude_sidecar.rpc")
local transcript = require("claude_sidecar.transcript")

local M = {}

---@class claude_sidecar.PermissionItem
---@field chat claude_sidecar.Chat
---@field channel_id string the channel that asked (a resumed chat gets another)
---@field params table the claude/permissionRequest params
---@field tool_id string|nil the tool use it asks about (its entry in the chat)
---@field later boolean the user chose to decide later
---@field shown boolean its tool's entry shows the request (the claude/entry right after it)
---@field cancelled boolean|nil it needs no answer any more (claude/permissionCancelled, or its
---  entry shows the daemon's decision): a question still open for it answers nothing
---@field cancelled_why string|nil how its line says why
---@field prompting boolean|nil Neovim's own vim.ui.select/input (an inputlist()/input() prompt) asks it now
---@field finish fun()|nil ends its asking (the picker's `done`)
---@field cancelled_notice string|nil what to tell the user once its open question is closed

---@type claude_sidecar.PermissionItem[] pending requests, oldest first
local pending = {}
local asking = nil ---@type claude_sidecar.PermissionItem|nil

local function chat_module()
  return require("claude_sidecar.chat")
end

--- Whether the item can still be answered (its chat and channel are still there).
local function live(item)
  return not item.chat.closed and item.chat.channel_id == item.channel_id
end

local function forget(item)
  for i, other in ipairs(pending) do
    if other == item then
      table.remove(pending, i)
      return
    end
  end
end

--- Say in the tool's entry how the user answered here (the daemon's decision gives the mark;
--- `withdrawn`: no decision will come, the daemon is gone).
local function settle(item, text, withdrawn)
  if not item.tool_id then
    return
  end
  item.chat.t.answers[item.tool_id] = text and { text = text, withdrawn = withdrawn }
  local _, index = transcript.get(item.chat.t, item.tool_id)
  if index then
    chat_module().refresh(item.chat, index, index) -- only its lines change
  end
end

--- What the request shows (the diff, plan or questions), as the tool's entry would.
local function asked_entry(params)
  return {
    name = params.toolName,
    input = params.input,
    permission = { preview = params.preview, previewNote = params.previewNote },
  }
end

local function respond(item, response, shown)
  forget(item)
  if item.cancelled or not live(item) then
    return
  end
  response.channelId = item.channel_id
  response.requestId = item.params.requestId
  rpc.request("claude/respondPermission", response, function(err)
    if errors.name(err) == "permissionRequestNotFound" then
      -- Answered in another editor (or withdrawn) before this answer arrived: the line shows
      -- the daemon's decision, not this one.
      settle(item, nil)
      log.notify(
        vim.log.levels.INFO,
        "Claude #%d: that request was answered elsewhere (or withdrawn) before your answer arrived",
        item.chat.number
      )
    elseif err then
      -- Still pending in the daemon: back on the list, to be answered again.
      item.later = true
      table.insert(pending, item)
      settle(item, "the answer failed (" .. errors.describe(err) .. "); :ClaudePermissions asks again")
    end
  end)
  settle(item, shown)
end

--- Who asks, for the picker's prompt: "Claude #2 (shop)" when several chats are open.
local function asker(item)
  if #chat_module().chats < 2 then
    return ""
  end
  return string.format("Claude #%d (%s): ", item.chat.number, vim.fn.fnamemodify(item.chat.cwd, ":t"))
end

-- ------------------------------------------------------------------ showing what is asked

--- Make sure the user sees the request before the picker covers the screen: in the chat
--- window when the entry fits there, else (and always for a plan, to be read as markdown)
--- in a floating preview. Returns a closer.
local function reveal(item)
  local chat = item.chat
  local entry = asked_entry(item.params)
  local _, index = transcript.get(chat.t, item.tool_id)
  local body, filetype = render.permission_body(entry)
  local win = vim.fn.bufwinid(chat.buf)
  if
    entry.name ~= "ExitPlanMode"
    and win ~= -1
    and vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_get_current_tabpage()
  then
    local first = (index and chat.starts[index] or 0) + 1
    local last = vim.api.nvim_buf_line_count(chat.buf)
    if last - first + 1 <= vim.api.nvim_win_get_height(win) then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
      vim.cmd("redraw")
      return function() end
    end
  end
  if #body == 0 then
    vim.cmd("redraw")
    return function() end
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, body)
  vim.bo[buf].filetype = filetype or ""
  vim.bo[buf].modifiable = false
  local width = 20
  for _, line in ipairs(body) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 1)
  end
  width = math.min(width, vim.o.columns - 4)
  -- Leave the lower part of the screen to the picker (the default one lists at the bottom).
  local height = math.max(1, math.min(#body, math.floor(vim.o.lines * 0.6) - 2))
  local float = vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2) - 1),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    focusable = false,
    title = " " .. asker(item) .. render.tool_summary(entry.name, entry.input) .. " ",
    title_pos = "center",
  })
  vim.wo[float].wrap = filetype == "markdown"
  vim.cmd("redraw")
  return function()
    if vim.api.nvim_win_is_valid(float) then
      vim.api.nvim_win_close(float, true)
    end
  end
end

-- ------------------------------------------------------------------ pickers

--- Whether `fn` is Neovim's own vim.ui.select/input (runtime/lua/vim/ui.lua): it waits in an
--- inputlist()/input() prompt until answered, and the daemon's notifications are still
--- handled meanwhile, so a request settled elsewhere can close it by typing <Esc> into it.
local function builtin(fn)
  local info = debug.getinfo(fn, "S")
  return info ~= nil and info.source:match("vim/ui%.lua$") ~= nil
end

--- vim.ui[name] (select or input) for the item's question, its last argument the callback.
--- An answer given after the request was settled elsewhere (a picker plugin's window, which
--- cannot be closed from here) answers nothing: the asking just ends.
local function ui(item, name, ...)
  local args = { ... }
  local callback = table.remove(args)
  local fn = vim.ui[name]
  table.insert(args, function(...)
    local closed = item.prompting
    item.prompting = nil
    if item.cancelled then
      if closed then
        -- Closed by the <Esc> settled_elsewhere typed: draw the screen the prompt scrolled up
        -- now, or the notice would stop at a hit-enter prompt.
        vim.cmd("redraw")
      end
      if item.cancelled_notice then
        log.notify(vim.log.levels.INFO, "%s", item.cancelled_notice)
      end
      return item.finish()
    end
    callback(...)
  end)
  -- Neovim's own picker returns only once answered; another's returns at once.
  item.prompting = builtin(fn) or nil
  fn(unpack(args))
end

local function deny_with_reason(item, again, done)
  ui(item, "input", { prompt = "Why not? (Claude reads this): " }, function(reason)
    if reason == nil or vim.trim(reason) == "" then
      return again()
    end
    respond(item, { decision = "deny", message = reason }, "denied: " .. reason)
    done()
  end)
end

local function defer(item, done)
  item.later = true
  settle(item, "waiting for your answer (:ClaudePermissions)")
  done()
end

local function ask_tool(item, done)
  local params = item.params
  local choices = { "Allow" }
  -- "Always allow" keeps the CLI's suggested rules; without any the daemon refuses it.
  if type(params.suggestions) == "table" and #params.suggestions > 0 then
    table.insert(choices, "Always allow")
  end
  vim.list_extend(choices, { "Deny", "Deny with reason…", "Later" })
  local function again()
    ask_tool(item, done)
  end
  ui(item, "select", choices, {
    prompt = asker(item) .. "Allow " .. render.tool_summary(params.toolName, params.input) .. "?",
    kind = "claude_sidecar.permission",
  }, function(choice)
    if choice == "Allow" then
      respond(item, { decision = "allow" }, "allowed")
    elseif choice == "Always allow" then
      respond(item, { decision = "allowAlways" }, "always allowed")
    elseif choice == "Deny" then
      respond(item, { decision = "deny" }, "denied")
    elseif choice == "Deny with reason…" then
      return deny_with_reason(item, again, done)
    else
      return defer(item, done)
    end
    done()
  end)
end

local OTHER = "Other…"

--- Ask each question of an AskUserQuestion request; done(answers) or done(nil) if cancelled.
local function ask_questions(item, done)
  local questions = (item.params.input or {}).questions or {}
  local answers = {}
  local function ask(i)
    local q = questions[i]
    if not q then
      return done(answers)
    end
    local options = vim.list_extend({}, q.options or {})
    local chosen = {}
    local function pick()
      local items = vim.list_extend({}, options)
      table.insert(items, { label = OTHER, description = "answer in your own words" })
      if q.multiSelect then
        table.insert(
          items,
          { label = "Done", description = #chosen > 0 and table.concat(chosen, ", ") or "none chosen" }
        )
      end
      ui(item, "select", items, {
        prompt = asker(item) .. tostring(q.question),
        kind = "claude_sidecar.question",
        format_item = function(option)
          local mark = vim.tbl_contains(chosen, option.label) and "✓ " or ""
          local description = option.description and option.description ~= "" and (" — " .. option.description) or ""
          return mark .. tostring(option.label) .. description
        end,
      }, function(option)
        if option == nil then
          return done(nil)
        elseif option.label == OTHER then
          ui(item, "input", { prompt = tostring(q.question) .. " " }, function(text)
            if text == nil or vim.trim(text) == "" then
              return pick()
            end
            answers[q.question] = text
            ask(i + 1)
          end)
        elseif option.label == "Done" and q.multiSelect then
          if #chosen == 0 then
            return pick()
          end
          answers[q.question] = table.concat(chosen, ", ")
          ask(i + 1)
        elseif q.multiSelect then
          if vim.tbl_contains(chosen, option.label) then
            chosen = vim.tbl_filter(function(l)
              return l ~= option.label
            end, chosen)
          else
            table.insert(chosen, option.label)
          end
          pick()
        else
          answers[q.question] = option.label
          ask(i + 1)
        end
      end)
    end
    pick()
  end
  ask(1)
end

local function ask_user_question(item, done)
  ask_questions(item, function(answers)
    if not answers then
      return defer(item, done)
    end
    local shown = {}
    for _, q in ipairs((item.params.input or {}).questions or {}) do
      if answers[q.question] then
        table.insert(shown, answers[q.question])
      end
    end
    respond(item, { decision = "allow", answers = answers }, "answered: " .. table.concat(shown, "; "))
    done()
  end)
end

local PLAN_CHOICES = {
  { label = "Yes, and auto-accept edits", mode = "acceptEdits" },
  { label = "Yes, and ask before each edit", mode = "default" },
  { label = "No, keep planning", mode = nil },
  { label = "No, and tell Claude what to change…", mode = nil, reason = true },
  { label = "Later", later = true },
}

local function ask_plan(item, done)
  ui(item, "select", PLAN_CHOICES, {
    prompt = asker(item) .. "Claude has a plan. Go ahead?",
    kind = "claude_sidecar.plan",
    format_item = function(choice)
      return choice.label
    end,
  }, function(choice)
    if choice == nil or choice.later then
      return defer(item, done)
    elseif choice.mode then
      respond(item, { decision = "allow", mode = choice.mode }, "plan approved (" .. choice.mode .. ")")
    elseif choice.reason then
      return deny_with_reason(item, function()
        ask_plan(item, done)
      end, done)
    else
      respond(item, { decision = "deny", message = "The user wants to keep planning." }, "keep planning")
    end
    done()
  end)
end

local function ask(item, done)
  local close = reveal(item)
  local function finished()
    item.finish = function() end
    close()
    done()
  end
  item.finish = finished
  local name = item.params.toolName
  if name == "AskUserQuestion" then
    ask_user_question(item, finished)
  elseif name == "ExitPlanMode" then
    ask_plan(item, finished)
  else
    ask_tool(item, finished)
  end
end

local function next_question()
  if asking then
    return
  end
  for _, item in ipairs(pending) do
    if item.shown and not item.later and live(item) then
      asking = item
      ask(item, function()
        asking = nil
        vim.schedule(next_question)
      end)
      return
    end
  end
end

-- How a cancelled request's line reads, by claude/permissionCancelled's reason.
local CANCELLED = {
  answeredElsewhere = "answered in another editor",
}
-- How it reads when the tool's entry shows the daemon's decision first, by that decision.
local DECIDED = { cancelled = "withdrawn" }

--- The request needs no answer any more (`why` says why, on its line unless `line_as_is`: the
--- entry shows the daemon's decision): forgotten, and a question still open for it is closed
--- (Neovim's own picker: <Esc> typed into it) or, in a picker plugin's window, answers
--- nothing; the user is told either way.
local function settled_elsewhere(item, why, line_as_is)
  if item.cancelled then
    return
  end
  item.cancelled, item.cancelled_why = true, why
  forget(item)
  settle(item, not line_as_is and why or nil)
  if asking ~= item then
    return
  end
  local what = string.format(
    "Claude #%d: %s was %s",
    item.chat.number,
    render.tool_summary(item.params.toolName, item.params.input),
    why
  )
  if item.prompting then
    -- Said once the prompt is closed (a message now would scroll it further).
    item.cancelled_notice = what .. "; its question is closed"
    vim.api.nvim_input("<Esc>")
  else
    log.notify(vim.log.levels.INFO, "%s; the question still open here answers nothing", what)
  end
end

-- ------------------------------------------------------------------ notifications

--- claude/permissionRequest: ask (its tool's entry, claude/entry, shows it with the diff).
function M.request(chat, params)
  events.emit(
    "ClaudePermissionRequest",
    { chat = chat.number, tool = params.toolName, request_id = params.requestId, auto = params.autoDecision ~= nil }
  )
  if params.autoDecision then
    return
  end
  -- Asked once the tool's entry shows the request (with its diff), so the picker never
  -- covers a chat that does not show yet what it asks about.
  table.insert(pending, {
    chat = chat,
    channel_id = chat.channel_id,
    params = params,
    tool_id = params.toolUseId,
    later = false,
    shown = params.toolUseId == nil,
  })
  next_question()
end

--- A tool's entry changed (claude/entry): a request it now shows can be asked.
function M.entry_changed(_, entry)
  local request_id = entry.kind == "tool" and entry.permission and entry.permission.requestId
  if not request_id then
    return
  end
  local decision = entry.permission.decision
  for _, item in ipairs(pending) do
    if item.params.requestId == request_id then
      if decision and decision ~= "pending" then
        -- Decided without this Neovim (its own answer was forgotten when sent).
        return settled_elsewhere(item, DECIDED[decision] or CANCELLED.answeredElsewhere)
      elseif not item.shown then
        item.shown = true
        next_question()
      end
    end
  end
end

--- claude/permissionCancelled: the request needs no answer any more (another editor attached to
--- the chat answered it: `answeredElsewhere`; the one this Neovim sent itself was forgotten already).
function M.cancelled(_, params)
  local reason = tostring(params.reason)
  local why = CANCELLED[reason] or ("withdrawn (" .. reason .. ")")
  for _, item in ipairs(pending) do
    if item.params.requestId == params.requestId then
      return settled_elsewhere(item, why)
    end
  end
end

--- The requests pending in the chat's channel as claude/attach (or newChannel's `attached`)
--- gives them: asked as if they had just arrived; those of the chat no longer listed are
--- forgotten (answered or withdrawn while this Neovim was away).
---@param chat claude_sidecar.Chat
---@param channel_id string
---@param requests table[] `pendingPermissions`
function M.restore(chat, channel_id, requests)
  local listed = {}
  for _, params in ipairs(requests) do
    listed[params.requestId] = params
  end
  for i = #pending, 1, -1 do
    local item = pending[i]
    if item.chat == chat then
      if listed[item.params.requestId] and item.channel_id == channel_id then
        listed[item.params.requestId] = nil
      else
        -- The snapshot's entry shows what became of it.
        settled_elsewhere(item, "answered or withdrawn while this Neovim was away", true)
      end
    end
  end
  for _, params in ipairs(requests) do
    if listed[params.requestId] then
      local request = vim.tbl_extend("force", params, { channelId = channel_id })
      table.insert(pending, {
        chat = chat,
        channel_id = channel_id,
        params = request,
        tool_id = params.toolUseId,
        later = false,
        -- The snapshot's tool entry already shows it.
        shown = true,
      })
    end
  end
  next_question()
end

--- The daemon died: its requests can no longer be answered.
function M.daemon_exited()
  for _, item in ipairs(pending) do
    settle(item, "withdrawn (the daemon exited)", true)
  end
  pending = {}
  asking = nil
end

--- The requests still waiting for an answer (stale ones, of closed or restarted channels, dropped).
---@return claude_sidecar.PermissionItem[]
function M.pending()
  pending = vim.tbl_filter(live, pending)
  return vim.list_extend({}, pending)
end

--- :ClaudePermissions — pick a pending request (of any chat) and answer it now.
function M.pick()
  local items = M.pending()
  if #items == 0 then
    log.notify(vim.log.levels.INFO, "no permission request is waiting")
    return
  end
  if asking then
    log.notify(vim.log.levels.INFO, "answer the open question first")
    return
  end
  vim.ui.select(items, {
    prompt = "Waiting for your answer",
    kind = "claude_sidecar.permissions",
    format_item = function(item)
      return string.format(
        "Claude #%d (%s): %s",
        item.chat.number,
        vim.fn.fnamemodify(item.chat.cwd, ":t"),
        render.tool_summary(item.params.toolName, item.params.input)
      )
    end,
  }, function(item)
    if not item then
      return
    elseif item.cancelled then
      -- Settled while this list was open.
      log.notify(vim.log.levels.INFO, "that request was %s: nothing to answer", item.cancelled_why)
      return
    end
    item.later = false
    settle(item, nil)
    -- Asked first, ahead of other waiting requests.
    forget(item)
    table.insert(pending, 1, item)
    next_question()
  end)
end

return M
