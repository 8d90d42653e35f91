local transcript = require("claude_sidecar.transcript")

local function eq(actual, expected)
  assert(vim.deep_equal(actual, expected), "expected " .. vim.inspect(expected) .. ", got " .. vim.inspect(actual))
end

local function start(t, id)
  transcript.message(t, { type = "stream_event", event = { type = "message_start", message = { id = id } } })
end

return {
  ["deltas of one block build one entry, other blocks their own"] = function()
    local t = transcript.new()
    start(t, "msg_1")
    transcript.delta(t, { kind = "thinking", index = 0, text = "Hm" })
    transcript.delta(t, { kind = "thinking", index = 0, text = "m." })
    transcript.delta(t, { kind = "text", index = 1, text = "Hel" })
    local changed = transcript.delta(t, { kind = "text", index = 1, text = "lo" })
    eq(changed, 2)
    eq(t.entries, { { kind = "thinking", text = "Hmm." }, { kind = "text", text = "Hello" } })
  end,

  ["a complete assistant message does not repeat text that was streamed"] = function()
    local t = transcript.new()
    start(t, "msg_1")
    transcript.delta(t, { kind = "text", index = 0, text = "Hello" })
    local changed = transcript.message(t, { type = "assistant", message = { id = "msg_1",
      content = { { type = "text", text = "Hello" } } } })
    eq(changed, nil)
    eq(#t.entries, 1)
  end,

  ["text that was not streamed comes from the assistant message"] = function()
    local t = transcript.new()
    transcript.message(t, { type = "assistant", message = { id = "msg_9",
      content = { { type = "text", text = "Whole" } } } })
    eq(t.entries, { { kind = "text", text = "Whole" } })
  end,

  ["a tool call gets its result from the following user message"] = function()
    local t = transcript.new()
    transcript.message(t, { type = "assistant", message = { id = "m", content = {
      { type = "tool_use", id = "toolu_1", name = "Read", input = { file_path = "/a.txt" } } } } })
    local changed = transcript.message(t, { type = "user", message = { content = {
      { type = "tool_result", tool_use_id = "toolu_1", content = { { type = "text", text = "line 1" } } } } } })
    eq(changed, 1)
    eq(t.entries[1].result, "line 1")
    eq(t.entries[1].is_error, false)
  end,

  ["sub-agent deltas and tool input are not streamed into the chat"] = function()
    local t = transcript.new()
    eq(transcript.delta(t, { kind = "text", index = 0, text = "x", parentToolUseId = "toolu_a" }), nil)
    eq(transcript.delta(t, { kind = "toolInput", index = 1, text = "{" }), nil)
    eq(#t.entries, 0)
  end,

  ["a turn's cost is the increase of the CLI's running total"] = function()
    local t = transcript.new()
    transcript.message(t, { type = "result", duration_ms = 1200, total_cost_usd = 0.03 })
    transcript.message(t, { type = "result", duration_ms = 800, total_cost_usd = 0.05 })
    eq(t.entries[1].cost_usd, 0.03)
    assert(math.abs(t.entries[2].cost_usd - 0.02) < 1e-9)
    eq(t.cost_usd, 0.05)
  end,

  ["history becomes prompts, answers and tool calls with results"] = function()
    local t = transcript.from_history({
      { kind = "userPrompt", uuid = "u1", text = "hi" },
      { kind = "thinking", uuid = "a1", text = "..." },
      { kind = "assistantText", uuid = "a1", text = "Hello" },
      { kind = "toolUse", uuid = "a2", toolName = "Bash", toolUseId = "t1", input = { command = "ls" } },
      { kind = "toolResult", uuid = "u2", toolUseId = "t1", text = "a.txt", isError = false },
    })
    eq(vim.tbl_map(function(e) return e.kind end, t.entries), { "prompt", "thinking", "text", "tool" })
    eq(t.entries[1].message_id, "u1")
    eq(t.entries[4].result, "a.txt")
  end,

  ["the prompt at an entry and the history up to the end of its exchange"] = function()
    local t = transcript.new()
    transcript.prompt(t, "one", "u1")
    transcript.message(t, { type = "assistant", message = { id = "m1", content = { { type = "text", text = "1" } } } })
    transcript.prompt(t, "two", "u2")
    transcript.message(t, { type = "assistant", message = { id = "m2", content = { { type = "text", text = "2" } } } })
    local prompt, at = transcript.prompt_at(t, 2)
    eq({ prompt.message_id, at }, { "u1", 1 })
    eq(vim.tbl_map(function(e) return e.text end, transcript.until_exchange_end(t, at).entries), { "one", "1" })
  end,
}
