local render = require("claude_sidecar.render")

local function eq(actual, expected)
  assert(vim.deep_equal(actual, expected), "expected " .. vim.inspect(expected) .. ", got " .. vim.inspect(actual))
end

local opts = { tool_result_lines = 2 }

return {
  ["a prompt is quoted line by line"] = function()
    eq(render.entry({ kind = "prompt", text = "fix it\nplease" }, opts), { "", "> fix it", "> please" })
  end,

  ["thinking folds from its header to its end"] = function()
    local lines, meta = render.entry({ kind = "thinking", text = "a\nb" }, opts)
    eq(lines, { "", "∴ Thinking", "  a", "  b" })
    eq(meta.folds, { { 2, 4 } })
  end,

  ["a tool result is cut to tool_result_lines unless expanded"] = function()
    local tool =
      { kind = "tool", name = "Bash", status = "done", input = { command = "ls" }, result = { text = "a\nb\nc\nd" } }
    eq(render.entry(tool, opts), { "", "● Bash(ls)", "  ⎿ a", "    b", "    … +2 lines (<Tab> shows them)" })
    eq(render.entry(tool, opts, { expanded = true }), { "", "● Bash(ls)", "  ⎿ a", "    b", "    c", "    d" })
  end,

  ["a tool without a result says where it is"] = function()
    local tool = { kind = "tool", name = "Bash", status = "running", input = { command = "make" } }
    eq(render.entry(tool, opts), { "", "● Bash(make)", "  ⎿ running…" })
    tool.status = "interrupted"
    eq(render.entry(tool, opts)[3], "  ⎿ interrupted")
    tool.status = "denied"
    eq(render.entry(tool, opts)[3], "  ⎿ ✗ denied")
  end,

  ["the files a tool changed are listed under it with their counts"] = function()
    local tool = {
      kind = "tool",
      name = "Edit",
      status = "done",
      input = { file_path = "/abs/a.py" },
      result = { text = "ok" },
      files = { { path = "/abs/a.py", added = 3, removed = 1 } },
    }
    local lines = render.entry(tool, opts)
    assert(lines[4]:match("^  ✎ .*a%.py %(%+3 −1%)$"), lines[4])
  end,

  ["what a sub-agent did is indented by its depth"] = function()
    local lines = render.entry({ kind = "text", text = "one\ntwo" }, opts, { depth = 2 })
    eq(lines, { "", "    one", "    two" })
  end,

  ["notices show by subtype and level"] = function()
    eq(render.entry({ kind = "notice", subtype = "compaction", level = "info", text = "x" }, opts), {
      "",
      "═══ conversation compacted ═══",
    })
    eq(
      render.entry({ kind = "notice", subtype = "interrupted", level = "info", text = "[Request interrupted" }, opts),
      {
        "",
        "⏹ interrupted",
      }
    )
    eq(render.entry({ kind = "notice", subtype = "interrupted", text = "[Request" }, opts, { hidden = true }), {})
    eq(render.entry({ kind = "notice", subtype = "apiError", level = "error", text = "API Error: 500" }, opts), {
      "",
      "✗ API Error: 500",
    })
    eq(render.entry({ kind = "notice", subtype = "somethingNew", level = "info", text = "a\nb" }, opts), {
      "",
      "  a",
      "  b",
    })
  end,

  ["entries are highlighted with the plugin's groups"] = function()
    local _, meta = render.entry({ kind = "prompt", text = "a\nb" }, opts)
    eq(meta.hl, { { 2, "ClaudeSidecarPrompt" }, { 3, "ClaudeSidecarPrompt" } })
    _, meta = render.entry(
      { kind = "tool", name = "Read", status = "failed", input = {}, result = { text = "gone", isError = true } },
      opts
    )
    eq(meta.hl, { { 2, "ClaudeSidecarTool" }, { 3, "ClaudeSidecarToolError" } })
    _, meta = render.entry({ kind = "file", path = "a.py" }, opts)
    eq(meta.hl, { { 2, "ClaudeSidecarFile" } })
  end,

  ["a queued prompt says it waits"] = function()
    eq(render.queued("later"), { "", "> later", "  ⧗ queued: Claude reads it when the current step is done" })
  end,

  ["a failed tool result is marked"] = function()
    local lines = render.entry({
      kind = "tool",
      name = "Read",
      status = "failed",
      input = { file_path = "/nope" },
      result = { text = "no such file", isError = true },
    }, opts)
    eq(lines[3], "  ⎿ ✗ no such file")
  end,

  ["a finished turn shows its duration and cost"] = function()
    eq(
      render.entry(
        { kind = "turn", outcome = "success", durationMs = 1234, permissionWaitMs = 0, costUsd = 0.0021 },
        opts
      ),
      { "", "─── done in 1.2 s · $0.0021 ───" }
    )
    eq(
      render.entry({ kind = "turn", outcome = "error", error = "rate limited" }, opts),
      { "", "─── error: rate limited ───" }
    )
  end,

  ["a turn's time waiting for permission is shown apart"] = function()
    eq(
      render.turn_summary({ outcome = "success", durationMs = 13012, permissionWaitMs = 9240 }),
      "done in 13.0 s (9.2 s waiting for permission)"
    )
  end,

  ["an interrupted turn says so, whatever the CLI's text"] = function()
    eq(
      render.turn_summary({
        outcome = "interrupted",
        durationMs = 600,
        permissionWaitMs = 0,
        error = "[ede_diagnostic] result_type=user",
      }),
      "interrupted after 0.6 s"
    )
    eq(
      render.turn_summary({ outcome = "maxTurns", durationMs = 2000 }),
      "stopped after 2.0 s: too many model calls (maxTurns)"
    )
  end,

  ["tool summaries name the file or command, long ones cut"] = function()
    eq(render.tool_summary("Bash", { command = "make\ntest" }), "Bash(make …)")
    local long = render.tool_summary("Edit", { file_path = "/" .. string.rep("d/", 60) .. "file.py" })
    assert(long:match("file%.py%)$") and #long < 100, long)
  end,

  ["a permission shows its diff and its state inside the tool's entry, above the result"] = function()
    local tool = {
      kind = "tool",
      name = "Edit",
      status = "awaitingPermission",
      input = { file_path = "a.py" },
      permission = {
        decision = "pending",
        requestId = "r1",
        preview = "--- /abs/a.py\n+++ /abs/a.py\n-x\n+y\n",
      },
    }
    local lines = render.entry(tool, opts)
    eq(lines, {
      "",
      "● Edit(a.py)",
      "    --- /abs/a.py",
      "    +++ /abs/a.py",
      "    -x",
      "    +y",
      "  ? waiting for your answer",
    })
    tool.permission.decision, tool.status, tool.result = "allowed", "done", { text = "done" }
    local answered, meta = render.entry(tool, opts, { answer = { text = "always allowed" } })
    eq(vim.list_slice(answered, 7), { "  ✓ always allowed", "  ⎿ done" })
    eq(meta.folds, { { 3, 6 } })
    tool.permission.decision = "cancelled"
    eq(render.entry(tool, opts)[7], "  – withdrawn")
  end,

  ["a question shows its options with their descriptions"] = function()
    local input = {
      questions = {
        {
          question = "Which color?",
          header = "Color",
          options = { { label = "Red", description = "warm" }, { label = "Blue" } },
        },
      },
    }
    eq(render.tool_summary("AskUserQuestion", input), "Question(Which color?)")
    eq(render.question_lines(input), { "[Color] Which color?", "  • Red — warm", "  • Blue" })
  end,

  ["an attached image is one line with its name and size"] = function()
    eq(
      render.entry({ kind = "image", text = "shot.png (34 KB) goes with your next message" }, opts),
      { "", "🖼 shot.png (34 KB) goes with your next message" }
    )
  end,
}
