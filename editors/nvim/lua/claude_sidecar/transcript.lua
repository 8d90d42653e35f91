--- A conversation as a list of entries, built from the daemon's notifications or from a
--- stored session's history. Pure Lua: no buffers, no API calls (tested on its own).
---
--- Entry kinds: prompt {text, message_id}, text {text}, thinking {text},
--- tool {name, id, input, result, is_error, parent}, result {duration_ms, cost_usd,
--- is_error, text}, notice {text}.
local M = {}

---@class claude_sidecar.Transcript
---@field entries table[]
---@field blocks table<integer, integer> content block index -> entry, for the message streaming now
---@field streamed table<string, boolean> assistant message ids whose text came as deltas
---@field tools table<string, integer> tool_use id -> entry
---@field message_id string|nil the assistant message streaming now
---@field cost_usd number the CLI's total_cost_usd at the last result

---@return claude_sidecar.Transcript
function M.new()
  return { entries = {}, blocks = {}, streamed = {}, tools = {}, message_id = nil, cost_usd = 0 }
end

local function add(t, entry)
  table.insert(t.entries, entry)
  return #t.entries
end

--- Add the user's prompt; returns its entry index.
function M.prompt(t, text, message_id)
  return add(t, { kind = "prompt", text = text, message_id = message_id })
end

--- Add a line the plugin itself has to say (errors, exits).
function M.notice(t, text)
  return add(t, { kind = "notice", text = text })
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
      local index = add(t, { kind = "tool", name = block.name, id = block.id, input = block.input,
        parent = message.parent_tool_use_id })
      t.tools[block.id] = index
      first = first or index
    elseif (block.type == "text" or block.type == "thinking") and not message.parent_tool_use_id
        and not t.streamed[body.id or ""] then
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
    -- total_cost_usd counts from the CLI process's start: a turn's cost is the increase
    -- (a restarted CLI starts again from zero).
    local total = message.total_cost_usd
    local cost = total and (total >= t.cost_usd and total - t.cost_usd or total) or nil
    t.cost_usd = total or t.cost_usd
    t.blocks, t.message_id = {}, nil
    local text = nil
    if message.is_error then
      text = message.result or (message.errors and table.concat(message.errors, "; ")) or message.subtype
    end
    return add(t, { kind = "result", duration_ms = message.duration_ms,
      cost_usd = cost, is_error = message.is_error == true, text = text })
  end
  return nil
end

--- A transcript from claude/getHistory's messages (a stored session).
function M.from_history(messages)
  local t = M.new()
  for _, m in ipairs(messages or {}) do
    if m.kind == "userPrompt" and not m.parentToolUseId then
      M.prompt(t, m.text or "", m.uuid)
    elseif (m.kind == "assistantText" or m.kind == "thinking") and not m.parentToolUseId then
      add(t, { kind = m.kind == "assistantText" and "text" or "thinking", text = m.text or "" })
    elseif m.kind == "toolUse" then
      t.tools[m.toolUseId or ""] = add(t, { kind = "tool", name = m.toolName, id = m.toolUseId,
        input = m.input, parent = m.parentToolUseId })
    elseif m.kind == "toolResult" then
      local index = t.tools[m.toolUseId or ""]
      if index then
        t.entries[index].result = m.text or ""
        t.entries[index].is_error = m.isError == true
      end
    end
  end
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
