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
    local changed = transcript.message(
      t,
      { type = "assistant", message = { id = "msg_1", content = { { type = "text", text = "Hello" } } } }
    )
    eq(changed, nil)
    eq(#t.entries, 1)
  end,

  ["text that was not streamed comes from the assistant message"] = function()
    local t = transcript.new()
    transcript.message(
      t,
      { type = "assistant", message = { id = "msg_9", content = { { type = "text", text = "Whole" } } } }
    )
    eq(t.entries, { { kind = "text", text = "Whole" } })
  end,

  ["a tool call gets its result from the following user message"] = function()
    local t = transcript.new()
    transcript.message(t, {
      type = "assistant",
      message = {
        id = "m",
        content = {
          { type = "tool_use", id = "toolu_1", name = "Read", input = { file_path = "/a.txt" } },
        },
      },
    })
    local changed = transcript.message(t, {
      type = "user",
      message = {
        content = {
          { type = "tool_result", tool_use_id = "toolu_1", content = { { type = "text", text = "line 1" } } },
        },
      },
    })
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

  ["a turn ends from claude/turnEnded, with the channel's total cost"] = function()
    local t = transcript.new()
    transcript.message(
      t,
      { type = "result", subtype = "error_during_execution", is_error = true, result = "[ede_diagnostic] x" }
    )
    eq(#t.entries, 0)
    local index = transcript.turn_ended(
      t,
      { outcome = "interrupted", durationMs = 63, permissionWaitMs = 0, costUsd = 0.01, totalCostUsd = 0.05 }
    )
    eq(t.entries[index].outcome, "interrupted")
    eq(t.entries[index].text, nil)
    eq(t.cost_usd, 0.05)
  end,

  ["a prompt queued mid-turn is placed when the CLI takes it up"] = function()
    local t = transcript.new()
    transcript.prompt(t, "first", "u1")
    transcript.queue(t, "second", "u2")
    transcript.message(t, { type = "assistant", message = { id = "m1", content = { { type = "text", text = "1" } } } })
    transcript.turn_ended(t, { outcome = "success", durationMs = 5, permissionWaitMs = 0, messageIds = { "u1" } })
    eq(#t.queued, 1)
    local index = transcript.message(
      t,
      { type = "user", uuid = "u2", isReplay = true, message = { content = { { type = "text", text = "second" } } } }
    )
    eq(
      vim.tbl_map(function(e)
        return e.kind
      end, t.entries),
      { "prompt", "text", "result", "prompt" }
    )
    eq(index, 4)
    eq(#t.queued, 0)
  end,

  ["/clear leaves a marker"] = function()
    local t = transcript.new()
    local index = transcript.message(t, { type = "conversation_reset", trigger = "clear" })
    eq(t.entries[index].kind, "marker")
  end,

  ["history becomes prompts, answers and tool calls with results"] = function()
    local t = transcript.from_history({
      { kind = "userPrompt", uuid = "u1", text = "hi" },
      { kind = "thinking", uuid = "a1", text = "..." },
      { kind = "assistantText", uuid = "a1", text = "Hello" },
      { kind = "toolUse", uuid = "a2", toolName = "Bash", toolUseId = "t1", input = { command = "ls" } },
      { kind = "toolResult", uuid = "u2", toolUseId = "t1", text = "a.txt", isError = false },
    })
    eq(
      vim.tbl_map(function(e)
        return e.kind
      end, t.entries),
      { "prompt", "thinking", "text", "tool", "separator" }
    )
    eq(t.entries[1].message_id, "u1")
    eq(t.entries[4].result, "a.txt")
  end,

  ["history ends each exchange with a separator and shows edits and interruptions"] = function()
    local t = transcript.from_history({
      { kind = "userPrompt", uuid = "u1", text = "greet" },
      {
        kind = "toolUse",
        uuid = "a1",
        toolName = "Edit",
        toolUseId = "t1",
        input = { file_path = "/w/hello.py", old_string = "a", new_string = "b\nc" },
      },
      { kind = "toolResult", uuid = "u2", toolUseId = "t1", text = "ok" },
      { kind = "userPrompt", uuid = "u3", text = "more" },
      { kind = "assistantText", uuid = "a2", text = "partial" },
      { kind = "system", uuid = "s1", subtype = "interrupted", text = "[Request interrupted by user]" },
    })
    eq(
      vim.tbl_map(function(e)
        return e.kind
      end, t.entries),
      { "prompt", "tool", "file", "separator", "prompt", "text", "separator" }
    )
    eq(t.entries[3].stats, " (+2 −1)")
    eq(t.entries[7].text, "interrupted")
  end,

  ["the prompt at an entry and the history up to the end of its exchange"] = function()
    local t = transcript.new()
    transcript.prompt(t, "one", "u1")
    transcript.message(t, { type = "assistant", message = { id = "m1", content = { { type = "text", text = "1" } } } })
    transcript.prompt(t, "two", "u2")
    transcript.message(t, { type = "assistant", message = { id = "m2", content = { { type = "text", text = "2" } } } })
    local prompt, at = transcript.prompt_at(t, 2)
    eq({ prompt.message_id, at }, { "u1", 1 })
    eq(
      vim.tbl_map(function(e)
        return e.text
      end, transcript.until_exchange_end(t, at).entries),
      { "one", "1" }
    )
  end,

  ["a stored history keeps the user's permission answers in the tool entries"] = function()
    local t = transcript.from_history({
      { kind = "userPrompt", uuid = "u1", text = "edit" },
      { kind = "toolUse", uuid = "a1", toolName = "Edit", toolUseId = "t1", input = { file_path = "/w/a.py" } },
      { kind = "toolResult", uuid = "r1", toolUseId = "t1", text = "denied", isError = true, permission = "denied" },
      { kind = "toolUse", uuid = "a2", toolName = "Read", toolUseId = "t2", input = { file_path = "/w/a.py" } },
      { kind = "toolResult", uuid = "r2", toolUseId = "t2", text = "x" },
    })
    eq(t.entries[2].permission, { state = "denied", text = "denied" })
    eq(t.entries[3].permission, nil)
  end,
}
