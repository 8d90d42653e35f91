--- The context meter: how full each chat's context window is (the daemon's reading, from
--- the channel's info when it opens and from each claude/turnEnded) and what the chat has
--- cost, for the statusline and the chat's winbar.
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

--- A chat's meter from the daemon's `context` object (nil: none known yet).
---@param context {percentage: number, totalTokens: integer, maxTokens: integer}|nil
---@return {percentage: number, total_tokens: integer, max_tokens: integer}|nil
function M.reading(context)
  if not context then
    return nil
  end
  return { percentage = context.percentage, total_tokens = context.totalTokens, max_tokens = context.maxTokens }
end

return M
