--- Chats: one buffer per channel (the transcript) and a prompt buffer to write in.
local config = require("claude_sidecar.config")
local errors = require("claude_sidecar.errors")
local events = require("claude_sidecar.events")
local log = require("claude_sidecar.log")
local render = require("claude_sidecar.render")
local rpc = require("claude_sidecar.rpc")
local transcript = require("claude_sidecar.transcript")

local M = {}

---@class claude_sidecar.Chat
---@field number integer
---@field channel_id string|nil
---@field session_id string|nil
---@field cwd string
---@field state string
---@field model string|nil
---@field mode string|nil
---@field buf integer
---@field prompt_buf integer
---@field t claude_sidecar.Transcript
---@field starts integer[] first buffer line (0-based) of each entry
---@field entries_end integer the buffer line (0-based) after the last entry (queued prompts follow)
---@field folds table<integer, {[1]: integer, [2]: integer}[]> the line ranges folded in every
---  chat window, of entry i at key i + fold_base (none: nil), 1-based within the entry's lines
---  (line k of entry i is buffer line starts[i] + k): lines drawn above or below an entry leave
---  them as they are
---@field fold_base integer what the key of an entry's folds is more than its index (a page
---  drawn above lowers it: the folds held keep their keys, none is moved)
---@field outbox {text: string, id: string}[] prompts waiting for the channel to open (shown queued)
---@field preview {entries: table[]|nil}|nil a resumed chat's last page being read from its stored
---  session while its CLI starts (claude/getHistory): `entries` as read, once drawn
---@field opening boolean
---@field sending integer claude/sendMessage requests not answered yet
---@field retry table|nil the retry the CLI waits for (claude/status `retry`)
---@field retry_entry string|nil the id of the notice entry that shows it
---@field tab integer|nil the tab page opened for the chat (layout "tab")
---@field closed boolean
---@field on_open fun(chat: claude_sidecar.Chat)[] run once the channel is open
---@field info table|nil what the CLI offers (the channel's `info`: models, slash commands, agents)
---@field context {percentage: number, total_tokens: integer, max_tokens: integer}|nil the context meter's last reading
---@field seq integer the last notification `seq` of the channel this chat rendered (claude/attach's afterSeq)
---@field held {method: string, params: table}[]|nil notifications kept back while claude/attach is answered
---@field reconnecting boolean|nil the shared daemon's connection dropped: the chat waits to be re-attached
---@field interrupting boolean|nil claude/interrupt was sent for the running turn, which has not ended yet
---@field older {cursor: string|nil, loading: boolean|nil, session: string|nil}|nil the entries before
---  those shown: the nextCursor that reads their last page (nil: the first entry is shown), whether it
---  is being read, and the stored session whose claude/getHistory gave the cursor (nil: the channel's
---  claude/getTranscript did)

---@type claude_sidecar.Chat[]
M.chats = {}
local by_channel = {} ---@type table<string, claude_sidecar.Chat>
local ns = vim.api.nvim_create_namespace("claude_sidecar.chat")
local early = {} ---@type table<string, {method: string, params: table}[]>
-- Channels this Neovim detached from (another chat than it thought): their notifications are dropped.
local ignored = {} ---@type table<string, boolean>
local current = nil ---@type claude_sidecar.Chat|nil
local count = 0
local preview, drop_outbox -- defined with the channels below

--- The chat the user is working with, if any.
function M.current()
  return current
end

--- The chat shown in buffer `buf` (a chat or prompt buffer), if any.
function M.for_buffer(buf)
  for _, chat in ipairs(M.chats) do
    if chat.buf == buf or chat.prompt_buf == buf then
      return chat
    end
  end
  return nil
end

-- ------------------------------------------------------------------ rendering

-- Folds are manual, made as entries are drawn: Neovim does not update expression folds of
-- other windows while the user types (in insert mode) in the prompt, so a thinking block
-- streaming in would stay open.
--- In window `win`, replace the folds of lines first..last with `folds` (created closed).
--- `stale`: that range had folds before (else there is nothing to delete: the common case of
--- an answer streaming in costs nothing here).
local function fold(win, first, last, folds, stale)
  if not stale and #folds == 0 then
    return
  end
  vim.api.nvim_win_call(win, function()
    if vim.wo.foldmethod ~= "manual" then
      return
    end
    local view = vim.fn.winsaveview()
    -- There is no Ex command to delete folds in a range: zD on each line that has one.
    -- Rewritten lines can leave old folds there, shifted by the line changes.
    if stale then
      for lnum = first, math.min(last, vim.api.nvim_buf_line_count(0)) do
        if vim.fn.foldlevel(lnum) > 0 then
          vim.api.nvim_win_set_cursor(0, { lnum, 0 })
          vim.cmd("silent! normal! zD")
        end
      end
    end
    for _, range in ipairs(folds) do
      vim.cmd(string.format("silent! keepjumps %d,%dfold", range[1], range[2]))
    end
    vim.fn.winrestview(view)
  end)
end

--- The chat's windows, each with whether it follows the output (its cursor is on the last
--- of the buffer's `line_count` lines).
local function following(chat, line_count)
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    follow[win] = vim.api.nvim_win_get_cursor(win)[1] >= line_count - 1
  end
  return follow
end

--- The lines of entries `from`..`to` drawn from buffer row `line` (0-based), each entry's
--- first row recorded in chat.starts and its folds in chat.folds: the lines, their highlights
--- ({row, group}, 0-based rows) and folds ({first, last}, 1-based rows), and the row after them.
local function draw(chat, from, to, line)
  local opts = { tool_result_lines = config.options.tool_result_lines }
  local lines, hls, folds = {}, {}, {}
  local t = chat.t
  for i = from, to do
    chat.starts[i] = line
    local entry = t.entries[i]
    local ui = {
      expanded = t.expanded[entry.id],
      answer = t.answers[entry.id],
      depth = transcript.depth(t, entry),
      hidden = t.said_by_footer[entry.id],
    }
    local entry_lines, meta = render.entry(entry, opts, ui)
    chat.folds[i + chat.fold_base] = meta.folds[1] and meta.folds or nil
    for _, range in ipairs(meta.folds) do
      table.insert(folds, { line + range[1], line + range[2] })
    end
    for _, hl in ipairs(meta.hl) do
      table.insert(hls, { line + hl[1] - 1, hl[2] })
    end
    vim.list_extend(lines, entry_lines)
    line = line + #entry_lines
  end
  return lines, hls, folds, line
end

--- Highlight rows `first`.. of the chat buffer as `hls` says ({row, group}, 0-based rows of
--- `lines`, which start at row `first`).
local function highlight(chat, first, lines, hls)
  for _, hl in ipairs(hls) do
    -- Ends on its own line: a mark reaching into the next line would be cleared with it.
    vim.api.nvim_buf_set_extmark(
      chat.buf,
      ns,
      hl[1],
      0,
      { end_row = hl[1], end_col = #lines[hl[1] - first + 1], hl_group = hl[2] }
    )
  end
end

--- Every fold of the chat, as buffer line ranges ({first, last}, 1-based), top to bottom.
---@return {[1]: integer, [2]: integer}[]
function M.fold_ranges(chat)
  local out = {}
  for i, start in ipairs(chat.starts) do
    for _, range in ipairs(chat.folds[i + chat.fold_base] or {}) do
      table.insert(out, { start + range[1], start + range[2] })
    end
  end
  return out
end

--- Whether any of entries `from`..`to` has folds (its lines had some in every chat window).
local function has_folds(chat, from, to)
  for i = from, to do
    if chat.folds[i + chat.fold_base] then
      return true
    end
  end
  return false
end

--- Redraw entries from index `from` to the end (earlier entries never change), then the
--- queued prompts. With `to`, only entries `from`..`to`: the lines below them move as they
--- are (what <Tab> changes in one entry costs the same anywhere in a long chat).
function M.refresh(chat, from, to)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local entry_count = #chat.t.entries
  from = math.max(1, math.min(from or 1, entry_count + 1))
  local start = chat.starts[from] or chat.entries_end
  if from == 1 then
    start = 1 -- line 0 holds the chat's title
  end
  -- The row after the lines redrawn (-1: the end); an entry below not drawn yet: to the end.
  local stop = to and to >= from and to < entry_count and chat.starts[to + 1] or nil
  if not stop then
    to, stop = entry_count, -1
  end
  local old_count = vim.api.nvim_buf_line_count(chat.buf)
  local stale
  if stop ~= -1 then
    stale = has_folds(chat, from, to)
  elseif from == 1 then
    -- Everything is drawn again (chat.starts may have been emptied for a transcript shown afresh).
    stale = next(chat.folds) ~= nil
    chat.folds, chat.fold_base = {}, 0
  else
    stale = has_folds(chat, from, #chat.starts)
  end
  local lines, hls, new_folds, line = draw(chat, from, to, start)
  if stop == -1 then
    chat.entries_end = line
    for i = entry_count + 1, #chat.starts do
      chat.starts[i], chat.folds[i + chat.fold_base] = nil, nil
    end
    for _, q in ipairs(chat.t.queued) do
      local queued = render.queued(q.text, q.starting)
      for k = 2, #queued do
        table.insert(hls, { line + k - 1, "ClaudeSidecarNotice" })
      end
      vim.list_extend(lines, queued)
      line = line + #queued
    end
  else
    -- The entries below keep their lines (and their folds and highlights, which move with them);
    -- only their first rows move, one add each (0.3 ms for 80k entries: no redraw of theirs).
    local grown = line - stop
    if grown ~= 0 then
      for i = to + 1, entry_count do
        chat.starts[i] = chat.starts[i] + grown
      end
      chat.entries_end = chat.entries_end + grown
    end
  end
  local follow = following(chat, old_count)
  -- The highlights of the rows rewritten, and only those (the entries below keep theirs).
  vim.api.nvim_buf_clear_namespace(chat.buf, ns, start, stop)
  vim.bo[chat.buf].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf, start, stop, false, lines)
  vim.bo[chat.buf].modifiable = false
  highlight(chat, start, lines, hls)
  local last = vim.api.nvim_buf_line_count(chat.buf)
  for win, at_end in pairs(follow) do
    if vim.api.nvim_win_is_valid(win) then
      fold(win, start + 1, stop == -1 and last or start + #lines, new_folds, stale)
      if at_end then
        vim.api.nvim_win_set_cursor(win, { last, 0 })
      end
    end
  end
end

-- ------------------------------------------------------------------ older pages

-- A long chat opens with its last page (claude/getTranscript or claude/attach with `limit`);
-- the pages before it are read one at a time as the user goes up, and drawn above the lines
-- shown, which keep their place on screen.
local older_ns = vim.api.nvim_create_namespace("claude_sidecar.older")

--- The `limit` of a request that reads a chat's conversation: the last page only, when the
--- daemon pages (feature transcriptPaging); else everything, as an older daemon sends it.
---@param params table
---@return table params
function M.page_params(params)
  if require("claude_sidecar.protocol").has("transcriptPaging") then
    params.limit = config.options.page_entries
  end
  return params
end

--- Say at the top of the chat whether older entries exist (a virtual line under the title).
local function show_older(chat)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  -- Its mark is on the title's line: clearing only there does not walk every mark of the buffer.
  vim.api.nvim_buf_clear_namespace(chat.buf, older_ns, 0, 1)
  local older = chat.older
  if not older or not older.cursor then
    return
  end
  local text = older.loading and "… loading earlier entries" or "… earlier entries not shown: gg or [[ loads them"
  vim.api.nvim_buf_set_extmark(chat.buf, older_ns, 0, 0, {
    virt_lines = { { { text, "ClaudeSidecarNotice" } } },
  })
end

--- Take what a page of the chat's conversation says about older entries (a getTranscript or
--- attach answer: `hasMore`, `nextCursor`); a page being read for the chat before is dropped.
function M.set_older(chat, result)
  chat.older = { cursor = result and result.hasMore and result.nextCursor or nil }
  show_older(chat)
end

--- Where each window of the chat shows what: the line its cursor is on (the title counts as
--- the first entry's line) and how many screen rows are above it.
local function views(chat)
  local out = {}
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    vim.api.nvim_win_call(win, function()
      local view = vim.fn.winsaveview()
      local anchor = math.max(view.lnum, 2)
      local rows = 0
      if anchor > view.topline then
        rows = vim.api.nvim_win_text_height(win, { start_row = view.topline - 1, end_row = anchor - 2 }).all
      end
      out[win] = { view = view, anchor = anchor, rows = rows }
    end)
  end
  return out
end

--- Put each window's cursor back on the line it was on (moved down by `added` lines) at the
--- same screen row.
local function restore_views(saved, added)
  for win, saved_view in pairs(saved) do
    if vim.api.nvim_win_is_valid(win) then
      local lnum = saved_view.anchor + added
      local top, rows = lnum, 0
      while top > 1 do
        local height = vim.api.nvim_win_text_height(win, { start_row = top - 2, end_row = top - 2 }).all
        if rows + height > saved_view.rows then
          break
        end
        rows, top = rows + height, top - 1
      end
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview({
          lnum = lnum,
          col = saved_view.view.lnum == saved_view.anchor and saved_view.view.col or 0,
          topline = top,
          topfill = 0,
        })
      end)
    end
  end
end

--- Draw an older page (`entries`, oldest first) above the entries shown: only its lines are
--- written, highlighted and folded; the windows keep showing what they showed.
local function prepend(chat, entries)
  local placed, moved = transcript.prepend(chat.t, entries)
  if placed == 0 or not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  -- The rows of the entries shown move down in place (a new table per page of a 100k-entry
  -- chat was as much garbage for Lua's collector to walk each time).
  local shown = #chat.starts
  table.move(chat.starts, 1, shown, placed + 1)
  -- The folds held keep their keys (and, relative to their entry's start, their values).
  chat.fold_base = chat.fold_base - placed
  local lines, hls, new_folds, line = draw(chat, 1, placed, 1)
  local added = line - 1
  for i = placed + 1, placed + shown do
    chat.starts[i] = chat.starts[i] + added
  end
  chat.entries_end = chat.entries_end + added
  local saved = views(chat)
  vim.bo[chat.buf].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf, 1, 1, false, lines)
  vim.bo[chat.buf].modifiable = false
  highlight(chat, 1, lines, hls)
  -- Manual folds below move with the lines; only the page's are made.
  for win in pairs(saved) do
    fold(win, 2, 1 + added, new_folds, false)
  end
  restore_views(saved, added)
  if moved then
    -- Lines of entries that moved up into the page: the ones below them are drawn again.
    M.refresh(chat, moved)
  end
end

--- Read the page before the entries shown (one request at a time; none once the first entry
--- is shown) and draw it above them.
function M.load_older(chat)
  local older = chat.older
  if not older or not older.cursor or older.loading or not (older.session or chat.channel_id) then
    return
  end
  older.loading = true
  show_older(chat)
  local method, params = "claude/getTranscript", { channelId = chat.channel_id }
  if older.session then
    method, params = "claude/getHistory", { sessionId = older.session, cwd = chat.cwd }
  end
  params.before, params.limit = older.cursor, config.options.page_entries
  rpc.request(method, params, function(err, result)
    older.loading = false
    if chat.older ~= older or chat.closed then
      return -- the chat was shown afresh meanwhile: this page is of what it showed before
    end
    if err then
      chat.older = nil
      show_older(chat)
      return M.add_notice(chat, "could not show the earlier entries: " .. errors.describe(err))
    end
    older.cursor = result.hasMore and result.nextCursor or nil
    prepend(chat, result.entries)
    show_older(chat)
  end)
end

--- Read the page before when window `win` of the chat shows its top or its cursor reached
--- its first lines (gg, <C-b>, [[).
local function near_top(chat, win)
  if not chat.older or not chat.older.cursor or chat.older.loading then
    return
  end
  if vim.fn.line("w0", win) <= 1 or vim.api.nvim_win_get_cursor(win)[1] <= 2 then
    M.load_older(chat)
  end
end

local paging_group = vim.api.nvim_create_augroup("claude_sidecar.older", { clear = true })
vim.api.nvim_create_autocmd("WinScrolled", {
  group = paging_group,
  callback = function()
    for key in pairs(vim.v.event) do
      local win = tonumber(key)
      if win and vim.api.nvim_win_is_valid(win) then
        local chat = M.for_buffer(vim.api.nvim_win_get_buf(win))
        if chat and chat.buf == vim.api.nvim_win_get_buf(win) then
          near_top(chat, win)
        end
      end
    end
  end,
})

--- Watch the chat's windows for the user going up to its top.
local function watch_top(chat)
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = paging_group,
    buffer = chat.buf,
    callback = function()
      near_top(chat, vim.api.nvim_get_current_win())
    end,
  })
end

--- Append `text` to the last line of text entry `index` (a delta): only that line and the
--- lines it grows by are written, so a long answer streams in without rewriting it.
local function append_text(chat, index, text)
  local first = chat.starts[index]
  local after = chat.starts[index + 1] or chat.entries_end
  if not first or after <= first + 1 or not vim.api.nvim_buf_is_valid(chat.buf) then
    return M.refresh(chat, index)
  end
  local last_row = after - 1
  local pieces = vim.split(text, "\n", { plain = true })
  local old = vim.api.nvim_buf_get_lines(chat.buf, last_row, after, false)[1] or ""
  local indent = string.rep("  ", transcript.depth(chat.t, chat.t.entries[index]))
  pieces[1] = old .. pieces[1]
  for i = 2, #pieces do
    pieces[i] = indent .. pieces[i]
  end
  local old_count = vim.api.nvim_buf_line_count(chat.buf)
  local follow = following(chat, old_count)
  vim.bo[chat.buf].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf, last_row, after, false, pieces)
  vim.bo[chat.buf].modifiable = false
  local grown = #pieces - 1
  if grown > 0 then
    for i = index + 1, #chat.starts do
      chat.starts[i] = chat.starts[i] + grown
    end
    chat.entries_end = chat.entries_end + grown
  end
  local last = old_count + grown
  for win, at_end in pairs(follow) do
    if at_end and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- "API overloaded (529), retry 2/10 in 4 s" for a claude/status `retry`.
function M.describe_retry(retry)
  local reason = ({
    overloaded = "API overloaded",
    rate_limit = "rate limited by the API",
    server_error = "API server error",
    network_error = "network error",
  })[retry.error or ""] or ("API error" .. (retry.error and retry.error ~= "" and (" (" .. retry.error .. ")") or ""))
  if retry.errorStatus then
    reason = reason .. " (" .. retry.errorStatus .. ")"
  end
  local wait = retry.retryInMs or 0
  return string.format(
    "%s, retry %d/%d in %s",
    reason,
    retry.attempt or 0,
    retry.maxRetries or 0,
    wait < 1000 and string.format("%.1f s", wait / 1000) or string.format("%.0f s", wait / 1000)
  )
end

--- The chat's title (its winbar): number, directory name, state, mode.
local function title(chat)
  local state = chat.state
  if chat.retry then
    state = string.format("%s · retry %d/%d", state, chat.retry.attempt or 0, chat.retry.maxRetries or 0)
  end
  if chat.reconnecting then
    state = state .. " · reconnecting"
  end
  local worktree = chat.info and chat.info.worktree
  return string.format(
    "Claude #%d · %s%s · %s%s",
    chat.number,
    -- The directory's name only: a long path would push the state and the meter out of sight.
    vim.fn.fnamemodify(chat.cwd, ":t"),
    type(worktree) == "table" and (" on " .. worktree.branch) or "",
    state,
    chat.mode and chat.mode ~= "default" and (" · " .. chat.mode) or ""
  )
end

--- Show the chat's new state, mode or retry: in its winbar and every statusline. The buffer's
--- first line only names the chat (number and directory): it is not redrawn while Neovim's own
--- vim.ui.select waits in an inputlist(), where the winbar still is, so a state there would lag.
local function show_state(chat)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local heading = string.format("# Claude #%d · %s", chat.number, vim.fn.fnamemodify(chat.cwd, ":~"))
  if vim.api.nvim_buf_get_lines(chat.buf, 0, 1, false)[1] ~= heading then
    vim.bo[chat.buf].modifiable = true
    vim.api.nvim_buf_set_lines(chat.buf, 0, 1, false, { heading })
    vim.bo[chat.buf].modifiable = false
    show_older(chat) -- its virtual line hangs from the heading's line
  end
  -- Every statusline may show a chat's state (claude_sidecar.statusline()), not only the current one.
  M.redraw_status()
end

--- Mark every statusline and winbar for the next redraw. Not `:redrawstatus!`, which redraws
--- at once: one more full redraw per state change, up to 200 ms on a long markdown chat.
function M.redraw_status()
  vim.api.nvim__redraw({ statusline = true, winbar = true })
end

--- The chat window's winbar: the chat's title (and its context meter and cost).
function M.winbar()
  local chat = M.for_buffer(vim.api.nvim_get_current_buf())
  local meter = chat and require("claude_sidecar.meter").text(chat) or ""
  return chat and (title(chat) .. (meter ~= "" and (" · " .. meter) or "")) or ""
end

--- The text of a closed fold (the 'foldtext'): its first line and how many lines it hides.
function M.foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format("%s  ⋯ %d lines (zo or <Tab> opens)", first, vim.v.foldend - vim.v.foldstart + 1)
end

--- The transcript entry shown at 1-based line `lnum` of the chat buffer: the last one that
--- starts at or above it (nil: the title). A binary search: chat.starts only grows down the
--- chat (an entry that draws no line starts where the next one does).
function M.entry_at(chat, lnum)
  local starts = chat.starts
  local low, high = 0, #starts -- starts[low] < lnum (or low is 0); starts[high + 1] >= lnum
  while low < high do
    local mid = math.floor((low + high + 1) / 2)
    if starts[mid] < lnum then
      low = mid
    else
      high = mid - 1
    end
  end
  return low > 0 and low or nil
end

--- [[ and ]] in the transcript: the cursor to the first line of the previous (`step` -1) or
--- next (1) prompt of the main conversation. With no prompt shown above, [[ goes to the top,
--- which reads the page before.
function M.jump_prompt(chat, step)
  local win = vim.api.nvim_get_current_win()
  local lnum = vim.api.nvim_win_get_cursor(win)[1]
  local target = nil
  for i = M.entry_at(chat, lnum) or 0, step > 0 and #chat.t.entries or 1, step do
    local entry, start = chat.t.entries[i], chat.starts[i]
    -- The prompt's first line (its entry starts with an empty line).
    if entry and entry.kind == "prompt" and not entry.parentId and start and (start + 2 - lnum) * step > 0 then
      target = start + 2
      break
    end
  end
  if not target and step < 0 then
    target = 1
  end
  if target then
    vim.cmd("normal! m'") -- back with ``, as after Neovim's own [[
    vim.api.nvim_win_set_cursor(win, { target, 0 })
  end
end

--- Add a line of the plugin's own to the chat (an error, an exit).
function M.add_notice(chat, text)
  M.refresh(chat, transcript.add(chat.t, { kind = "notice", text = text }))
end

--- Add a boundary line to the chat (resumed, forked, model changed).
function M.add_marker(chat, text)
  M.refresh(chat, transcript.add(chat.t, { kind = "marker", text = text }))
end

-- ------------------------------------------------------------------ buffers and windows

local function buffer(name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].filetype = filetype
  return buf
end

--- Put the cursor in the chat's prompt, in insert mode at the end of what is written there.
function M.focus_prompt(chat)
  M.show(chat)
  vim.cmd("startinsert!")
end

--- <Tab> in the transcript: show all of a tool's output (or cut it again), open or close a
--- thinking block.
function M.toggle_at_cursor(chat)
  local win = vim.api.nvim_get_current_win()
  local lnum = vim.api.nvim_win_get_cursor(win)[1]
  local index = M.entry_at(chat, lnum)
  local entry = index and chat.t.entries[index]
  if entry and entry.kind == "tool" and entry.result then
    chat.t.expanded[entry.id] = not chat.t.expanded[entry.id] or nil
    M.refresh(chat, index, index)
    vim.api.nvim_win_set_cursor(win, { math.min(chat.starts[index] + 2, vim.api.nvim_buf_line_count(chat.buf)), 0 })
  elseif vim.fn.foldlevel(lnum) > 0 then
    vim.cmd("normal! za")
  end
end

-- A Ctrl-C that reaches Neovim while it is busy (drawing, running a plugin's code) is taken as
-- an interrupt of that work (got_int): the keys typed before it are dropped and the Ctrl-C
-- itself comes through unmapped, so the `interrupt` mapping does not run. vim.on_key() still
-- sees it: an unmapped Ctrl-C typed in a chat or prompt buffer, in a mode where the mapping
-- would have run, interrupts the chat's turn. A mapped Ctrl-C reaches on_key as the mapping's
-- own key (the mapping runs), never as "\3", so one keypress never interrupts twice.
local ctrl_c_ns = nil ---@type integer|nil
-- An unmapped Ctrl-C whose interrupt is not sent yet: Neovim hands the same one over twice
-- (in insert mode, then to the normal mode that Ctrl-C left insert mode for).
local ctrl_c_caught = false

--- Whether the `interrupt` key is Ctrl-C (the only key Neovim turns into an interrupt).
local function interrupt_is_ctrl_c()
  local lhs = config.options.keymaps.interrupt
  return type(lhs) == "string" and vim.keycode(lhs) == "\3"
end

--- Where insert mode was when an unmapped Ctrl-C left it, to take the user back there.
---@return {win: integer, cursor: integer[], tick: integer}
local function insert_spot(buf)
  local win = vim.api.nvim_get_current_win()
  return { win = win, cursor = vim.api.nvim_win_get_cursor(win), tick = vim.api.nvim_buf_get_changedtick(buf) }
end

--- Back to insert mode where it was, unless the user did something else meanwhile.
local function resume_insert(chat, spot)
  if
    vim.api.nvim_get_current_win() ~= spot.win
    or vim.api.nvim_get_current_buf() ~= chat.prompt_buf
    or vim.api.nvim_get_mode().mode ~= "n"
    or vim.api.nvim_buf_get_changedtick(chat.prompt_buf) ~= spot.tick
  then
    return
  end
  local row, col = spot.cursor[1], spot.cursor[2]
  local line = vim.api.nvim_buf_get_lines(chat.prompt_buf, row - 1, row, false)[1] or ""
  if col >= #line then
    vim.api.nvim_win_set_cursor(spot.win, { row, math.max(#line - 1, 0) })
    vim.cmd("startinsert!")
  else
    vim.api.nvim_win_set_cursor(spot.win, { row, col })
    vim.cmd("startinsert")
  end
end

---@param key string
---@param typed string
local function on_key(key, typed)
  if key ~= "\3" or typed ~= "\3" or not interrupt_is_ctrl_c() then
    return
  end
  local buf = vim.api.nvim_get_current_buf()
  local chat = M.for_buffer(buf)
  if not chat or ctrl_c_caught then
    return
  end
  -- The modes the mapping is in: normal in both buffers (not operator-pending), insert in the prompt.
  local mode = vim.api.nvim_get_mode().mode
  local insert = mode:sub(1, 1) == "i" and buf == chat.prompt_buf
  if not insert and (mode:sub(1, 1) ~= "n" or mode:sub(1, 2) == "no") then
    return
  end
  ctrl_c_caught = true
  -- Ctrl-C leaves insert mode here (keeping the key from Neovim would hand it over again and
  -- again while got_int is set): the user is taken back once it has.
  local spot = insert and insert_spot(buf) or nil
  vim.schedule(function()
    ctrl_c_caught = false
    M.interrupt(chat)
    if spot then
      resume_insert(chat, spot)
    end
  end)
end

local function map_keys(chat)
  local keys = config.options.keymaps
  if not ctrl_c_ns then
    ctrl_c_ns = vim.on_key(on_key, vim.api.nvim_create_namespace("claude_sidecar.ctrl_c"))
  end
  local function map(modes, buf, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = desc, nowait = true })
  end
  local send = function()
    M.send_prompt_buffer(chat)
  end
  if keys.send then
    map({ "n", "i" }, chat.prompt_buf, keys.send, send, "Send to Claude")
  end
  map("n", chat.prompt_buf, "<CR>", send, "Send to Claude")
  if keys.interrupt then
    local interrupt = function()
      M.interrupt(chat)
    end
    map("n", chat.buf, keys.interrupt, interrupt, "Interrupt Claude")
    map({ "n", "i" }, chat.prompt_buf, keys.interrupt, interrupt, "Interrupt Claude")
  end
  if keys.close then
    map("n", chat.buf, keys.close, function()
      M.hide(chat)
    end, "Hide the chat")
  end
  -- The transcript is read-only: the keys that would start typing there go to the prompt.
  for _, lhs in ipairs({ "i", "a", "o", "I", "A", "O", "<CR>" }) do
    map("n", chat.buf, lhs, function()
      M.focus_prompt(chat)
    end, "Write in the prompt")
  end
  map("n", chat.buf, "[[", function()
    M.jump_prompt(chat, -1)
  end, "Previous prompt (at the top: read the page before)")
  map("n", chat.buf, "]]", function()
    M.jump_prompt(chat, 1)
  end, "Next prompt")
  if keys.toggle then
    map("n", chat.buf, keys.toggle, function()
      M.toggle_at_cursor(chat)
    end, "Show all of a tool's output / open a thinking block")
  end
end

local function window_for(buf)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

--- Window options of a chat window; its folds are made again when `fresh` (the chat was
--- just put in it), else kept as the user left them.
local function setup_chat_window(win, chat, fresh)
  -- Local values only: a window split from this one must not inherit them.
  local function set(name, value)
    vim.api.nvim_set_option_value(name, value, { scope = "local", win = win })
  end
  set("wrap", true)
  set("linebreak", true)
  -- A wrapped tool result or list item continues under its text, not at the margin
  -- (the buffer's 'formatlistpat' says where that text starts).
  set("breakindent", true)
  set("breakindentopt", "list:-1")
  set("number", false)
  set("relativenumber", false)
  set("foldtext", "v:lua.require'claude_sidecar.chat'.foldtext()")
  set("fillchars", "fold: ")
  -- The title stays in sight when the transcript scrolls (state, retries).
  set("winbar", "%{v:lua.require'claude_sidecar.chat'.winbar()}")
  if fresh or vim.wo[win].foldmethod ~= "manual" then
    set("foldmethod", "manual")
    fold(win, 1, vim.api.nvim_buf_line_count(chat.buf), M.fold_ranges(chat), true)
  end
end

--- Show `buf` in `win` with the cursor on its last line (so it follows new output).
local function show_buffer(win, buf)
  vim.api.nvim_win_set_buf(win, buf)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
end

--- Show a chat (its transcript above its prompt) and put the cursor in the prompt.
function M.show(chat)
  current = chat
  local opts = config.options
  local chat_win = window_for(chat.buf)
  local fresh = not chat_win
  if not chat_win then
    -- Another chat's windows in this tab are reused, so switching chats keeps the layout.
    for _, other in ipairs(M.chats) do
      local win = other ~= chat and window_for(other.buf)
      if win then
        chat_win = win
        show_buffer(win, chat.buf)
        local prompt_win = window_for(other.prompt_buf)
        if prompt_win then
          vim.api.nvim_win_set_buf(prompt_win, chat.prompt_buf)
        end
        break
      end
    end
  end
  if not chat_win then
    local split = ({
      right = "botright vsplit",
      left = "topleft vsplit",
      below = "botright split",
      above = "topleft split",
      tab = "tabnew",
    })[opts.layout]
    vim.cmd(split)
    chat_win = vim.api.nvim_get_current_win()
    if opts.layout == "tab" then
      local scratch = vim.api.nvim_get_current_buf()
      chat.tab = vim.api.nvim_get_current_tabpage()
      show_buffer(chat_win, chat.buf)
      -- :tabnew's empty buffer would linger in the buffer list.
      if scratch ~= chat.buf and vim.api.nvim_buf_get_name(scratch) == "" then
        pcall(vim.api.nvim_buf_delete, scratch, {})
      end
    else
      show_buffer(chat_win, chat.buf)
    end
    if opts.layout == "right" or opts.layout == "left" then
      vim.api.nvim_win_set_width(chat_win, opts.width)
    elseif opts.layout ~= "tab" then
      vim.api.nvim_win_set_height(chat_win, opts.height)
    end
  end
  setup_chat_window(chat_win, chat, fresh)
  local prompt_win = window_for(chat.prompt_buf)
  if not prompt_win then
    vim.api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(prompt_win, chat.prompt_buf)
    vim.api.nvim_win_set_height(prompt_win, opts.prompt_height)
  end
  vim.api.nvim_set_current_win(prompt_win)
end

--- Close the chat's windows in tab page `tab` (default: the current one); a tab holding
--- nothing but the chat (layout "tab") goes with them. The chat (and its CLI) goes on.
function M.hide(chat, tab)
  tab = tab or vim.api.nvim_get_current_tabpage()
  local mine, others = {}, 0
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if buf == chat.buf or buf == chat.prompt_buf then
      table.insert(mine, win)
    elseif vim.api.nvim_win_get_config(win).relative == "" then
      others = others + 1
    end
  end
  if #mine == 0 then
    return
  end
  if others == 0 and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd("tabclose " .. vim.api.nvim_tabpage_get_number(tab))
    return
  end
  for _, win in ipairs(mine) do
    if #vim.api.nvim_tabpage_list_wins(tab) > 1 then
      vim.api.nvim_win_close(win, false)
    end
  end
end

-- ------------------------------------------------------------------ channels

local function attach(chat, channel_id, session_id)
  chat.channel_id, chat.session_id = channel_id, session_id or chat.session_id
  by_channel[channel_id] = chat
  ignored[channel_id] = nil
  for _, note in ipairs(early[channel_id] or {}) do
    M.dispatch(note.method, note.params)
  end
  early[channel_id] = nil
  local waiting = chat.on_open
  chat.on_open = {}
  for _, fn in ipairs(waiting) do
    fn(chat)
  end
  local outbox = chat.outbox
  chat.outbox = {}
  for _, prompt in ipairs(outbox) do
    M.send(chat, prompt.text, prompt.id)
  end
end

--- What a channel opens with (its info): the cost so far and the context meter, for a
--- resumed or forked chat those its recorded turns left.
local function take_totals(chat, info)
  chat.t.cost_usd = info.totalCostUsd or 0
  chat.context = require("claude_sidecar.meter").reading(info.context)
  M.redraw_status()
end

--- Show a resumed chat's last page while its CLI starts: read from the stored session
--- (claude/getHistory), which takes milliseconds at any length, where the CLI takes seconds to
--- load a long session before claude/newChannel answers. The channel's own first page is the
--- same entries; open_channel draws it only if it differs.
function preview(chat, session_id)
  local params = M.page_params({ sessionId = session_id, cwd = chat.cwd })
  if not params.limit then
    return -- a daemon that does not page would send the whole session twice
  end
  local shown = {}
  chat.preview = shown
  rpc.request("claude/getHistory", params, function(err, result)
    if chat.preview ~= shown or chat.closed then
      return -- the channel opened first (its page is drawn), or the chat was closed
    elseif err then
      log.debug("no preview of session %s: %s", session_id, errors.describe(err))
      return
    end
    -- Kept apart from the entries drawn, which updates change in place.
    shown.entries = vim.deepcopy(result.entries)
    local queued = chat.t.queued -- prompts sent meanwhile
    chat.t = transcript.from_entries(result.entries)
    chat.t.queued = queued
    M.refresh(chat, 1)
    M.set_older(chat, result)
    chat.older.session = session_id
  end)
end

--- The channel did not open: the prompts waiting for it are not sent (shown as such).
function drop_outbox(chat)
  for _, waiting in ipairs(chat.outbox) do
    transcript.upsert(chat.t, { kind = "prompt", id = waiting.id, text = waiting.text })
    M.add_notice(chat, "not sent: " .. waiting.text)
  end
  chat.outbox = {}
  chat.t.queued = {}
  M.refresh(chat, 1)
end

--- Show the chat a claude/newChannel `resume` found open in the daemon (its `attached`): a
--- long one from its last page (open_channel asked for the `limit` of a page).
local function show_attached(chat, result)
  M.show_snapshot(chat, result.attached)
  M.add_marker(chat, "this session was still running in the daemon: attached to it")
  M.update_state(chat)
  attach(chat, result.channelId, result.sessionId)
end

--- Open a channel for a chat: new, or resuming `resume` (a session id), or a fork
--- (`method` "claude/forkSession"). With `marker`, the chat first shows the conversation the
--- channel starts with (a resumed or forked session's, claude/getTranscript), then `marker`.
---@param chat claude_sidecar.Chat
---@param params table extra claude/newChannel params (resume, model, permissionMode)
---@param method string|nil
---@param marker string|nil
function M.open_channel(chat, params, method, marker)
  chat.opening = true
  chat.state = "starting"
  show_state(chat)
  params = vim.tbl_extend("keep", params or {}, { cwd = chat.cwd })
  if not method and params.resume then
    -- A chat of the daemon that has the session open answers with its last page only.
    M.page_params(params)
    if marker and #chat.t.entries == 0 then
      preview(chat, params.resume)
    end
  end
  rpc.request(method or "claude/newChannel", params, function(err, result)
    chat.opening = false
    local shown = chat.preview
    chat.preview = nil
    if err then
      chat.state = "failed"
      show_state(chat)
      M.add_notice(chat, "could not start Claude: " .. errors.describe(err))
      drop_outbox(chat)
      return
    end
    if chat.closed then
      -- :ClaudeClose came while the channel was opening.
      rpc.request("claude/closeChannel", { channelId = result.channelId })
      return
    end
    chat.info = result.info -- what the CLI offers: models, slash commands, agents
    if result.attached then
      -- Shared daemon: a chat of the daemon holds this session (this Neovim was restarted, or
      -- another editor has it open): this one is now attached to it, shown as it is now.
      return show_attached(chat, result)
    end
    chat.seq = 0 -- a new channel: its notifications are numbered from 1
    if not marker then
      -- A cursor of the channel before this one would be refused by this one.
      M.set_older(chat, nil)
      take_totals(chat, result.info)
      return attach(chat, result.channelId, result.sessionId)
    end
    local page = M.page_params({ channelId = result.channelId })
    rpc.request("claude/getTranscript", page, function(terr, transcript_result)
      if terr then
        M.add_notice(chat, "could not show the conversation so far: " .. errors.describe(terr))
      end
      take_totals(chat, result.info)
      if terr or not (shown and shown.entries and vim.deep_equal(shown.entries, transcript_result.entries)) then
        if not terr then
          chat.t = transcript.from_entries(transcript_result.entries)
        end
        M.refresh(chat, 1)
        M.set_older(chat, transcript_result)
      end
      -- Else the preview shows this very page: nothing is drawn again, and its older pages go on
      -- from the stored session (getHistory's cursor reads the same entries the channel's would).
      M.add_marker(chat, marker)
      attach(chat, result.channelId, result.sessionId)
    end)
  end)
end

--- Create a chat (and its buffers) without opening a channel.
function M.create(cwd, t)
  require("claude_sidecar.highlights").ensure()
  count = count + 1
  local chat = {
    number = count,
    cwd = cwd,
    state = "new",
    t = t or transcript.new(),
    starts = {},
    entries_end = 1,
    folds = {},
    fold_base = 0,
    outbox = {},
    opening = false,
    sending = 0,
    seq = 0,
    closed = false,
    on_open = {},
  }
  -- Named for the tabline and :ls, which shorten every path component before the last "/":
  -- no "/" in the name (a "claude://" name showed as "c//...").
  local project = vim.fn.fnamemodify(cwd, ":t")
  chat.buf = buffer(string.format("[Claude #%d] %s", count, project), "claude_sidecar")
  chat.prompt_buf = buffer(string.format("[Claude #%d prompt] %s", count, project), "claude_sidecar_prompt")
  vim.bo[chat.buf].modifiable = false
  vim.b[chat.buf].claude_sidecar_chat = count
  vim.b[chat.prompt_buf].claude_sidecar_chat = count
  map_keys(chat)
  watch_top(chat)
  table.insert(M.chats, chat)
  show_state(chat)
  M.refresh(chat, 1)
  events.emit("ClaudeChatOpened", { chat = count, cwd = cwd, buf = chat.buf, prompt_buf = chat.prompt_buf })
  return chat
end

--- Close a chat: its channel (the CLI ends), its windows and buffers.
---@param detach boolean|nil leave the chat running in the shared daemon (claude/detach)
function M.close(chat, detach)
  if chat.closed then
    return
  end
  chat.closed = true
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      M.hide(chat, tab)
    end
  end
  if chat.channel_id then
    local channel_id = chat.channel_id
    local method = detach and "claude/detach" or "claude/closeChannel"
    rpc.request(method, { channelId = channel_id }, function(err)
      by_channel[channel_id] = nil
      if err and errors.name(err) ~= "channelNotFound" then
        log.notify(vim.log.levels.WARN, "closing Claude #%d: %s", chat.number, errors.describe(err))
      end
    end)
  end
  for i, other in ipairs(M.chats) do
    if other == chat then
      table.remove(M.chats, i)
      break
    end
  end
  if current == chat then
    current = M.chats[#M.chats]
  end
  for _, buf in ipairs({ chat.prompt_buf, chat.buf }) do
    if vim.api.nvim_buf_is_valid(buf) then
      vim.api.nvim_buf_delete(buf, { force = true })
    end
  end
  events.emit("ClaudeChatClosed", { chat = chat.number })
  M.redraw_status()
end

--- A new chat in `cwd` with the configured model and mode.
---@param cwd string|nil
---@param extra table|nil more claude/newChannel params (a `worktree`)
function M.new(cwd, extra)
  local chat = M.create(cwd or vim.fn.getcwd())
  local opts = config.options
  local params = vim.tbl_extend("force", { model = opts.model, permissionMode = opts.permission_mode }, extra or {})
  M.open_channel(chat, params)
  return chat
end

--- Run fn(chat) now if the chat's channel is open, else once it is (in order, before
--- any queued prompt is sent).
function M.when_open(chat, fn)
  if chat.channel_id then
    fn(chat)
  else
    table.insert(chat.on_open, fn)
  end
end

local function new_uuid()
  local b = { string.byte(vim.uv.random(16), 1, 16) }
  b[7] = bit.bor(bit.band(b[7], 0x0f), 0x40)
  b[9] = bit.bor(bit.band(b[9], 0x3f), 0x80)
  return string.format("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", unpack(b))
end

--- Whether a turn runs (or a prompt is on its way): a prompt sent now waits for it.
local function busy(chat)
  return chat.sending > 0 or chat.state == "running" or chat.state == "awaitingPermission" or #chat.t.queued > 0
end

--- Send a prompt; queued while the channel opens, and a dead channel is resumed first.
--- While a turn runs it is shown as queued, below the answer, until the CLI takes it up.
---@param id string|nil the prompt's uuid (one it was shown with while the channel opened)
function M.send(chat, text, id)
  if text:match("^%s*$") then
    return
  end
  if not chat.channel_id then
    -- Shown at once as waiting, where the channel will put it.
    local waiting = { text = text, id = new_uuid() }
    table.insert(chat.outbox, waiting)
    M.refresh(
      chat,
      transcript.upsert(chat.t, { kind = "prompt", id = waiting.id, text = text, queued = true, starting = true })
    )
    if not chat.opening then
      -- A chat showing only its last pages is shown again from the new channel's last page:
      -- the cursor of its older entries belonged to the channel that is gone.
      local paged = chat.older and chat.older.cursor
      M.open_channel(
        chat,
        { resume = chat.session_id },
        nil,
        paged and "reopened from its session: the conversation goes on" or nil
      )
    end
    return
  end
  local message_id = id or new_uuid()
  -- Shown at once; the daemon's claude/entry for it (same id) follows.
  M.refresh(chat, transcript.upsert(chat.t, { kind = "prompt", id = message_id, text = text, queued = busy(chat) }))
  chat.sending = chat.sending + 1
  local params = { channelId = chat.channel_id, text = text, uuid = message_id }
  require("claude_sidecar.images").into(chat, params) -- images attached with :ClaudeImage
  rpc.request("claude/sendMessage", params, function(err)
    chat.sending = chat.sending - 1
    if err then
      M.refresh(chat, transcript.upsert(chat.t, { kind = "prompt", id = message_id, text = text }))
      M.add_notice(chat, "not sent: " .. errors.describe(err))
    end
  end)
end

function M.send_prompt_buffer(chat)
  local lines = vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if text:match("^%s*$") then
    return
  end
  vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, {})
  if require("claude_sidecar.images").take_prompt(chat, text) then
    return -- only an image's path: it goes with the next prompt
  end
  M.send(chat, text)
end

--- Whether the chat's turn runs in the CLI (its state says so).
local function running(chat)
  return chat.state == "running" or chat.state == "awaitingPermission"
end

--- Stop the running turn: one claude/interrupt per turn. A second one before the turn has
--- ended (Ctrl-C pressed again, or handed over twice by Neovim) would stop the prompt queued
--- behind it, which the daemon runs next.
function M.interrupt(chat)
  if not chat.channel_id or chat.interrupting then
    return
  end
  -- Without a running turn nothing is held back: the next turn can still be stopped.
  chat.interrupting = running(chat) or nil
  rpc.request("claude/interrupt", { channelId = chat.channel_id }, function(err)
    if err then
      chat.interrupting = nil
      M.add_notice(chat, "interrupt failed: " .. errors.describe(err))
    end
  end)
end

-- ------------------------------------------------------------------ notifications

local handlers = {}

function handlers.delta(chat, params)
  local index = transcript.append(chat.t, params)
  if not index then
    return
  end
  local kind = chat.t.entries[index].kind
  if kind == "text" then
    append_text(chat, index, params.text)
  elseif kind == "thinking" then
    M.refresh(chat, index)
  end
  -- A tool's input shows once complete (its claude/entry): nothing to redraw per piece.
end

function handlers.entry(chat, params)
  local entry = params.entry
  local old, at = transcript.get(chat.t, entry.id)
  if not old and entry.parentId and chat.older and chat.older.cursor and not transcript.get(chat.t, entry.parentId) then
    -- What a sub-agent started before the entries shown did: its page shows it when read.
    return require("claude_sidecar.permissions").entry_changed(chat, entry)
  end
  local entry_count = #chat.t.entries
  local index = transcript.upsert(chat.t, entry)
  -- The end of a stream repeats the text that streamed in: nothing to draw again.
  local same = old and old.kind == "text" and entry.kind == "text" and old.text == entry.text
  if not same then
    -- Changed in place (a tool's result, its status): its lines only, not every entry below it
    -- (an Agent call's result redrew all its sub-agent's entries: 15 ms for 2,000, now 0.05).
    local in_place = at == index and #chat.t.entries == entry_count
    M.refresh(chat, index, in_place and index or nil)
  end
  require("claude_sidecar.permissions").entry_changed(chat, params.entry)
end

function handlers.turnEnded(chat, params)
  chat.interrupting = nil
  chat.t.cost_usd = params.totalCostUsd or chat.t.cost_usd
  chat.context = require("claude_sidecar.meter").reading(params.context) or chat.context
  M.redraw_status()
  local err = params.error
  if errors.auth_required(err) then
    -- Once per turn, beside the chat's notice: the user may not be looking at the chat.
    errors.report_auth_required(err)
  end
  events.emit("ClaudeTurnEnded", {
    chat = chat.number,
    outcome = params.outcome,
    duration_ms = params.durationMs,
    permission_wait_ms = params.permissionWaitMs,
    cost_usd = params.costUsd,
    total_cost_usd = params.totalCostUsd,
    error = err and err.message or nil,
    message_ids = params.messageIds or {},
  })
end

local function show_retry(chat, retry)
  if retry then
    local text = M.describe_retry(retry)
    local entry, index = transcript.get(chat.t, chat.retry_entry)
    if entry then
      entry.text = text
      M.refresh(chat, index)
    else
      index = transcript.add(chat.t, { kind = "notice", text = text })
      chat.retry_entry = chat.t.entries[index].id
      M.refresh(chat, index)
    end
  elseif chat.retry_entry then
    local entry, index = transcript.get(chat.t, chat.retry_entry)
    if entry then
      entry.text = entry.text:gsub(", retry (%d+)/%d+ in .*$", ": retried %1 time(s)")
      M.refresh(chat, index)
    end
    chat.retry_entry = nil
  end
  chat.retry = retry
end

function handlers.status(chat, params)
  chat.state = params.state
  if not running(chat) then
    chat.interrupting = nil
  end
  chat.session_id = params.sessionId or chat.session_id
  chat.model = params.model or chat.model
  chat.mode = params.permissionMode or chat.mode
  show_retry(chat, params.retry)
  show_state(chat)
  if params.state == "exited" and params.exit then
    local exit = params.exit
    M.add_notice(
      chat,
      string.format(
        "the CLI exited (code %s, signal %s); the next message resumes the session",
        tostring(exit.code),
        tostring(exit.signal)
      )
    )
  end
end

--- Route one notification to its chat (held until the chat knows its channel id).
function M.dispatch(method, params)
  local name = method:match("^claude/(.*)$")
  local channel_id = params.channelId
  local chat = by_channel[channel_id]
  if chat and chat.closed and name ~= "permissionCancelled" then
    return
  end
  if not chat then
    if not ignored[channel_id] then
      early[channel_id] = early[channel_id] or {}
      table.insert(early[channel_id], { method = method, params = params })
    end
    return
  end
  if chat.held then
    table.insert(chat.held, { method = method, params = params })
    return
  end
  if type(params.seq) == "number" then
    -- Shown already (a replay after re-attaching, or a snapshot that includes it): never twice.
    if params.seq <= chat.seq then
      return
    end
    chat.seq = params.seq
  end
  local handler = handlers[name]
  if handler then
    handler(chat, params)
  elseif name == "permissionRequest" then
    require("claude_sidecar.permissions").request(chat, params)
  elseif name == "permissionCancelled" then
    require("claude_sidecar.permissions").cancelled(chat, params)
  elseif name == "fileUpdated" then
    require("claude_sidecar.files").updated(chat, params)
  end
end

--- The daemon died: every chat's channel is gone; the next message resumes its session.
function M.daemon_exited()
  for _, chat in ipairs(M.chats) do
    chat.reconnecting = nil
    chat.held = nil
    chat.interrupting = nil
    if chat.channel_id then
      by_channel[chat.channel_id] = nil
      chat.channel_id = nil
      chat.state = "exited"
      show_state(chat)
      M.add_notice(chat, "the claude-sidecar daemon exited; the next message resumes this session")
    end
  end
  early = {}
end

-- ------------------------------------------------------------------ the shared daemon

--- Show the chat as claude/attach (without afterSeq) answered: its conversation as of `seq`
--- and its pending permission requests; notifications numbered after `seq` follow.
---@param chat claude_sidecar.Chat
---@param result table the claude/attach result (or newChannel's `attached`), with `entries`
function M.show_snapshot(chat, result)
  chat.t = transcript.from_entries(result.entries)
  chat.seq = result.seq or 0
  -- Its requests are answered on this channel (attach() routes its notifications here next).
  chat.channel_id = result.channelId
  chat.starts = {}
  M.refresh(chat, 1)
  M.set_older(chat, result)
  require("claude_sidecar.permissions").restore(chat, result.channelId, result.pendingPermissions or {})
end

--- Ask the daemon the chat's state, model and mode now (an attach answer does not say them).
function M.update_state(chat)
  rpc.request("claude/listChannels", vim.empty_dict(), function(err, result)
    if err then
      return
    end
    for _, channel in ipairs(result.channels or {}) do
      if channel.channelId == chat.channel_id then
        chat.state = channel.state
        chat.model = channel.model or chat.model
        chat.mode = channel.permissionMode or chat.mode
        show_state(chat)
      end
    end
  end)
end

--- Whether any chat has a channel (the shared daemon's connection is worth making again).
function M.any_open()
  for _, chat in ipairs(M.chats) do
    if chat.channel_id and not chat.closed then
      return true
    end
  end
  return false
end

--- Shared daemon: the connection dropped; the chats wait for it (their CLIs run on).
function M.connection_dropped()
  for _, chat in ipairs(M.chats) do
    if chat.channel_id then
      chat.reconnecting = true
      show_state(chat)
    end
  end
end

--- Stop receiving a channel this Neovim does not show (claude/detach).
local function detach(channel_id)
  ignored[channel_id] = true
  early[channel_id] = nil
  rpc.request("claude/detach", { channelId = channel_id }, function() end)
end

--- The chat's channel is no longer in the daemon (it crashed and a new one runs, or the chat
--- was closed there): open the session again; its conversation is shown from the session.
local function reopen(chat, why)
  if chat.channel_id and by_channel[chat.channel_id] == chat then
    by_channel[chat.channel_id] = nil
  end
  chat.channel_id = nil
  chat.state = "exited"
  show_state(chat)
  if not chat.session_id then
    return M.add_notice(chat, why .. "; the next message starts a new conversation")
  end
  M.add_notice(chat, why .. "; opening its session again")
  M.open_channel(chat, { resume = chat.session_id }, nil, "reopened from its session: the conversation goes on")
end

--- Shared daemon, after a dropped connection: attach the chat again with the last seq it
--- rendered, so the daemon sends exactly what it missed (or, if it no longer has all of it,
--- the chat as it is now, shown afresh).
function M.reattach(chat)
  local channel_id = chat.channel_id
  if not channel_id or chat.closed then
    return
  end
  chat.held = {}
  local params = M.page_params({ channelId = channel_id, afterSeq = chat.seq })
  rpc.request("claude/attach", params, function(err, result)
    local held = chat.held or {}
    chat.held = nil
    chat.reconnecting = nil
    show_state(chat)
    if chat.closed or chat.channel_id ~= channel_id then
      return
    end
    local name = errors.name(err)
    if name == "channelNotFound" or name == "invalidParams" then
      -- invalidParams: an afterSeq past the chat's last seq, a chat of the same id in a new daemon.
      return reopen(chat, "the chat was not running in the daemon any more (" .. errors.describe(err) .. ")")
    elseif err then
      -- The connection dropped again: the next one attaches again. Anything else is said.
      if not rpc.running() then
        chat.reconnecting = true
        return show_state(chat)
      end
      return M.add_notice(chat, "could not attach again: " .. errors.describe(err))
    end
    if result.sessionId ~= chat.session_id then
      -- A new daemon gave the id to another chat.
      detach(channel_id)
      return reopen(chat, "the chat was not running in the daemon any more")
    end
    if result.missed then
      M.show_snapshot(chat, result)
      M.add_notice(chat, "reconnected: the daemon no longer had all of what was missed; the chat is shown afresh")
      M.update_state(chat)
    end
    for _, note in ipairs(held) do
      M.dispatch(note.method, note.params)
    end
  end)
end

--- Shared daemon: the connection is back; attach every chat again.
function M.reattach_all()
  for _, chat in ipairs(M.chats) do
    M.reattach(chat)
  end
end

--- The chat showing channel `channel_id`, if any.
function M.for_channel(channel_id)
  return by_channel[channel_id]
end

--- Open a running chat of the shared daemon (a claude/listChannels item) in a new chat
--- buffer: its conversation so far, its pending permission requests, then what it does next.
---@param channel table the claude/listChannels item
---@param done fun(chat: claude_sidecar.Chat|nil, err: table|nil)|nil
function M.attach_to(channel, done)
  local chat = M.create(channel.cwd)
  chat.session_id = channel.sessionId
  chat.model, chat.mode = channel.model, channel.permissionMode
  chat.opening = true
  chat.state = "attaching"
  show_state(chat)
  rpc.request("claude/attach", M.page_params({ channelId = channel.channelId }), function(err, result)
    chat.opening = false
    if err then
      chat.state = "failed"
      show_state(chat)
      M.add_notice(chat, "could not attach: " .. errors.describe(err))
      return done and done(nil, err)
    end
    if chat.closed then
      return detach(result.channelId)
    end
    chat.info = result.info
    chat.state = channel.state
    M.show_snapshot(chat, result)
    M.add_marker(chat, "attached: the chat goes on from here")
    attach(chat, result.channelId, result.sessionId)
    M.update_state(chat)
    if done then
      done(chat)
    end
  end)
  return chat
end

return M
