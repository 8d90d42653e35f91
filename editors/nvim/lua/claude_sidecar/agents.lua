--- :ClaudeAgents: every chat of the daemon in one list ("who needs you"), kept current by the
--- roster (claude/watchChannels): the chats waiting for a permission first, then the running,
--- idle and exited ones; <CR> opens one, R lists them afresh, q closes the list.
local log = require("claude_sidecar.log")
local roster = require("claude_sidecar.roster")

local M = {}

local ns = vim.api.nvim_create_namespace("claude_sidecar.agents")
local buf = nil ---@type integer|nil
local timer = nil ---@type uv.uv_timer_t|nil
local shown = {} ---@type table<integer, table> the chat of each line (1-based)

--- The order of the states in the list, and how each is named and highlighted.
local STATES = {
  awaitingPermission = { rank = 1, label = "waiting", hl = "ClaudeSidecarAgentWaiting" },
  running = { rank = 2, label = "running", hl = "ClaudeSidecarAgentRunning" },
  starting = { rank = 2, label = "starting", hl = "ClaudeSidecarAgentRunning" },
  idle = { rank = 3, label = "idle", hl = "ClaudeSidecarAgentIdle" },
  exited = { rank = 4, label = "exited", hl = "ClaudeSidecarAgentExited" },
}
local FAILED = { rank = 4, label = "failed", hl = "ClaudeSidecarAgentFailed" }

--- How the list shows a chat's state: a CLI that ended with an error (or a signal) "failed".
---@param channel table a claude/listChannels item
---@return {rank: integer, label: string, hl: string}
function M.state(channel)
  if channel.state == "exited" and channel.exit and (channel.exit.code ~= 0 or channel.exit.signal) then
    return FAILED
  end
  return STATES[channel.state] or { rank = 2, label = tostring(channel.state), hl = "ClaudeSidecarAgentRunning" }
end

--- Seconds since 1970 (UTC) of an ISO 8601 UTC time as the daemon writes it
--- ("2026-11-29T14:02:17.512Z"); nil for anything else.
---@param iso string|nil
---@return number|nil
function M.epoch(iso)
  local y, mo, d, h, mi, s, frac = tostring(iso):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.?(%d*)Z$")
  if not y then
    return nil
  end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- Days from the civil date (Howard Hinnant's algorithm): os.time() would take local time.
  y = mo <= 2 and y - 1 or y
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * (mo + (mo > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  local days = era * 146097 + doe - 719468
  local fraction = frac ~= "" and tonumber("0." .. frac) or 0
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s) + fraction
end

--- "12 s ago", "3 min ago", "2 h ago", "4 d ago" for a time `seconds` before now.
---@param seconds number
---@return string
function M.ago(seconds)
  seconds = math.max(0, math.floor(seconds))
  if seconds < 60 then
    return string.format("%d s ago", seconds)
  elseif seconds < 3600 then
    return string.format("%d min ago", math.floor(seconds / 60))
  elseif seconds < 86400 then
    return string.format("%d h ago", math.floor(seconds / 3600))
  end
  return string.format("%d d ago", math.floor(seconds / 86400))
end

local function channel_number(channel)
  return tonumber(tostring(channel.channelId):match("(%d+)$")) or math.huge
end

--- The chats in the list's order: waiting for the user, running, idle, exited; in each group
--- the oldest chat first (a running chat does not jump around as it works).
---@param channels table[]
---@return table[]
function M.sorted(channels)
  local list = vim.list_extend({}, channels)
  table.sort(list, function(a, b)
    local ra, rb = M.state(a).rank, M.state(b).rank
    if ra ~= rb then
      return ra < rb
    end
    local na, nb = channel_number(a), channel_number(b)
    if na ~= nb then
      return na < nb
    end
    return tostring(a.channelId) < tostring(b.channelId)
  end)
  return list
end

--- What a chat is about: the tool it asks about when it waits, and its last prompt's first line.
local function about(channel)
  local parts = {}
  local request = (channel.pendingPermissions or {})[1]
  if request then
    local tool = require("claude_sidecar.render").tool_summary(request.toolName, request.input)
    local more = #channel.pendingPermissions > 1 and string.format(" (+%d more)", #channel.pendingPermissions - 1) or ""
    table.insert(parts, "asks " .. tool .. more)
  end
  local worktree = channel.worktree
  if type(worktree) == "table" then
    -- Which branch the agent works on, and what it changed there so far.
    local changes = channel.changes
    local counted = ""
    if type(changes) == "table" then
      counted = changes.files == 0 and ", nothing changed"
        or string.format(
          " +%d -%d in %d file%s",
          changes.added,
          changes.deleted,
          changes.files,
          changes.files == 1 and "" or "s"
        )
    end
    table.insert(parts, "on " .. worktree.branch .. counted)
  end
  if channel.lastPrompt then
    table.insert(parts, "> " .. channel.lastPrompt)
  end
  return table.concat(parts, " · ")
end

--- The cells of a chat's line: state, folder (with the chat's number when it is open here), model,
--- time since its last event, what it is about.
---@param channel table
---@param now number seconds since 1970
---@param short boolean|nil the folder's parents by their first letter ("~/s/shop"): a narrow window
---@return string[]
function M.cells(channel, now, short)
  local at = M.epoch(channel.lastEventAt)
  -- A chat in a worktree: its repository's folder (what it is about says the branch).
  local worktree = type(channel.worktree) == "table" and channel.worktree or nil
  local folder = vim.fn.fnamemodify(worktree and worktree.root or channel.cwd or "?", ":~")
  -- Two chats of one folder told apart: the number of the one open here.
  local chat = package.loaded["claude_sidecar.chat"]
  local here = chat and chat.for_channel(channel.channelId)
  return {
    M.state(channel).label,
    (short and vim.fn.pathshorten(folder) or folder) .. (here and string.format(" #%d", here.number) or ""),
    channel.model or "",
    at and M.ago(now - at) or "",
    about(channel),
  }
end

--- Rows of cells joined into lines, each cell padded to its column's widest (the ages
--- right-aligned: they read as a column of numbers).
local function aligned(rows)
  local widths = {}
  for _, cells in ipairs(rows) do
    for col, cell in ipairs(cells) do
      widths[col] = math.max(widths[col] or 0, vim.fn.strdisplaywidth(cell))
    end
  end
  local lines = {}
  for _, cells in ipairs(rows) do
    local padded = {}
    for col, cell in ipairs(cells) do
      local pad = string.rep(" ", widths[col] - vim.fn.strdisplaywidth(cell))
      padded[col] = col == 4 and (pad .. cell) or col == #cells and cell or (cell .. pad)
    end
    table.insert(lines, vim.trim(table.concat(padded, "  ")))
  end
  return lines
end

--- The list's lines for `channels` at time `now`: a header, then one aligned line per chat (in
--- M.sorted order). Lines wider than `width` shorten the folders' parents ("~/s/shop").
---@param channels table[]
---@param now number
---@param width integer|nil
---@return string[] lines
---@return table[] chats the chat of each line after the header
function M.lines(channels, now, width)
  local list = M.sorted(channels)
  local counts, order = {}, {}
  for _, channel in ipairs(list) do
    local label = M.state(channel).label
    if not counts[label] then
      counts[label] = 0
      table.insert(order, label)
    end
    counts[label] = counts[label] + 1
  end
  local summary = vim.tbl_map(function(label)
    return string.format("%d %s", counts[label], label)
  end, order)
  local header = #list == 0 and "No Claude chat in the daemon" or ("Claude chats: " .. table.concat(summary, ", "))
  local function rows(short)
    return vim.tbl_map(function(channel)
      return M.cells(channel, now, short)
    end, list)
  end
  local chats = aligned(rows(false))
  local widest = 0
  for _, line in ipairs(chats) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  if width and widest > width then
    chats = aligned(rows(true))
  end
  return vim.list_extend(
    { header .. "    <CR> open · d review · m merge · x discard · R refresh · q close" },
    chats
  ),
    list
end

local function now()
  local seconds, micro = vim.uv.gettimeofday()
  return seconds + micro / 1e6
end

local function visible()
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf) and #vim.fn.win_findbuf(buf) > 0
end

--- Draw the list (only what changed is written: the ages tick every second).
local function draw()
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local lines, list
  if roster.watching() then
    local win = vim.fn.bufwinid(buf)
    lines, list = M.lines(roster.channels(), now(), win ~= -1 and vim.api.nvim_win_get_width(win) or nil)
  elseif roster.reading() then
    lines, list = { "Reading the chats of the daemon…    q close" }, {}
  else
    lines, list = { "No daemon: it exited (R starts it again and lists its chats)    q close" }, {}
  end
  local cursor_chat, cursor = nil, nil
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    cursor = vim.api.nvim_win_get_cursor(win)
    cursor_chat = shown[cursor[1]]
  end
  shown = {}
  for i, channel in ipairs(list) do
    shown[i + 1] = channel
  end
  local old = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if not vim.deep_equal(old, lines) then
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { end_col = #lines[1], hl_group = "ClaudeSidecarAgentHeader" })
  for lnum, channel in pairs(shown) do
    local state = M.state(channel)
    vim.api.nvim_buf_set_extmark(buf, ns, lnum - 1, 0, { end_col = #state.label, hl_group = state.hl })
  end
  -- The cursor stays on its chat (and column: a long line is read with it) when the order
  -- changes; it starts on the first chat (the first waiting for the user), not the header.
  local target = nil
  if cursor and cursor_chat then
    for lnum, channel in pairs(shown) do
      if channel.channelId == cursor_chat.channelId then
        target = { lnum, cursor[2] }
      end
    end
  elseif cursor and cursor[1] == 1 and shown[2] then
    target = { 2, 0 }
  end
  if target and not vim.deep_equal(target, vim.api.nvim_win_get_cursor(win)) then
    vim.api.nvim_win_set_cursor(win, target)
  end
  if win ~= -1 and vim.api.nvim_win_get_height(win) < #lines and vim.fn.winnr("$") > 1 then
    vim.api.nvim_win_set_height(win, math.min(#lines, math.floor(vim.o.lines / 3)))
  end
end

--- The ages tick while the list is in a window, not while it is hidden.
local function tick()
  if not timer then
    timer = vim.uv.new_timer()
    assert(timer):start(
      1000,
      1000,
      vim.schedule_wrap(function()
        if visible() then
          draw()
        elseif timer then
          timer:stop()
          timer:close()
          timer = nil
        end
      end)
    )
  end
end

local function stop_ticking()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

--- The chat on the cursor's line, if any.
local function chat_at_cursor()
  return shown[vim.api.nvim_win_get_cursor(0)[1]]
end

-- The window sizes before the list's window was opened, to put back when it closes (Neovim
-- would share its lines out, and 'equalalways' made the chat's prompt as tall as its transcript).
local layout = nil ---@type {tab: integer, wins: integer[], restore: string}|nil

local function put_back_layout()
  local saved = layout
  layout = nil
  if
    saved
    and vim.api.nvim_get_current_tabpage() == saved.tab
    and vim.deep_equal(vim.api.nvim_tabpage_list_wins(saved.tab), saved.wins)
  then
    vim.cmd(saved.restore)
  end
end

--- Close the list (its watch stops unless the alerts hold it).
function M.close()
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_delete(buf, { force = true })
    put_back_layout()
  end
end

--- Open `channel` (an item of the list): focus its chat if this Neovim has it open, else attach
--- to it (the shared daemon).
---@param channel table
function M.open_chat(channel)
  local chat = require("claude_sidecar.chat")
  local here = chat.for_channel(channel.channelId)
  if not here and not require("claude_sidecar.config").shared() then
    log.notify(vim.log.levels.INFO, "that chat is not open in this Neovim (still starting?)")
    return
  end
  M.close()
  if here then
    if require("claude_sidecar.config").options.start_insert then
      chat.focus_prompt(here)
    else
      chat.show(here)
    end
    return
  end
  if require("claude_sidecar.protocol").require("attach", ":ClaudeAgents <CR>") then
    require("claude_sidecar.attach").open(channel)
  end
end

local function map_keys()
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map("<CR>", function()
    local channel = chat_at_cursor()
    if channel then
      M.open_chat(channel)
    end
  end, "Open the chat under the cursor")
  local worktrees = require("claude_sidecar.worktrees")
  local function on_chat(fn)
    return function()
      local channel = chat_at_cursor()
      if channel then
        fn(channel)
      end
    end
  end
  map("d", on_chat(worktrees.review), "Review what the chat changed in its worktree")
  map("m", on_chat(worktrees.merge), "Merge the chat's worktree branch")
  map("x", on_chat(worktrees.remove), "Discard the chat's worktree and branch")
  map("q", M.close, "Close the list of chats")
  map("R", function()
    roster.refresh(function(err)
      if err then
        require("claude_sidecar.errors").report(err)
      end
    end)
  end, "List the chats afresh")
end

local function create()
  require("claude_sidecar.highlights").ensure()
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "[Claude agents]")
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "claude_sidecar_agents"
  vim.bo[buf].modifiable = false
  vim.bo[buf].undolevels = -1 -- rewritten every second while ages tick
  map_keys()
  local group = vim.api.nvim_create_augroup("claude_sidecar.agents", { clear = true })
  vim.api.nvim_create_autocmd("BufWinEnter", { group = group, buffer = buf, callback = tick })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      buf, shown = nil, {}
      stop_ticking()
      roster.release("list")
      -- Closed another way (:q, :bdelete): its window is gone once this autocmd is over.
      vim.schedule(put_back_layout)
    end,
  })
end

-- :ClaudeAgents waits for the daemon (or the connection) to start.
local opening = false

--- Whether the list is on screen in this tab page, or about to be (the user sees a chat that
--- starts waiting).
function M.in_sight()
  return opening or (buf ~= nil and vim.api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) ~= -1)
end

local function show()
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    create()
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    local tab = vim.api.nvim_get_current_tabpage()
    layout = { tab = tab, wins = vim.api.nvim_tabpage_list_wins(tab), restore = vim.fn.winrestcmd() }
    vim.cmd("botright split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, assert(buf))
    vim.api.nvim_win_set_height(win, math.max(4, math.min(#roster.channels() + 2, math.floor(vim.o.lines / 3))))
    for name, value in pairs({
      wrap = false,
      number = false,
      relativenumber = false,
      signcolumn = "no",
      cursorline = true,
      winfixheight = true,
    }) do
      vim.api.nvim_set_option_value(name, value, { scope = "local", win = win })
    end
  else
    vim.api.nvim_set_current_win(win)
  end
  M.wire()
  draw()
  tick()
  roster.hold("list", function(err)
    if err then
      require("claude_sidecar.errors").report(err)
    end
  end)
end

--- :ClaudeAgents — the list of every chat of the daemon (it must serve watchChannels).
function M.open()
  local rpc = require("claude_sidecar.rpc")
  if rpc.server() then
    if require("claude_sidecar.protocol").require("watchChannels", ":ClaudeAgents") then
      show()
    end
    return
  end
  -- The daemon starts (or the connection is made) with this request; then its features are known.
  M.wire()
  opening = true
  rpc.request("claude/listChannels", vim.empty_dict(), function(err)
    opening = false
    if err then
      return require("claude_sidecar.errors").report(err)
    end
    if require("claude_sidecar.protocol").require("watchChannels", ":ClaudeAgents") then
      show()
    end
  end)
end

local wired = false

--- Draw the list after each change of the chats; once.
function M.wire()
  if wired then
    return
  end
  wired = true
  roster.on_change(draw)
  roster.set_in_sight(M.in_sight)
end

return M
