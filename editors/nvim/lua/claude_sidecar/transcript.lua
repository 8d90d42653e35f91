--- A conversation as a list of entries, built from the daemon's notifications or from a
--- stored session's history. Pure Lua: no buffers, no API calls (tested on its own).
---
--- Entry kinds: prompt {text, message_id}, text {text}, thinking {text},
--- tool {name, id, input, result, is_error, parent, expanded, permission}, result {outcome, duration_ms,
--- permission_wait_ms, cost_usd, is_error, text}, notice {text}, marker {text} (a boundary:
--- resumed, forked, cleared), separator {} (the end of a turn of a stored history),
--- file {path, stats}, image {text} (an image attached to the next prompt).
---
--- A permission request lives in its tool's entry (`permission` {state, text, preview,
--- reason}), so the chat reads tool, then the question and its answer, then the result.
---
--- Prompts sent while a turn runs wait in `queued` (shown after the entries) until the CLI
--- takes them up, so they land after the answer they waited for.
local M = {}

---@class claude_sidecar.Transcript
---@field entries table[]
---@field blocks table<integer, integer> content block index -> entry, for the message streaming now
---@field streamed table<string, boolean> assistant message ids whose text came as deltas
---@field tools table<string, integer> tool_use id -> entry
---@field message_id string|nil the assistant message streaming now
---@field cost_usd number what the channel has cost so far (turnEnded's totalCostUsd)
---@field queued {text: string, message_id: string}[] prompts the CLI has not taken up yet

---@return claude_sidecar.Transcript
function M.new()
  return { entries = {}, blocks = {}, streamed = {}, tools = {}, message_id = nil, cost_usd = 0, queued = {} }
end

local function add(t, entry)
  table.insert(t.entries, entry)
  return #t.entries
end

--- Add the user's prompt; returns its entry index.
function M.prompt(t, text, message_id)
  return add(t, { kind = "prompt", text = text, message_id = message_id })
end

--- Queue a prompt sent while a turn runs; it is placed when the CLI takes it up.
function M.queue(t, text, message_id)
  table.insert(t.queued, { text = text, message_id = message_id })
end

--- Place queued prompt `message_id` at the end of the entries; returns its index (nil if
--- it was not queued).
function M.take_up(t, message_id)
  for i, q in ipairs(t.queued) do
    if q.message_id == message_id then
      table.remove(t.queued, i)
      return M.prompt(t, q.text, q.message_id)
    end
  end
  return nil
end

--- Add a line the plugin itself has to say (errors, exits).
function M.notice(t, text)
  return add(t, { kind = "notice", text = text })
end

--- Add the line of an image attached to the next prompt ("shot.png (34 KB) ...").
function M.image(t, text)
  return add(t, { kind = "image", text = text })
end

--- Add a boundary in the conversation (resumed, forked, cleared).
function M.marker(t, text)
  return add(t, { kind = "marker", text = text })
end

--- Attach claude/permissionRequest `params` to its tool's entry (made from the request when
--- the tool call has not been shown yet); returns the entry's index.
function M.permission(t, params, text)
  local index = params.toolUseId and t.tools[params.toolUseId]
  if not index then
    index = add(t, { kind = "tool", name = params.toolName, id = params.toolUseId, input = params.input })
    if params.toolUseId then
      t.tools[params.toolUseId] = index
    end
  end
  local entry = t.entries[index]
  -- The CLI may have normalised the input (ExitPlanMode gets the plan file's text).
  entry.input = params.input or entry.input
  entry.permission = {
    state = params.autoDecision and "allowed" or "pending",
    text = text,
    preview = params.preview or params.previewNote,
    reason = params.decisionReason,
    blocked_path = params.blockedPath,
  }
  return index
end

--- Apply claude/turnEnded: the turn's end line; returns its index.
function M.turn_ended(t, params)
  t.cost_usd = params.totalCostUsd or t.cost_usd
  t.blocks, t.message_id = {}, nil
  -- A prompt the CLI answered without echoing it (it failed first) still goes above its end.
  for _, id in ipairs(params.messageIds or {}) do
    M.take_up(t, id)
  end
  local err = params.error
  return add(t, {
    kind = "result",
    outcome = params.outcome,
    duration_ms = params.durationMs,
    permission_wait_ms = params.permissionWaitMs,
    cost_usd = params.costUsd,
    is_error = params.outcome ~= "success",
    text = err and err.message or nil,
  })
end

--- Apply one claude/delta; returns the index of the entry that changed (nil if none).
function M.delta(t, params)
  if params.parentToolUseId or (params.kind ~= "text" and params.kind ~= "thinking") then
    -- Sub-agent streams and tool-input JSON are shown once complete, not piece by piece.
    return nil
  end
  local index = t.blocks[params.index]
  local entry = index and t.entries[index]
  if not entry or entry.kind ~= params.kind then
    index = add(t, { kind = params.kind, text = "" })
    t.blocks[params.index] = index
    entry = t.entries[index]
  end
  entry.text = entry.text .. params.text
  if t.message_id then
    t.streamed[t.message_id] = true
  end
  return index
end

local function result_text(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if type(block) == "table" and block.type == "text" then
      table.insert(parts, block.text)
    elseif type(block) == "table" and block.type == "image" then
      table.insert(parts, "[image]")
    end
  end
  return table.concat(parts, "\n")
end

local function on_assistant(t, message, first)
  local body = message.message or {}
  for _, block in ipairs(body.content or {}) do
    if block.type == "tool_use" and not t.tools[block.id] then
      local index = add(
        t,
        { kind = "tool", name = block.name, id = block.id, input = block.input, parent = message.parent_tool_use_id }
      )
      t.tools[block.id] = index
      first = first or index
    elseif
      (block.type == "text" or block.type == "thinking")
      and not message.parent_tool_use_id
      and not t.streamed[body.id or ""]
    then
      local text = block.type == "text" and block.text or block.thinking
      if text and text ~= "" then
        local index = add(t, { kind = block.type, text = text })
        first = first or index
      end
    end
  end
  return first
end

local function on_user(t, message, first)
  if message.uuid and not message.parent_tool_use_id then
    -- The CLI echoes a prompt when it takes it up: a queued prompt's turn starts here.
    local index = M.take_up(t, message.uuid)
    if index then
      first = first or index
    end
  end
  local content = (message.message or {}).content
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if type(block) == "table" and block.type == "tool_result" then
      local index = t.tools[block.tool_use_id]
      if index then
        local entry = t.entries[index]
        entry.result = result_text(block.content)
        entry.is_error = block.is_error == true
        first = first and math.min(first, index) or index
      end
    end
  end
  return first
end

--- Apply one claude/message (a CLI message); returns the first entry index that changed.
function M.message(t, message)
  local kind = message.type
  if kind == "stream_event" and not message.parent_tool_use_id then
    local event = message.event or {}
    if event.type == "message_start" then
      t.message_id = (event.message or {}).id
      t.blocks = {}
    end
    return nil
  elseif kind == "assistant" then
    return on_assistant(t, message, nil)
  elseif kind == "user" then
    return on_user(t, message, nil)
  elseif kind == "result" then
    -- The turn's end line comes from claude/turnEnded (see M.turn_ended).
    t.blocks, t.message_id = {}, nil
  elseif kind == "conversation_reset" then
    return M.marker(
      t,
      message.trigger == "clear" and "conversation cleared: Claude starts afresh from here"
        or ("conversation reset (" .. tostring(message.trigger) .. ")")
    )
  end
  return nil
end

local EDIT_TOOLS = { Edit = true, MultiEdit = true, Write = true, NotebookEdit = true }

local function count_lines(text)
  if type(text) ~= "string" or text == "" then
    return 0
  end
  local _, n = text:gsub("\n", "")
  return text:sub(-1) == "\n" and n or n + 1
end

--- The "✎ path (+a −r)" line of an edit tool call in a stored history (the diff itself is
--- not stored: counted from the tool's input).
local function edit_entry(tool)
  local input = type(tool.input) == "table" and tool.input or {}
  local path = input.file_path or input.notebook_path
  if type(path) ~= "string" then
    return nil
  end
  local stats
  if tool.name == "Write" then
    stats = string.format(" (+%d)", count_lines(input.content))
  elseif tool.name == "Edit" then
    stats = string.format(" (+%d −%d)", count_lines(input.new_string), count_lines(input.old_string))
  else
    stats = ""
  end
  return { kind = "file", path = vim.fn.fnamemodify(path, ":~:."), stats = stats }
end

--- A transcript from claude/getHistory's messages (a stored session): each exchange ends
--- with a separator, edits get their ✎ line, compactions and interruptions are shown.
function M.from_history(messages)
  local t = M.new()
  local interrupted, in_exchange = false, false
  local function end_exchange()
    if in_exchange then
      add(t, { kind = "separator", text = interrupted and "interrupted" or nil })
    end
    interrupted, in_exchange = false, false
  end
  for _, m in ipairs(messages or {}) do
    if m.kind == "userPrompt" and not m.parentToolUseId then
      end_exchange()
      M.prompt(t, m.text or "", m.uuid)
      in_exchange = true
    elseif (m.kind == "assistantText" or m.kind == "thinking") and not m.parentToolUseId then
      add(t, { kind = m.kind == "assistantText" and "text" or "thinking", text = m.text or "" })
    elseif m.kind == "toolUse" then
      t.tools[m.toolUseId or ""] =
        add(t, { kind = "tool", name = m.toolName, id = m.toolUseId, input = m.input, parent = m.parentToolUseId })
    elseif m.kind == "toolResult" then
      local index = t.tools[m.toolUseId or ""]
      if index then
        local tool = t.entries[index]
        tool.result = m.text or ""
        tool.is_error = m.isError == true
        -- The user's answer, when the CLI stored one (the diff itself is not stored).
        if m.permission == "allowed" or m.permission == "denied" then
          tool.permission = { state = m.permission, text = m.permission }
        end
        local edit = not tool.is_error and EDIT_TOOLS[tool.name] and edit_entry(tool)
        if edit then
          add(t, edit)
        end
      end
    elseif m.kind == "system" and not m.parentToolUseId then
      if m.subtype == "interrupted" then
        interrupted = true
      elseif m.subtype == "compactBoundary" then
        M.marker(t, "conversation compacted")
      elseif m.subtype == "commandOutput" or m.subtype == "apiError" then
        M.notice(t, m.text or m.subtype)
      end
    end
  end
  end_exchange()
  return t
end

--- The prompt entry at or before entry `index` (for fork and rewind at the cursor).
function M.prompt_at(t, index)
  for i = math.min(index, #t.entries), 1, -1 do
    if t.entries[i].kind == "prompt" then
      return t.entries[i], i
    end
  end
  return nil
end

--- The entries of the exchange that starts at prompt entry `index` and all before it.
function M.until_exchange_end(t, index)
  local copy = M.new()
  for i = 1, #t.entries do
    if i > index and t.entries[i].kind == "prompt" then
      break
    end
    local entry = vim.deepcopy(t.entries[i])
    table.insert(copy.entries, entry)
    if entry.kind == "tool" and entry.id then
      copy.tools[entry.id] = #copy.entries
    end
  end
  return copy
end

return M
