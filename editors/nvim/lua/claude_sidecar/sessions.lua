--- :ClaudeSessions: pick a stored session of this directory and continue it.
local chat = require("claude_sidecar.chat")
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local rpc = require("claude_sidecar.rpc")
local transcript = require("claude_sidecar.transcript")

local M = {}

local function label(session)
  local when = (session.updatedAt or "?"):gsub("T", " "):sub(1, 16)
  return string.format(
    "%s  %s  (%d messages)",
    when,
    session.title or session.firstPrompt or "",
    session.messageCount or 0
  )
end

--- Resume session `session_id` of `cwd` in a new chat, its history rendered first.
function M.resume(session_id, cwd, done)
  rpc.request("claude/getHistory", { sessionId = session_id, cwd = cwd }, function(err, history)
    if err then
      errors.report(err)
      return
    end
    local t = transcript.from_history(history.messages)
    transcript.marker(t, "resumed: the conversation goes on from here")
    local c = chat.create(cwd, t)
    c.session_id = session_id
    chat.refresh(c, 1)
    chat.open_channel(c, { resume = session_id })
    chat.show(c)
    if done then
      done(c)
    end
  end)
end

--- Offer the sessions stored for `cwd` (newest first) and resume the chosen one.
function M.pick(cwd)
  cwd = cwd or vim.fn.getcwd()
  rpc.request("claude/listSessions", { cwd = cwd, limit = 50 }, function(err, page)
    if err then
      errors.report(err)
      return
    end
    if #page.sessions == 0 then
      log.notify(vim.log.levels.INFO, "no stored sessions for " .. cwd)
      return
    end
    vim.ui.select(
      page.sessions,
      { prompt = "Resume a Claude session", kind = "claude_sidecar.session", format_item = label },
      function(session)
        if session then
          M.resume(session.sessionId, cwd)
        end
      end
    )
  end)
end

return M
