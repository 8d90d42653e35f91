-- The chat buffer's bookkeeping in a long chat (issue 43): where each entry starts, its folds,
-- what a key or a streamed delta rewrites. A chat attached as claude/attach makes it, with the
-- daemon's answers made here (rpc.request replaced): no daemon, real buffers and windows.
local chat_mod = require("claude_sidecar.chat")
local render = require("claude_sidecar.render")
local config = require("claude_sidecar.config")

local function eq(actual, expected)
  assert(vim.deep_equal(actual, expected), "expected " .. vim.inspect(expected) .. ", got " .. vim.inspect(actual))
end

local serial = 0

--- One exchange of a chat, with ids of its own: a prompt, its thinking (a fold), a tool (its
--- answered request's diff folded, its output longer than tool_result_lines), an answer.
--- `interrupted`: it ends in an interrupt that its footer says, so the CLI's notice of it draws
--- no line.
local function exchange(interrupted)
  serial = serial + 1
  local n = serial
  local out = {
    { kind = "prompt", id = "p" .. n, text = "question " .. n },
    { kind = "thinking", id = "th" .. n, text = "first\nsecond\nthird" },
    {
      kind = "tool",
      id = "tool" .. n,
      name = "Bash",
      status = "done",
      input = { command = "seq 20" },
      permission = { decision = "allowed", preview = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b" },
      result = { text = table.concat(vim.fn.range(1, 20), "\n") },
    },
    { kind = "text", id = "a" .. n, text = "answer " .. n .. "\nits second line" },
  }
  if interrupted then
    table.insert(out, { kind = "notice", id = "n" .. n, subtype = "interrupted", text = "interrupted" })
    table.insert(out, { kind = "turn", id = "t" .. n, outcome = "interrupted", durationMs = 100 })
  else
    table.insert(out, { kind = "turn", id = "t" .. n, outcome = "success", durationMs = 100 })
  end
  return out
end

local function exchanges(count)
  local out = {}
  for k = 1, count do
    vim.list_extend(out, exchange(k % 3 == 0))
  end
  return out
end

local channels = 0
local pages = {} ---@type table[][] the pages claude/getTranscript gives, the last first

--- A chat shown in a window, attached to a channel whose last page is `entries`; each of
--- `older` (pages, the last first) is read as the user goes up.
local function attached(entries, older)
  channels = channels + 1
  local channel_id = "chan" .. channels
  pages = older or {}
  require("claude_sidecar.rpc").request = function(method, params, callback)
    if method == "claude/attach" then
      callback(nil, {
        channelId = channel_id,
        sessionId = "s" .. channels,
        entries = entries,
        seq = 0,
        hasMore = #pages > 0,
        nextCursor = #pages > 0 and "c" or nil,
      })
    elseif method == "claude/getTranscript" and params.before then
      local page = table.remove(pages, 1)
      callback(nil, { entries = page, hasMore = #pages > 0, nextCursor = #pages > 0 and "c" or nil })
    end
  end
  local chat = chat_mod.attach_to({ channelId = channel_id, sessionId = "s" .. channels, cwd = vim.fn.getcwd() })
  chat_mod.show(chat)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))
  return chat, channel_id
end

--- The folds entry by entry as rendering the chat's entries where they start makes them
--- ({first, last} buffer lines, top to bottom).
local function expected_folds(chat)
  local out = {}
  local opts = { tool_result_lines = config.options.tool_result_lines }
  for i, entry in ipairs(chat.t.entries) do
    local _, meta = render.entry(entry, opts, {
      expanded = chat.t.expanded[entry.id],
      hidden = chat.t.said_by_footer[entry.id],
    })
    for _, range in ipairs(meta.folds) do
      table.insert(out, { chat.starts[i] + range[1], chat.starts[i] + range[2] })
    end
  end
  return out
end

--- The closed folds of window `win` ({first, last}, top to bottom).
local function window_folds(win)
  local out = {}
  vim.api.nvim_win_call(win, function()
    local lnum, last = 1, vim.api.nvim_buf_line_count(0)
    while lnum <= last do
      local closed = vim.fn.foldclosed(lnum)
      if closed == lnum then
        local fold_end = vim.fn.foldclosedend(lnum)
        table.insert(out, { lnum, fold_end })
        lnum = fold_end + 1
      else
        lnum = lnum + 1
      end
    end
  end)
  return out
end

--- The chat as drawn: its lines, highlights, folds in its window and entries' first rows.
local function drawn(chat)
  local ns = vim.api.nvim_get_namespaces()["claude_sidecar.chat"]
  local marks = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, 0, -1, { details = true })) do
    table.insert(marks, { m[2], m[3], m[4].end_row, m[4].end_col, m[4].hl_group })
  end
  return {
    lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false),
    marks = marks,
    folds = window_folds(vim.fn.bufwinid(chat.buf)),
    starts = vim.deepcopy(chat.starts),
    entries_end = chat.entries_end,
  }
end

--- The changes made to buffer `buf` while fn() runs: {first row, old end row, new end row}.
local function changes(buf, fn)
  local seen, done = {}, false
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last, new_last)
      if done then
        return true -- detach
      end
      table.insert(seen, { first, last, new_last })
    end,
  })
  fn()
  done = true
  return seen
end

--- <Tab> typed in the chat window with the cursor on line `lnum`.
local function tab_at(chat, lnum)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.keycode(config.options.keymaps.toggle), "mx", false)
end

--- The index of the chat's second tool entry (near the top).
local function second_tool(chat)
  local seen = 0
  for i, entry in ipairs(chat.t.entries) do
    seen = seen + (entry.kind == "tool" and 1 or 0)
    if seen == 2 then
      return i
    end
  end
end

return {
  ["entry_at names the last entry starting at or above each line, entries drawing no line too"] = function()
    local chat = attached(exchanges(6))
    local hidden = 0
    for _, entry in ipairs(chat.t.entries) do
      hidden = hidden + (chat.t.said_by_footer[entry.id] and 1 or 0)
    end
    assert(hidden == 2, "two notices draw no line (their entries start where the next one does)")
    for lnum = 1, vim.api.nvim_buf_line_count(chat.buf) + 1 do
      local scan = nil
      for i, start in ipairs(chat.starts) do
        if start < lnum then
          scan = i
        end
      end
      eq({ lnum, chat_mod.entry_at(chat, lnum) }, { lnum, scan })
    end
  end,

  ["<Tab> on a tool's output near the top rewrites only that entry's lines"] = function()
    local chat = attached(exchanges(8))
    local index = second_tool(chat)
    local first, after = chat.starts[index], chat.starts[index + 1]

    local seen = changes(chat.buf, function()
      tab_at(chat, first + 2)
    end)

    assert(chat.t.expanded[chat.t.entries[index].id], "the whole output is shown")
    eq(seen, { { first, after, chat.starts[index + 1] } })
    eq(chat.starts[index + 1] - after, 11) -- all 20 lines of output, for 8 and a "… +12 lines" line
  end,

  ["<Tab> near the top leaves the chat as drawing it all again would"] = function()
    local chat = attached(exchanges(8))
    for _ = 1, 2 do -- the output shown whole, then cut again
      tab_at(chat, chat.starts[second_tool(chat)] + 2)
      local after_tab = drawn(chat)

      chat_mod.refresh(chat, 1)

      eq(after_tab, drawn(chat))
    end
  end,

  ["a chat shown afresh keeps none of the folds of what it showed before"] = function()
    local chat, channel_id = attached(exchanges(6))
    local answers = vim.tbl_filter(function(entry)
      return entry.kind == "prompt" or entry.kind == "text"
    end, exchanges(6))

    chat_mod.show_snapshot(chat, { channelId = channel_id, entries = answers, seq = 0 })

    eq(window_folds(vim.fn.bufwinid(chat.buf)), {})
    eq(chat_mod.fold_ranges(chat), {})
  end,

  ["a page holding entries shown already leaves the chat as drawing it all again would"] = function()
    local last_page = exchanges(4)
    -- The first exchange shown changed before its page was read: the page has it, as it is now.
    local older = vim.list_extend(exchanges(2), vim.list_slice(last_page, 1, 5))
    local chat = attached(last_page, { older })

    chat_mod.load_older(chat)
    local after_page = drawn(chat)
    chat_mod.refresh(chat, 1)

    eq(#chat.t.entries, #last_page + 10 + 1) -- and the "attached" marker
    eq(after_page, drawn(chat))
    eq(chat_mod.fold_ranges(chat), expected_folds(chat))
  end,

  ["folds stay on their entries after pages drawn above and lines streamed in between"] = function()
    local last_page = exchanges(4)
    local chat, channel_id = attached(last_page, { exchanges(4), exchanges(4) })
    chat_mod.load_older(chat)
    chat_mod.load_older(chat)
    assert(#chat.t.entries > 3 * 18, "both pages are drawn above")
    -- Lines added to an answer above folded entries, and to one at the end.
    for _, id in ipairs({ last_page[4].id, "streamed" }) do
      if id == "streamed" then
        chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = { kind = "text", id = id, text = "" } })
      end
      for k = 1, 3 do
        chat_mod.dispatch("claude/delta", { channelId = channel_id, entryId = id, text = " more " .. k .. "\n" })
      end
    end
    local expected = expected_folds(chat)
    assert(#expected == 24, "two per exchange: its thinking and its answered diff")

    eq(chat_mod.fold_ranges(chat), expected)
    eq(window_folds(vim.fn.bufwinid(chat.buf)), expected)
    -- A window the chat is shown in afresh makes its folds from what the chat keeps.
    chat_mod.hide(chat)
    chat_mod.show(chat)
    eq(window_folds(vim.fn.bufwinid(chat.buf)), expected)
  end,

  ["a tool's result coming in rewrites only that tool's lines"] = function()
    local entries = exchanges(8)
    local chat, channel_id = attached(entries)
    local index = second_tool(chat)
    local running = vim.deepcopy(chat.t.entries[index])
    running.status, running.result = "running", nil
    chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = running })
    local first, after = chat.starts[index], chat.starts[index + 1]

    local done = vim.deepcopy(running)
    done.status, done.result = "done", { text = "one\ntwo\nthree" }
    local seen = changes(chat.buf, function()
      chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = done })
    end)

    eq(seen, { { first, after, chat.starts[index + 1] } })
    assert(chat.starts[index + 1] > after, "the result's lines are drawn")
    local after_update = drawn(chat)
    chat_mod.refresh(chat, 1)
    eq(after_update, drawn(chat))
  end,

  ["an entry changed in place that hides another (its footer now saying the interrupt) redraws both"] = function()
    local entries = exchanges(2)
    local chat, channel_id = attached(entries)
    local notice = { kind = "notice", id = "late-notice", subtype = "interrupted", text = "interrupted" }
    chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = { kind = "prompt", id = "late", text = "go" } })
    chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = notice })
    local footer = { kind = "turn", id = "late-turn", outcome = "running", durationMs = 1 }
    chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = footer })

    footer = vim.tbl_extend("force", footer, { outcome = "interrupted" })
    chat_mod.dispatch("claude/entry", { channelId = channel_id, entry = footer })

    assert(chat.t.said_by_footer["late-notice"], "the footer says the interrupt")
    local after_update = drawn(chat)
    chat_mod.refresh(chat, 1)
    eq(after_update, drawn(chat))
  end,
}
