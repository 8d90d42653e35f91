local transcript = require("claude_sidecar.transcript")

local function eq(actual, expected)
  assert(vim.deep_equal(actual, expected), "expected " .. vim.inspect(expected) .. ", got " .. vim.inspect(actual))
end

-- The recorded real-CLI streams every client is checked against (tests/data/streams).
local streams = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h:h") .. "/tests/data/streams/"

local function read_json_lines(path)
  local notes = {}
  for _, line in ipairs(vim.fn.readfile(path)) do
    table.insert(notes, vim.json.decode(line))
  end
  return notes
end

--- The transcript a stream's notifications build, as the chat applies them.
local function replay(notes)
  local t = transcript.new()
  for _, note in ipairs(notes) do
    if note.method == "claude/entry" then
      transcript.upsert(t, note.params.entry)
    elseif note.method == "claude/delta" then
      transcript.append(t, note.params)
    end
  end
  return t
end

local function prompt(id, queued)
  return { kind = "prompt", id = id, text = id, queued = queued or nil }
end

local specs = {
  ["an entry sent again replaces the one with its id, in place"] = function()
    local t = transcript.new()
    transcript.upsert(t, prompt("p1"))
    transcript.upsert(t, { kind = "tool", id = "toolu_1", name = "Read", status = "pending" })
    transcript.upsert(t, { kind = "text", id = "m:1", text = "after" })
    local changed = transcript.upsert(t, { kind = "tool", id = "toolu_1", name = "Read", status = "done" })
    eq(changed, 2)
    eq(t.entries[2].status, "done")
    eq(#t.entries, 3)
  end,

  ["a delta appends to its entry's text, or to a tool's partial input"] = function()
    local t = transcript.new()
    transcript.upsert(t, { kind = "text", id = "m:0", text = "", streaming = true })
    transcript.upsert(t, { kind = "tool", id = "toolu_1", name = "Write", status = "pending" })
    transcript.append(t, { entryId = "m:0", text = "Hel" })
    eq(transcript.append(t, { entryId = "m:0", text = "lo" }), 1)
    transcript.append(t, { entryId = "toolu_1", text = '{"file' })
    eq(t.entries[1].text, "Hello")
    eq(t.entries[2].partialInput, '{"file')
    eq(transcript.append(t, { entryId = "unknown", text = "x" }), nil)
  end,

  ["a queued prompt waits apart and moves to the end when taken up"] = function()
    local t = transcript.new()
    transcript.upsert(t, prompt("p1"))
    eq(transcript.upsert(t, prompt("p2", true)), 2)
    transcript.upsert(t, { kind = "text", id = "m:0", text = "answer to p1" })
    eq(
      vim.tbl_map(function(q)
        return q.id
      end, t.queued),
      { "p2" }
    )
    transcript.upsert(t, prompt("p2"))
    eq(t.queued, {})
    eq(t.entries[3].id, "p2")
    eq(transcript.get(t, "p2").id, "p2")
  end,

  ["the plugin's own lines get their own ids"] = function()
    local t = transcript.new()
    local a = transcript.add(t, { kind = "notice", text = "could not start" })
    local b = transcript.add(t, { kind = "marker", text = "resumed" })
    eq({ a, b }, { 1, 2 })
    eq({ t.entries[1].id, t.entries[2].id }, { "nvim:1", "nvim:2" })
  end,

  ["fork and rewind find the main conversation's prompt at or above an entry"] = function()
    local t = transcript.from_entries({
      prompt("p1"),
      { kind = "tool", id = "toolu_a", name = "Agent", status = "done" },
      { kind = "prompt", id = "sub", text = "sub", parentId = "toolu_a" },
      { kind = "text", id = "m:0", text = "done" },
    })
    local entry, index = transcript.prompt_at(t, 4)
    eq({ entry.id, index }, { "p1", 1 })
  end,

  ["what a sub-agent did nests under the tool that started it"] = function()
    local t = transcript.from_entries({
      { kind = "tool", id = "toolu_a", name = "Agent", status = "done" },
      { kind = "tool", id = "toolu_b", name = "Agent", status = "done", parentId = "toolu_a" },
      { kind = "text", id = "m:0", text = "deep", parentId = "toolu_b" },
    })
    eq(
      vim.tbl_map(function(e)
        return transcript.depth(t, e)
      end, t.entries),
      { 0, 1, 2 }
    )
  end,

  ["an interrupted turn is said by its footer alone, not by the CLI's notice too"] = function()
    local t = transcript.new()
    local interrupted = { kind = "notice", id = "n1", subtype = "interrupted", level = "info", text = "[Request" }
    transcript.upsert(t, prompt("p1"))
    transcript.upsert(t, { kind = "text", id = "m:0", text = "word" })
    transcript.upsert(t, interrupted)
    eq(t.said_by_footer.n1, nil) -- no footer yet: the notice shows
    -- The footer redraws from the notice, which it now says.
    eq(transcript.upsert(t, { kind = "turn", id = "t1", outcome = "interrupted", durationMs = 900 }), 3)
    eq(t.said_by_footer.n1, true)
    -- A footer coming first (either order) hides a later notice of the same exchange.
    transcript.upsert(t, prompt("p2"))
    transcript.upsert(t, { kind = "turn", id = "t2", outcome = "interrupted", durationMs = 5 })
    transcript.upsert(t, vim.tbl_extend("force", interrupted, { id = "n2" }))
    eq(t.said_by_footer.n2, true)
    -- Without a footer (a session the plain CLI recorded) the notice is the only mark: shown.
    transcript.upsert(t, prompt("p3"))
    transcript.upsert(t, vim.tbl_extend("force", interrupted, { id = "n3" }))
    transcript.upsert(t, prompt("p4"))
    transcript.upsert(t, { kind = "turn", id = "t4", outcome = "interrupted", durationMs = 5 })
    eq(t.said_by_footer.n3, nil)
  end,

  ["an older page goes before the entries held, its ids found at their new places"] = function()
    local t = transcript.from_entries({ prompt("p3"), { kind = "text", id = "m3", text = "three" } })
    transcript.add(t, { kind = "marker", text = "resumed" })

    local placed, moved = transcript.prepend(t, { prompt("p1"), prompt("p2") })

    eq({ placed, moved }, { 2, nil })
    eq(
      vim.tbl_map(function(e)
        return e.id
      end, t.entries),
      { "p1", "p2", "p3", "m3", "nvim:1" }
    )
    local function index(id)
      return select(2, transcript.get(t, id))
    end
    eq({ index("p1"), index("p3"), index("nvim:1") }, { 1, 3, 5 })
  end,

  ["an older page is placed without writing again where each entry held is"] = function()
    local t = transcript.from_entries({ prompt("p3"), { kind = "text", id = "m3", text = "three" } })
    local held = vim.deepcopy(t.at)
    local at = t.at
    local writes = 0
    setmetatable(at, {
      __newindex = function(tbl, k, v)
        writes = writes + 1
        rawset(tbl, k, v)
      end,
    })
    -- New keys only reach __newindex: the held ones are compared after.
    transcript.prepend(t, { prompt("p1"), prompt("p2") })

    eq(t.at == at, true)
    eq(writes, 2) -- the page's two entries only
    eq({ t.at.p3, t.at.m3 }, { held.p3, held.m3 })
    -- Found at their new places, and changed there.
    transcript.append(t, { entryId = "m3", text = ", and more" })
    eq(t.entries[4].text, "three, and more")
    eq(transcript.upsert(t, { kind = "text", id = "m3", text = "again" }), 4)
    eq(transcript.upsert(t, { kind = "text", id = "m4", text = "four" }), 5)
    eq(select(2, transcript.get(t, "m4")), 5)
  end,

  ["an entry taken for a new one before its page was read moves into the page"] = function()
    -- A tool of the older part changed while only the last page was held: placed at the end.
    local t = transcript.from_entries({ prompt("p2"), { kind = "text", id = "m2", text = "two" } })
    transcript.upsert(t, { kind = "tool", id = "toolu_1", name = "Task", status = "running" })
    transcript.upsert(t, { kind = "text", id = "m3", text = "three" })

    local done = { kind = "tool", id = "toolu_1", name = "Task", status = "done", result = { text = "ok" } }
    local placed, moved = transcript.prepend(t, { prompt("p1"), done })

    eq(
      vim.tbl_map(function(e)
        return e.id
      end, t.entries),
      { "p1", "toolu_1", "p2", "m2", "m3" }
    )
    eq(t.entries[2].status, "done")
    eq(select(2, transcript.get(t, "m3")), 5)
    -- Entries from where the tool was held are drawn again.
    eq({ placed, moved }, { 2, 5 })
  end,
}

-- Every recorded stream: its notifications give its golden entries.
for _, path in ipairs(vim.fn.glob(streams .. "*.client.jsonl", false, true)) do
  local name = vim.fn.fnamemodify(path, ":t"):gsub("%.client%.jsonl$", "")
  specs["the recorded stream " .. name .. " gives its golden entries"] = function()
    local t = replay(read_json_lines(path))
    local golden = vim.json.decode(table.concat(vim.fn.readfile(streams .. name .. ".entries.json"), "\n"))
    eq(vim.list_extend(vim.list_extend({}, t.entries), t.queued), golden)
  end
end

return specs
