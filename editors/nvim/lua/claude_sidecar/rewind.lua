--- :ClaudeRewind — put the files Claude changed back to how they were before a prompt.
---
--- The daemon's dry run comes first: its diff is drawn (in a tab of its own) before the
--- picker asks, and nothing changes unless the user picks "Rewind".
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local rpc = require("claude_sidecar.rpc")

local M = {}

local function one_line(text)
  return (text:gsub("\n", " "))
end

--- Why chat `chat` cannot rewind now, or nil if it can.
local function refusal(chat)
  if chat.closed then
    return "this chat is closed"
  elseif chat.state == "exited" or chat.state == "failed" then
    return string.format(
      "Claude #%d's CLI is not running (%s); send a message to resume it, then rewind",
      chat.number,
      chat.state
    )
  elseif not chat.channel_id then
    return string.format("Claude #%d is still starting; try again in a moment", chat.number)
  end
  return nil
end

local function preview_tab(lines, name)
  vim.cmd("tabnew")
  local scratch = vim.api.nvim_get_current_buf()
  local buf = require("claude_sidecar.files").scratch(lines, name, "diff")
  vim.api.nvim_win_set_buf(0, buf)
  if scratch ~= buf and vim.api.nvim_buf_is_valid(scratch) and vim.api.nvim_buf_get_name(scratch) == "" then
    pcall(vim.api.nvim_buf_delete, scratch, {})
  end
  local tab = vim.api.nvim_get_current_tabpage()
  return function()
    if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      vim.cmd("tabclose " .. vim.api.nvim_tabpage_get_number(tab))
    end
  end
end

--- Show what rewinding chat `chat` to before prompt `entry` would change, then ask.
---@param chat claude_sidecar.Chat
---@param entry table the prompt's transcript entry (its id is the message id)
function M.start(chat, entry)
  local why = refusal(chat)
  if why then
    log.notify(vim.log.levels.WARN, "cannot rewind: %s", why)
    return
  end
  local params = { channelId = chat.channel_id, messageId = entry.id, dryRun = true }
  rpc.request("claude/rewindFiles", params, function(err, preview)
    if err then
      errors.report(err)
      return
    end
    if not preview.canRewind or #preview.filesChanged == 0 then
      log.notify(vim.log.levels.INFO, "no file to rewind for that prompt: the files are as they were then")
      return
    end
    local title = string.format(
      "Rewind %d file(s) (+%d −%d) to before: %s",
      #preview.filesChanged,
      preview.insertions,
      preview.deletions,
      one_line(entry.text)
    )
    local lines = { title, "" }
    for _, d in ipairs(preview.diffs) do
      vim.list_extend(
        lines,
        require("claude_sidecar.render").diff_lines(d.diff or ("--- " .. d.path .. ": " .. (d.note or "no diff")))
      )
    end
    local close = preview_tab(lines, "[rewind preview] " .. entry.id:sub(1, 8))
    -- Drawn before the picker: the default one takes the screen until it is answered.
    vim.cmd("redraw")
    vim.ui.select({ "Rewind", "Cancel" }, { prompt = title .. "?", kind = "claude_sidecar.rewind" }, function(choice)
      close()
      if choice ~= "Rewind" then
        return
      end
      params.dryRun = false
      rpc.request("claude/rewindFiles", params, function(e, done)
        if e then
          errors.report(e)
          return
        end
        local files = require("claude_sidecar.files")
        for _, path in ipairs(done.filesChanged) do
          files.reload(path)
        end
        require("claude_sidecar.chat").add_notice(
          chat,
          string.format("rewound %d file(s) to before: %s", #done.filesChanged, one_line(entry.text))
        )
      end)
    end)
  end)
end

return M
