--- The context meter: how full each chat's context window is (claude/contextUsage, asked
--- after every turn) and what the chat has cost, for the statusline and the chat's winbar.
local M = {}

--- "ctx 23% · $0.0123" for a chat ("" before its first turn ends).
---@param chat claude_sidecar.Chat
function M.text(chat)
  local parts = {}
  if chat.context then
    table.insert(parts, string.format("ctx %.0f%%", chat.context.percentage))
  end
  if chat.t.cost_usd > 0 then
    table.insert(parts, string.format("$%.4f", chat.t.cost_usd))
  end
  return table.concat(parts, " · ")
end

--- Ask the daemon how full chat's context window is; redraw the statuslines and winbars.
---@param chat claude_sidecar.Chat
function M.update(chat)
  if not chat.channel_id then
    return
  end
  require("claude_sidecar.rpc").request("claude/contextUsage", { channelId = chat.channel_id }, function(err, usage)
    if err then
      -- The meter is a nicety: a CLI that exited or timed out keeps the last reading.
      require("claude_sidecar.log").debug("contextUsage: %s", require("claude_sidecar.errors").describe(err))
      return
    end
    chat.context = { percentage = usage.percentage, total_tokens = usage.totalTokens, max_tokens = usage.maxTokens }
    require("claude_sidecar.chat").redraw_status()
  end)
end

--- Keep every chat's meter up to date: read it again after each turn.
function M.track()
  vim.api.nvim_create_autocmd("User", {
    group = vim.api.nvim_create_augroup("claude_sidecar_meter", { clear = true }),
    pattern = "ClaudeTurnEnded",
    callback = function(args)
      for _, chat in ipairs(require("claude_sidecar.chat").chats) do
        if chat.number == args.data.chat then
          M.update(chat)
        end
      end
    end,
  })
end

return M
