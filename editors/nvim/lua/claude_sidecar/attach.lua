--- :ClaudeAttach: the chats running in the shared daemon (claude/listChannels), whoever started
--- them; the chosen one opens in a chat buffer here (claude/attach), or shows if it is open already.
local chat = require("claude_sidecar.chat")
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local rpc = require("claude_sidecar.rpc")

local M = {}

--- One line of the picker for a claude/listChannels item:
--- "ch-2 · ~/src/shop · running · sonnet · 2 clients: claude_sidecar.nvim, vscode".
---@param channel table
---@return string
function M.label(channel)
  local parts = { channel.channelId, vim.fn.fnamemodify(channel.cwd or "?", ":~"), channel.state or "?" }
  if channel.model then
    table.insert(parts, channel.model)
  end
  local clients = channel.clients or {}
  if #clients == 0 then
    table.insert(parts, "no client")
  else
    local names = vim.tbl_map(function(client)
      return client.clientName or client.connectionId
    end, clients)
    table.insert(
      parts,
      string.format("%d client%s: %s", #clients, #clients > 1 and "s" or "", table.concat(names, ", "))
    )
  end
  if channel.pendingPermissions then
    table.insert(parts, string.format("%d waiting for an answer", #channel.pendingPermissions))
  end
  local here = chat.for_channel(channel.channelId)
  if here then
    table.insert(parts, string.format("open here (#%d)", here.number))
  end
  return table.concat(parts, " · ")
end

local function refused(err)
  if errors.name(err) == "notShared" then
    log.notify(
      vim.log.levels.WARN,
      ':ClaudeAttach needs the shared daemon, and this daemon is private (%s); setup({ daemon = "shared" })',
      table.concat(require("claude_sidecar.config").daemon_cmd(), " ")
    )
  else
    errors.report(err)
  end
end

--- Open channel `channel` (a claude/listChannels item) here and show it.
---@param channel table
---@param done fun(c: claude_sidecar.Chat|nil)|nil
function M.open(channel, done)
  local here = chat.for_channel(channel.channelId)
  if here then
    chat.show(here)
    return done and done(here)
  end
  local c
  c = chat.attach_to(channel, function(attached, err)
    if err and errors.name(err) == "notShared" then
      chat.close(c)
      refused(err)
    end
    if done then
      done(attached)
    end
  end)
  if require("claude_sidecar.config").options.start_insert then
    chat.focus_prompt(c)
  else
    chat.show(c)
  end
end

--- List the daemon's chats in vim.ui.select and open the chosen one.
function M.pick()
  rpc.request("claude/listChannels", vim.empty_dict(), function(err, result)
    if err then
      return refused(err)
    end
    -- A daemon that does not serve attaching (a private one) says so here, not at claude/attach.
    if not require("claude_sidecar.protocol").require("attach", ":ClaudeAttach") then
      return
    end
    local channels = result.channels or {}
    if #channels == 0 then
      log.notify(vim.log.levels.INFO, "no chat is running in the shared daemon")
      return
    end
    vim.ui.select(
      channels,
      { prompt = "Attach to a running Claude chat", kind = "claude_sidecar.channel", format_item = M.label },
      function(channel)
        if channel then
          M.open(channel)
        end
      end
    )
  end)
end

return M
