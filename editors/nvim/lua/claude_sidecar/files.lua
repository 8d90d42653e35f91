--- claude/fileUpdated: buffers of changed files reload, and :ClaudeDiff shows a change.
local log = require("claude_sidecar.log")

local M = {}

--- Every change reported in this Neovim, oldest first.
---@type {path: string, old: string|nil, new: string|nil, diff: string|nil, notice: string|nil}[]
M.changes = {}

local function stats(diff)
  if not diff then
    return ""
  end
  local added, removed = 0, 0
  for line in diff:gmatch("[^\n]+") do
    if line:sub(1, 1) == "+" and line:sub(1, 3) ~= "+++" then
      added = added + 1
    elseif line:sub(1, 1) == "-" and line:sub(1, 3) ~= "---" then
      removed = removed + 1
    end
  end
  return string.format(" (+%d −%d)", added, removed)
end

-- changedtick of each file buffer when it last matched the file on disk (read, written, or
-- reloaded): a buffer whose tick moved on since has edits of the user's that are not saved.
local synced = {} ---@type table<integer, integer>

local function mark_synced(buf)
  if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
    synced[buf] = vim.api.nvim_buf_get_changedtick(buf)
  end
end

--- Follow file buffers to know when each was last in sync with its file (called by setup).
function M.track()
  local group = vim.api.nvim_create_augroup("claude_sidecar_files", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "FileChangedShellPost" }, {
    group = group,
    -- Scheduled: Neovim resets 'modified' (a change of the tick) after BufReadPost.
    callback = function(args)
      vim.schedule(function()
        mark_synced(args.buf)
      end)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufDelete" }, {
    group = group,
    callback = function(args)
      synced[args.buf] = nil
    end,
  })
  -- Buffers opened before the plugin loaded: unmodified ones are as on disk now.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if synced[buf] == nil and vim.api.nvim_buf_get_name(buf) ~= "" then
      mark_synced(buf)
    end
  end
end

--- True if the user changed `buf` since it last matched its file.
local function has_unsaved_changes(buf)
  if vim.bo[buf].modified then
    return true
  end
  local tick = synced[buf]
  return tick ~= nil and tick ~= vim.api.nvim_buf_get_changedtick(buf)
end

local function buffer_of(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) == path then
      return b
    end
  end
end

--- Bring the buffer showing `path` up to date with the file, as :checktime does (so
--- 'autoread' and the user's FileChangedShell autocmds decide), unless the user has changed
--- the buffer since it last matched the file: then it is left alone and the user is told.
---@return boolean reloaded
function M.reload(path)
  local buf = buffer_of(path)
  if not buf then
    return false
  end
  if has_unsaved_changes(buf) then
    log.notify(
      vim.log.levels.WARN,
      "%s changed on disk but has unsaved changes here: not reloaded (:e! to take Claude's version)",
      vim.fn.fnamemodify(path, ":~:.")
    )
    return false
  end
  local before = vim.api.nvim_buf_get_changedtick(buf)
  local ok, err = pcall(vim.cmd.checktime, tostring(buf))
  if not ok then
    log.warn("checktime %s: %s", path, err)
  end
  local reloaded = vim.api.nvim_buf_get_changedtick(buf) ~= before
  if reloaded then
    mark_synced(buf)
  end
  return reloaded
end

--- claude/fileUpdated: record the change, show it in the chat, reload the file's buffer and
--- fire `User ClaudeFileUpdated` ({chat, path, reloaded}).
function M.updated(chat, params)
  table.insert(
    M.changes,
    { path = params.path, old = params.oldContent, new = params.newContent, diff = params.diff, notice = params.notice }
  )
  local transcript = require("claude_sidecar.transcript")
  -- The tool's entry lists the files it changed (its claude/entry follows); a change no
  -- tool entry shows, or one without a diff, gets its own line.
  if not (params.diff and transcript.get(chat.t, params.toolUseId)) then
    local index = transcript.add(chat.t, {
      kind = "file",
      path = vim.fn.fnamemodify(params.path, ":~:."),
      stats = params.notice and (" (" .. params.notice .. ")") or stats(params.diff),
    })
    require("claude_sidecar.chat").refresh(chat, index)
  end
  local reloaded = M.reload(params.path)
  require("claude_sidecar.events").emit(
    "ClaudeFileUpdated",
    { chat = chat.number, path = params.path, reloaded = reloaded }
  )
end

local function scratch(lines, name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype or ""
  pcall(vim.api.nvim_buf_set_name, buf, name)
  return buf
end

local function lines_of(text)
  if text == nil then
    return {}
  end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

--- Show the latest change of `path` (or the latest change at all) as a side-by-side diff.
function M.diff(path)
  local change = nil
  local wanted = path and path ~= "" and vim.fn.fnamemodify(path, ":p") or nil
  for i = #M.changes, 1, -1 do
    if not wanted or M.changes[i].path == wanted then
      change = M.changes[i]
      break
    end
  end
  if not change then
    log.notify(vim.log.levels.WARN, "no change by Claude" .. (wanted and (" to " .. wanted) or "") .. " yet")
    return
  end
  if change.notice then
    log.notify(vim.log.levels.WARN, "%s", change.path .. ": " .. change.notice)
    return
  end
  local filetype = vim.filetype.match({ filename = change.path }) or ""
  vim.cmd("tabnew")
  -- No "/" in the names: the tabline shortens every path component before the last one.
  local shown = vim.fn.fnamemodify(change.path, ":t")
  local old = scratch(lines_of(change.old), "[before Claude] " .. shown, filetype)
  vim.api.nvim_win_set_buf(0, old)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  local new = scratch(lines_of(change.new), "[after Claude] " .. shown, filetype)
  vim.api.nvim_win_set_buf(0, new)
  vim.cmd("diffthis")
end

M.scratch = scratch
return M
