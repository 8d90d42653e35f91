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
    local tool = { kind = "tool", name = "Bash", input = { command = "ls" }, result = "a\nb\nc\nd" }
    eq(render.entry(tool, opts), { "", "● Bash(ls)", "  ⎿ a", "    b", "    … +2 lines (<Tab> shows them)" })
    tool.expanded = true
    eq(render.entry(tool, opts), { "", "● Bash(ls)", "  ⎿ a", "    b", "    c", "    d" })
  end,

  ["entries are highlighted with the plugin's groups"] = function()
    local _, meta = render.entry({ kind = "prompt", text = "a\nb" }, opts)
    eq(meta.hl, { { 2, "ClaudeSidecarPrompt" }, { 3, "ClaudeSidecarPrompt" } })
    _, meta = render.entry({ kind = "tool", name = "Read", input = {}, result = "gone", is_error = true }, opts)
    eq(meta.hl, { { 2, "ClaudeSidecarTool" }, { 3, "ClaudeSidecarToolError" } })
    _, meta = render.entry({ kind = "file", path = "a.py" }, opts)
    eq(meta.hl, { { 2, "ClaudeSidecarFile" } })
  end,

  ["a queued prompt says it waits"] = function()
    eq(render.queued("later"), { "", "> later", "  ⧗ queued: Claude reads it when the current step is done" })
  end,

  ["a failed tool result is marked"] = function()
    local lines = render.entry(
      { kind = "tool", name = "Read", input = { file_path = "/nope" }, result = "no such file", is_error = true },
      opts
    )
    eq(lines[3], "  ⎿ ✗ no such file")
  end,

  ["a finished turn shows its duration and cost"] = function()
    eq(
      render.entry(
        { kind = "result", outcome = "success", duration_ms = 1234, permission_wait_ms = 0, cost_usd = 0.0021 },
        opts
      ),
      { "", "─── done in 1.2 s · $0.0021 ───" }
    )
    eq(
      render.entry({ kind = "result", outcome = "error", is_error = true, text = "rate limited" }, opts),
      { "", "─── error: rate limited ───" }
    )
  end,

  ["a turn's time waiting for permission is shown apart"] = function()
    eq(
      render.turn_summary({ outcome = "success", duration_ms = 13012, permission_wait_ms = 9240 }),
      "done in 13.0 s (9.2 s waiting for permission)"
    )
  end,

  ["an interrupted turn says so, whatever the CLI's text"] = function()
    eq(
      render.turn_summary({
        outcome = "interrupted",
        duration_ms = 600,
        permission_wait_ms = 0,
        text = "[ede_diagnostic] result_type=user",
      }),
      "interrupted after 0.6 s"
    )
    eq(
      render.turn_summary({ outcome = "maxTurns", duration_ms = 2000 }),
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
      input = { file_path = "a.py" },
      permission = {
        state = "pending",
        text = "waiting for your answer",
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
    tool.permission.state, tool.permission.text, tool.result = "allowed", "allowed", "done"
    local answered, meta = render.entry(tool, opts)
    eq(vim.list_slice(answered, 7), { "  ✓ allowed", "  ⎿ done" })
    eq(meta.folds, { { 3, 6 } })
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
