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

--- Reload the buffer showing `path` from disk, unless the user has unsaved changes in it.
---@return boolean reloaded
function M.reload(path)
  local buf = nil
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) == path then
      buf = b
    end
  end
  if not buf then
    return false
  end
  if vim.bo[buf].modified then
    log.notify(vim.log.levels.WARN, "%s changed on disk but has unsaved changes here: not reloaded (:e! to take Claude's version)",
      vim.fn.fnamemodify(path, ":~:."))
    return false
  end
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  vim.api.nvim_buf_call(buf, function()
    -- The buffer is unmodified (checked above, same tick): :edit re-reads it, keeping the view.
    if vim.api.nvim_buf_get_changedtick(buf) == tick then
      local view = vim.fn.winsaveview()
      vim.cmd("silent! edit")
      vim.fn.winrestview(view)
    end
  end)
  return true
end

function M.updated(chat, params)
  table.insert(M.changes, { path = params.path, old = params.oldContent, new = params.newContent,
    diff = params.diff, notice = params.notice })
  local entries = chat.t.entries
  table.insert(entries, { kind = "file", path = vim.fn.fnamemodify(params.path, ":~:."),
    stats = params.notice and (" (" .. params.notice .. ")") or stats(params.diff) })
  require("claude_sidecar.chat").refresh(chat, #entries)
  M.reload(params.path)
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
  local old = scratch(lines_of(change.old), "claude://before/" .. change.path, filetype)
  vim.api.nvim_win_set_buf(0, old)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  local new = scratch(lines_of(change.new), "claude://after/" .. change.path, filetype)
  vim.api.nvim_win_set_buf(0, new)
  vim.cmd("diffthis")
end

M.scratch = scratch
return M
