--- A chat's conversation: the daemon's entries (docs/protocol.md, "The conversation"), kept
--- in order by id, plus the lines the plugin says itself. Pure Lua: no buffers, no API calls
--- (tested on its own, against the recorded streams in tests/data/streams).
---
--- `claude/entry` replaces the entry with its id (or adds it at the end), `claude/delta`
--- appends to the text (or a tool's partialInput) of entry `entryId`. A prompt the CLI has
--- not taken up yet (`queued`) waits in `queued`, shown after the entries, and moves to the
--- end when it is taken up.
---
--- The plugin's own entries (ids "nvim:<n>"): notice {text} (its errors, exits, retries),
--- marker {text} (resumed, forked, model changed), image {text} (attached to the next
--- prompt), file {path, stats} (a change no tool entry shows).
local M = {}

---@class claude_sidecar.Answer
---@field text string what the user picked ("always allowed", "denied: <reason>", ...)
---@field withdrawn boolean|nil no decision will come (the daemon is gone)

---@class claude_sidecar.Transcript
---@field entries table[] the entries in order
---@field at table<string, integer> entry id -> its place: its index in `entries` is place - `base`
---@field base integer what a place is more than its index (an older page drawn above lowers it):
---  placing a page before the entries keeps every place held, so none is written again
---@field queued table[] prompts the CLI has not taken up yet, oldest first
---@field expanded table<string, boolean> tool entries whose whole result is shown (<Tab>)
---@field answers table<string, claude_sidecar.Answer> tool id -> how the user answered its request here
---@field said_by_footer table<string, boolean> "interrupted" notices whose turn's footer says it too (not drawn)
---@field cost_usd number what the channel has cost so far (turnEnded's totalCostUsd)
---@field own integer how many entries the plugin added itself

---@return claude_sidecar.Transcript
function M.new()
  return {
    entries = {},
    at = {},
    base = 0,
    queued = {},
    expanded = {},
    answers = {},
    said_by_footer = {},
    cost_usd = 0,
    own = 0,
  }
end

local function place(t, entry)
  table.insert(t.entries, entry)
  t.at[entry.id] = t.base + #t.entries
  return #t.entries
end

--- The index in `entries` of the entry with id `id` (nil if none is placed).
local function index_of(t, id)
  local at = t.at[id or ""]
  return at and at - t.base
end

local function unqueue(t, id)
  for i, q in ipairs(t.queued) do
    if q.id == id then
      return table.remove(t.queued, i)
    end
  end
  return nil
end

--- An interrupted turn is said once, by its footer ("─── interrupted after 2.1 s ───"): the
--- CLI's "interrupted" notice of the same exchange (the entries from its prompt to the next
--- prompt, footer and notice in either order) is marked not to be drawn. Returns the notice's
--- index when entry `index` just hid it (it is drawn again without its lines).
local function one_interrupt_mark(t, index)
  local entry = t.entries[index]
  if entry.kind ~= "turn" and entry.kind ~= "notice" then
    return nil
  end
  local function main_prompt(e)
    return e.kind == "prompt" and not e.parentId
  end
  local first, last = index, index
  while first > 1 and not main_prompt(t.entries[first]) do
    first = first - 1
  end
  while t.entries[last + 1] and not main_prompt(t.entries[last + 1]) do
    last = last + 1
  end
  local notice, footer
  for i = first, last do
    local e = t.entries[i]
    if e.kind == "notice" and e.subtype == "interrupted" and not e.parentId then
      notice = i
    elseif e.kind == "turn" then
      footer = e
    end
  end
  if not notice or not footer or footer.outcome ~= "interrupted" or t.said_by_footer[t.entries[notice].id] then
    return nil
  end
  t.said_by_footer[t.entries[notice].id] = true
  return notice
end

--- Apply one entry (claude/entry's `entry`); returns the first index whose lines change
--- (#entries + 1: only the queued prompts after the entries).
function M.upsert(t, entry)
  local index = index_of(t, entry.id)
  if index then
    t.entries[index] = entry
    return math.min(index, one_interrupt_mark(t, index) or index)
  end
  if entry.queued then
    for i, q in ipairs(t.queued) do
      if q.id == entry.id then
        t.queued[i] = entry
        return #t.entries + 1
      end
    end
    table.insert(t.queued, entry)
    return #t.entries + 1
  end
  unqueue(t, entry.id)
  index = place(t, entry)
  return math.min(index, one_interrupt_mark(t, index) or index)
end

--- Apply one claude/delta; returns the index of the entry it appended to (nil if none).
function M.append(t, params)
  local index = index_of(t, params.entryId)
  local entry = index and t.entries[index]
  if not entry then
    return nil
  end
  if entry.kind == "tool" then
    entry.partialInput = (entry.partialInput or "") .. params.text
  else
    entry.text = (entry.text or "") .. params.text
  end
  return index
end

--- Add one of the plugin's own entries (`fields`: kind and its fields); returns its index.
function M.add(t, fields)
  t.own = t.own + 1
  return place(t, vim.tbl_extend("force", fields, { id = "nvim:" .. t.own }))
end

--- A transcript holding `entries` (claude/getTranscript's).
function M.from_entries(entries)
  local t = M.new()
  for _, entry in ipairs(entries or {}) do
    M.upsert(t, entry)
  end
  return t
end

--- Put `entries` (an older page of the conversation, oldest first: claude/getTranscript with
--- `before`) before the entries held. An entry held already (taken for a new one as it changed
--- before its page was read) moves to its place in the page, as the page has it now. Returns
--- how many were placed (entries 1..n now; every index held before moved by n) and, when
--- entries moved, the first index whose lines change below the page.
---@return integer placed
---@return integer|nil moved
function M.prepend(t, entries)
  local page = {}
  local moved = nil
  for _, entry in ipairs(entries or {}) do
    if not entry.queued then
      local index = index_of(t, entry.id)
      if index then
        moved = math.min(moved or index, index)
      end
      table.insert(page, entry)
    end
  end
  local placed = #page
  if placed == 0 then
    return 0, nil
  end
  if moved then
    -- Rare (an entry changed before its page was read): the entries held are placed again.
    local held = t.entries
    t.entries, t.at, t.base = page, {}, 0
    for i, entry in ipairs(page) do
      t.at[entry.id] = i
    end
    for _, entry in ipairs(held) do
      if not t.at[entry.id] then
        place(t, entry)
      end
    end
  else
    -- The entries held move down in the array; their places (and `at`) stay as they are, so
    -- a page costs the same however many entries are held.
    table.move(t.entries, 1, #t.entries, placed + 1)
    t.base = t.base - placed
    for i, entry in ipairs(page) do
      t.entries[i] = entry
      t.at[entry.id] = t.base + i
    end
  end
  for i = 1, placed do
    one_interrupt_mark(t, i)
  end
  return placed, moved and placed + moved or nil
end

--- The entry with id `id` (nil if none is placed).
function M.get(t, id)
  local index = index_of(t, id)
  return index and t.entries[index], index
end

--- The prompt of the main conversation at or before entry `index` (for fork and rewind at
--- the cursor), and its index.
function M.prompt_at(t, index)
  for i = math.min(index, #t.entries), 1, -1 do
    local entry = t.entries[i]
    if entry.kind == "prompt" and not entry.parentId then
      return entry, i
    end
  end
  return nil
end

--- How deep entry `entry` is nested: 0 for the main conversation, 1 for what a sub-agent
--- did, 2 for a sub-agent's sub-agent, ...
function M.depth(t, entry)
  local depth, parent = 0, entry.parentId
  while parent and depth < 8 do
    depth = depth + 1
    local tool = M.get(t, parent)
    parent = tool and tool.parentId
  end
  return depth
end

return M
