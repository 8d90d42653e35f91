--- The version handshake with the daemon (docs/protocol.md, "Versions: the handshake"): the claude/*
--- protocol this plugin speaks, the message when plugin and daemon are too far apart, and the optional
--- features the daemon lists, so that a command it does not serve says so instead of failing.
local M = {}

--- The claude/* protocol this plugin speaks. tests/nvim checks it against docs/protocol.schema.json's
--- x-protocolVersion: raise both together, only on a breaking change.
M.VERSION = 1
--- The oldest daemon protocol this plugin works with.
M.OLDEST = 1
M.CLIENT = "claude_sidecar.nvim"
--- The release this plugin is part of (release/versions.py keeps it pyproject.toml's): the daemon
--- logs it, and names it in a protocolMismatch.
M.CLIENT_VERSION = "0.2.0"

--- What to do when the daemon is older than this plugin and does not say how it was installed.
local UPGRADE_DAEMON = "upgrade claude-sidecar (`uv tool upgrade claude-sidecar`, `pipx upgrade claude-sidecar`,"
  .. " or `git pull` in its checkout), then restart Neovim"

--- `initializationOptions.protocol`.
---@return table
function M.options()
  return { version = M.VERSION, oldest = M.OLDEST, client = { name = M.CLIENT, version = M.CLIENT_VERSION } }
end

--- The message for an `initialize` error that says plugin and daemon do not fit (nil for any other
--- error): the daemon's protocolMismatch (its message names the side to upgrade and the command),
--- or the invalidParams of a daemon from before the handshake, which refuses the `protocol` option.
---@param err table|string|nil
---@return string|nil
function M.mismatch(err)
  if type(err) ~= "table" or type(err.data) ~= "table" then
    return nil
  end
  if err.data.name == "protocolMismatch" then
    return err.message
  end
  if err.data.name == "invalidParams" and err.data.field == "initializationOptions.protocol" then
    return string.format(
      "this claude-sidecar daemon is older than the plugin (it knows no protocol version; the plugin"
        .. " speaks protocol %d): %s",
      M.VERSION,
      UPGRADE_DAEMON
    )
  end
  return nil
end

--- Whether the running daemon serves `feature` on this connection (`features` of its initialize
--- answer; `server` as rpc.describe_initialize gives it, default the running daemon's).
---@param feature string
---@param server table|nil
---@return boolean
function M.has(feature, server)
  server = server or require("claude_sidecar.rpc").server()
  return server ~= nil and vim.tbl_contains(server.features or {}, feature)
end

--- Whether `command` may go on: true when the running daemon serves `feature`; otherwise tells the
--- user that this daemon does not, and false.
---@param feature string
---@param command string e.g. ":ClaudeAttach"
---@param server table|nil
---@return boolean
function M.require(feature, command, server)
  server = server or require("claude_sidecar.rpc").server()
  if M.has(feature, server) then
    return true
  end
  require("claude_sidecar.log").notify(
    vim.log.levels.WARN,
    "%s is not available: this claude-sidecar daemon (%s) does not serve %q%s",
    command,
    server and server.version or "not running",
    feature,
    feature == "attach" and " (a private daemon serves one editor; `claude-sidecar connect` reaches the shared one)"
      or ""
  )
  return false
end

return M
