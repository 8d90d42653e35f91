--- :ClaudeSessions: pick a stored session of this directory and continue it.
local chat = require("claude_sidecar.chat")
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local rpc = require("claude_sidecar.rpc")

local M = {}

--- The line the picker shows for a session of claude/listSessions. A `partial` one (a long
--- session the daemon has read at its head and tail only so far) has no message count yet.
---@param session table
---@return string
function M.label(session)
  local when = (session.updatedAt or "?"):gsub("T", " "):sub(1, 16)
  local count = session.partial and "not counted yet" or string.format("%d messages", session.messageCount or 0)
  return string.format("%s  %s  (%s)", when, session.title or session.firstPrompt or "", count)
end

--- Resume session `session_id` of `cwd` in a new chat; it shows the conversation so far
--- once the channel is open (the daemon's entries of the stored session). A chat of this
--- Neovim that has the session open is shown instead: a second one would be attached to the
--- same channel, which sends its updates to one chat only.
function M.resume(session_id, cwd, done)
  for _, open in ipairs(chat.chats) do
    if open.session_id == session_id and not open.closed and (open.channel_id or open.opening) then
      log.notify(vim.log.levels.INFO, "Claude #%d has this session open", open.number)
      chat.show(open)
      return done and done(open)
    end
  end
  local c = chat.create(cwd)
  c.session_id = session_id
  chat.open_channel(c, { resume = session_id }, nil, "resumed: the conversation goes on from here")
  chat.show(c)
  if done then
    done(c)
  end
end

--- Offer the sessions stored for `cwd` (newest first) and resume the chosen one. With a daemon
--- that has the feature partialListing the list comes at once, a long session not read yet
--- without its count (the daemon reads it in the background: the next list has it); an older
--- daemon reads every file whole first.
function M.pick(cwd)
  cwd = cwd or vim.fn.getcwd()
  local function params() -- once the daemon has said what it serves
    local listed = { cwd = cwd, limit = 50 }
    if require("claude_sidecar.protocol").has("partialListing") then
      listed.allowPartial = true
    end
    return listed
  end
  rpc.request("claude/listSessions", params, function(err, page)
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
      { prompt = "Resume a Claude session", kind = "claude_sidecar.session", format_item = M.label },
      function(session)
        if session then
          M.resume(session.sessionId, cwd)
        end
      end
    )
  end)
end

return M
