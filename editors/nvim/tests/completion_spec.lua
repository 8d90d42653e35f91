local completion = require("claude_sidecar.completion")

local function words(candidates)
  return vim.tbl_map(function(c)
    return c.word
  end, candidates)
end

local source = {
  cwd = "/project",
  info = {
    commands = {
      { name = "compact", description = "Clear history but keep a summary" },
      { name = "code-review", description = "Review the diff", aliases = { "review" } },
    },
    agents = { { name = "Explore", description = "Fast read-only search agent" } },
  },
  files = function()
    return { "README.md", "src/calc.py", "src/main.py", "tests/test_calc.py" }
  end,
  buffers = function()
    return { "src/main.py", "/elsewhere/notes.md" }
  end,
}

return {
  ["a mention starts a word; a slash command only the prompt's first line"] = function()
    assert(select(2, completion.word_at("look at @src/ca", 1)) == "@src/ca")
    assert(select(1, completion.word_at("look at @src/ca", 1)) == 8)
    assert(completion.word_at("mail me@example.com", 1) == nil, "an e-mail address is no mention")
    assert(select(2, completion.word_at("/comp", 1)) == "/comp")
    assert(completion.word_at("/comp", 2) == nil, "not on a later line")
    assert(completion.word_at("see a/b", 1) == nil, "not inside a path")
  end,

  ["files match by prefix first, then by a path part, then anywhere"] = function()
    local got = words(completion.candidates("@calc", source))
    assert(vim.deep_equal(got, { "@src/calc.py", "@tests/test_calc.py" }), vim.inspect(got))
    got = words(completion.candidates("@src", source))
    assert(got[1] == "@src/main.py" and got[2] == "@src/calc.py", "the open buffer comes first: " .. vim.inspect(got))
  end,

  ["open buffers are offered once, before the files"] = function()
    local got = words(completion.candidates("@", source))
    assert(got[1] == "@src/main.py" and got[2] == "@/elsewhere/notes.md", vim.inspect(got))
    assert(#vim.tbl_filter(function(w)
      return w == "@src/main.py"
    end, got) == 1, "no duplicate")
  end,

  ["agents are mentioned as @agent-<name>"] = function()
    local got = completion.candidates("@agent-ex", source)
    assert(#got == 1 and got[1].word == "@agent-Explore" and got[1].kind == "agent", vim.inspect(got))
  end,

  ["slash commands and their aliases come from the channel info"] = function()
    local got = words(completion.candidates("/re", source))
    assert(vim.deep_equal(got, { "/review", "/code-review" }), vim.inspect(got))
    got = completion.candidates("/", source)
    assert(#got == 3 and got[1].detail == "Clear history but keep a summary", vim.inspect(got))
  end,
}
