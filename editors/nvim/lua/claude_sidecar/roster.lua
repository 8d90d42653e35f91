--- Every chat of the daemon, as claude/watchChannels gives them and claude/channelsChanged keeps
--- them current (feature watchChannels): what :ClaudeAgents lists, and how a chat of another
--- editor that waits for a permission is told of.
---
--- The watch is held while something needs it: the :ClaudeAgents buffer ("list"), and with the
--- shared daemon the alerts ("alerts", from the connection's start: only changes come, and there
--- chats of other editors can wait for the user). With the private daemon every chat is this
--- Neovim's, whose own picker asks its permissions: it watches only while the list is open.
local log = require("claude_sidecar.log")
local rpc = require("claude_sidecar.rpc")

local M = {}

local channels = {} ---@type table<string, table> claude/listChannels items by channelId
local holders = {} ---@type table<string, boolean> what needs the watch
local watching = false -- the daemon sends claude/channelsChanged to this connection
local asking = 0 -- claude/watchChannels requests not answered yet
local listeners = {} ---@type fun()[]
local alerted = {} ---@type table<string, boolean> the pending requests told of, by requestId
-- Whether the list shows the chats to the user now (then a waiting chat needs no message).
local in_sight = function()
  return false
end

--- The chats as last told, in no order.
---@return table[]
function M.channels()
  return vim.tbl_values(channels)
end

--- Whether the daemon keeps this Neovim's copy of its chats current.
function M.watching()
  return watching
end

--- Whether a claude/watchChannels is on its way (the chats are being read).
function M.reading()
  return asking > 0
end

--- Whether `name` holds the watch.
function M.holds(name)
  return holders[name] == true
end

--- Be told after each change of the chats (and when the daemon or the watch is gone).
---@param listener fun()
function M.on_change(listener)
  table.insert(listeners, listener)
end

--- `fn()` says whether the user sees the chats' list now.
function M.set_in_sight(fn)
  in_sight = fn
end

local function changed()
  for _, listener in ipairs(listeners) do
    local ok, err = pcall(listener)
    if not ok then
      log.error("after the chats changed: %s", err)
    end
  end
end

--- A chat of another editor (or none) started waiting for a permission: tell the user once per
--- request. This Neovim's own chats ask in its picker already.
local function alert()
  local chat = require("claude_sidecar.chat")
  local pending = {}
  for _, channel in pairs(channels) do
    for _, request in ipairs(channel.pendingPermissions or {}) do
      local id = request.requestId
      pending[id] = true
      if not alerted[id] and not chat.for_channel(channel.channelId) and not in_sight() then
        log.notify(
          vim.log.levels.INFO,
          "Claude in %s waits for your answer: %s (:ClaudeAgents goes there)",
          vim.fn.fnamemodify(channel.cwd or "?", ":~"),
          require("claude_sidecar.render").tool_summary(request.toolName, request.input)
        )
      end
    end
  end
  -- Only those still pending are kept (a request is asked once).
  alerted = pending
end

local function take(list)
  channels = {}
  for _, channel in ipairs(list or {}) do
    channels[channel.channelId] = channel
  end
  alert()
  changed()
end

--- Ask the daemon for every chat and to keep telling (again while watching: the list afresh).
--- `done(err)` once answered.
---@param done fun(err: table|nil)|nil
function M.refresh(done)
  asking = asking + 1
  rpc.request("claude/watchChannels", vim.empty_dict(), function(err, result)
    asking = asking - 1
    if err then
      return done and done(err)
    end
    if next(holders) == nil then
      return done and done(nil) -- released meanwhile (its watch: false follows)
    end
    watching = true
    take(result.channels)
    if done then
      done(nil)
    end
  end)
end

--- `name` needs the watch: it starts unless it runs (the daemon must serve watchChannels).
---@param name string
---@param done fun(err: table|nil)|nil
function M.hold(name, done)
  local first = next(holders) == nil
  holders[name] = true
  if first or not watching then
    return M.refresh(done)
  end
  if done then
    done(nil)
  end
end

--- `name` no longer needs the watch; the last one stops it (claude/watchChannels watch: false).
---@param name string
function M.release(name)
  holders[name] = nil
  if next(holders) ~= nil or not (watching or asking > 0) then
    return
  end
  watching = false
  channels = {}
  -- After a watch still unanswered too: the daemon takes them in order.
  if rpc.running() then
    rpc.request("claude/watchChannels", { watch = false }, function() end)
  end
end

--- A change told by the daemon: chats replaced by channelId, the closed ones dropped.
---@param params table claude/channelsChanged params
function M.channels_changed(params)
  if not watching then
    return -- sent before the daemon took this connection's watch: false
  end
  for _, channel in ipairs(params.channels or {}) do
    channels[channel.channelId] = channel
  end
  for _, id in ipairs(params.closed or {}) do
    channels[id] = nil
  end
  alert()
  changed()
end

--- A connection to the daemon is initialized (it is new: nothing is watched on it yet). With the
--- shared daemon the alerts start now; whatever else holds the watch takes it again.
function M.connected()
  watching = false
  local protocol = require("claude_sidecar.protocol")
  if not protocol.has("watchChannels") then
    return
  end
  if require("claude_sidecar.config").shared() then
    holders.alerts = true
  end
  if next(holders) ~= nil then
    M.refresh()
  end
end

--- The connection is gone (the daemon exited, or the shared daemon's connection dropped).
function M.disconnected()
  watching = false
  channels = {}
  changed()
end

return M
