local render = require("claude_sidecar.render")

local function eq(actual, expected)
  assert(vim.deep_equal(actual, expected), "expected " .. vim.inspect(expected) .. ", got " .. vim.inspect(actual))
end

local opts = { tool_result_lines = 2 }

return {
  ["a prompt is quoted line by line"] = function()
    eq(render.entry({ kind = "prompt", text = "fix it\nplease" }, opts), { "", "> fix it", "> please" })
  end,

  ["thinking has a header and folds from the line after it"] = function()
    local lines, fold_from = render.entry({ kind = "thinking", text = "a\nb" }, opts)
    eq(lines, { "", "∴ Thinking", "  a", "  b" })
    eq(fold_from, 3)
  end,

  ["a tool result is cut to tool_result_lines"] = function()
    local lines = render.entry({ kind = "tool", name = "Bash", input = { command = "ls" },
      result = "a\nb\nc\nd" }, opts)
    eq(lines, { "", "● Bash(ls)", "  ⎿ a", "    b", "    … +2 lines" })
  end,

  ["a failed tool result is marked"] = function()
    local lines = render.entry({ kind = "tool", name = "Read", input = { file_path = "/nope" },
      result = "no such file", is_error = true }, opts)
    eq(lines[3], "  ⎿ ✗ no such file")
  end,

  ["a finished turn shows its duration and cost"] = function()
    eq(render.entry({ kind = "result", duration_ms = 1234, cost_usd = 0.0021 }, opts),
      { "", "─── done in 1.2 s · $0.0021 ───" })
    eq(render.entry({ kind = "result", is_error = true, text = "rate limited" }, opts),
      { "", "─── error: rate limited ───" })
  end,

  ["tool summaries name the file or command, long ones cut"] = function()
    eq(render.tool_summary("Bash", { command = "make\ntest" }), "Bash(make …)")
    local long = render.tool_summary("Edit", { file_path = "/" .. string.rep("d/", 60) .. "file.py" })
    assert(long:match("file%.py%)$") and #long < 100, long)
  end,

  ["a permission shows its preview indented under the question"] = function()
    eq(render.entry({ kind = "permission", tool = "Edit(a.py)", text = "waiting for your answer",
      preview = "--- a.py\n+++ a.py\n-x\n+y\n" }, opts),
      { "", "? Edit(a.py) — waiting for your answer", "    --- a.py", "    +++ a.py", "    -x", "    +y" })
  end,
}
