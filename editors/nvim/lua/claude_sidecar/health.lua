--- :checkhealth claude_sidecar — what the daemon says about itself and the CLI it will run.
local M = {}

local PROBE_TIMEOUT_MS = 30000
-- The doctor's own hang guard for `claude auth status` is 25 s, after its Python start.
local DOCTOR_TIMEOUT_MS = 60000

--- Start `cmd` once, ask it `initialize` (no warm pool: nothing is spawned) and shut it down.
---@return table|nil server as rpc.describe_initialize gives it
---@return string|nil error
local function probe(cmd)
  local config = require("claude_sidecar.config").options
  local answer, failure, exited = nil, nil, false
  local stderr = {}
  local ok, connection = pcall(require("claude_sidecar.connection").start, cmd, { env = config.env }, {
    notification = function() end,
    request = function()
      return nil, { code = -32601, message = "health check" }
    end,
    stderr = function(line)
      table.insert(stderr, line)
    end,
    exit = function()
      exited = true
    end,
    error = function(message)
      failure = message
    end,
  })
  if not ok then
    return nil, tostring(connection)
  end
  local protocol = require("claude_sidecar.protocol")
  local options = { clientName = "claude_sidecar.nvim health", warmPool = { size = 0 }, protocol = protocol.options() }
  if config.cli_path then
    options.cliPath = config.cli_path
  end
  connection.request("initialize", {
    processId = vim.fn.getpid(),
    capabilities = vim.empty_dict(),
    initializationOptions = options,
  }, function(err, result)
    if err then
      failure = protocol.mismatch(err) or require("claude_sidecar.errors").describe(err)
    else
      answer = result
    end
  end)
  vim.wait(PROBE_TIMEOUT_MS, function()
    return answer ~= nil or failure ~= nil or exited
  end, 20)
  if not exited then
    local done = false
    connection.request("shutdown", vim.NIL, function()
      done = true
    end)
    vim.wait(3000, function()
      return done
    end, 10)
    connection.notify("exit", vim.NIL)
    vim.wait(2000, function()
      return connection.is_closing()
    end, 10)
    connection.terminate()
  end
  if answer then
    return require("claude_sidecar.rpc").describe_initialize(answer), nil
  end
  local tail = table.concat(vim.list_slice(stderr, math.max(1, #stderr - 5)), "\n")
  return nil,
    (failure or (exited and "it exited" or "no answer to initialize in 30 s")) .. (tail ~= "" and ("\n" .. tail) or "")
end

--- `claude-sidecar doctor --json` through the same daemon command: how the CLI authenticates.
---@return table|nil report DoctorReport (docs/protocol.md)
---@return string|nil error
local function doctor(cmd)
  local config = require("claude_sidecar.config").options
  -- The daemon command without --stdio, or up to `connect` (whose options doctor does not take):
  -- `ssh devbox claude-sidecar connect` asks the remote daemon's doctor.
  local argv = {}
  for _, arg in ipairs(cmd) do
    if arg == "connect" then
      break
    end
    if arg ~= "--stdio" then
      table.insert(argv, arg)
    end
  end
  vim.list_extend(argv, { "doctor", "--json" })
  if config.cli_path then
    vim.list_extend(argv, { "--cli", config.cli_path })
  end
  local ok, job = pcall(vim.system, argv, { text = true, env = config.env })
  if not ok then
    return nil, tostring(job)
  end
  local done = job:wait(DOCTOR_TIMEOUT_MS)
  local decoded, report = pcall(vim.json.decode, done.stdout or "")
  if not decoded or type(report) ~= "table" then
    return nil,
      string.format(
        "`%s` gave no report (exit %s): %s",
        table.concat(argv, " "),
        tostring(done.code),
        vim.trim(done.stderr or ""):sub(1, 200)
      )
  end
  return report, nil
end

function M.check()
  local health = vim.health
  local config = require("claude_sidecar.config")
  local rpc = require("claude_sidecar.rpc")
  health.start("claude_sidecar")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.11 or newer is needed", { "upgrade Neovim" })
  end
  if not require("claude_sidecar").is_setup() then
    -- lazy.nvim's `config` (setup with the spec's opts) runs at the first command.
    health.info("setup() has not run yet: the default options are checked")
  end

  local cmd = config.daemon_cmd()
  local shown = table.concat(cmd, " ")
  local where = config.options.cmd and "setup({ cmd })"
    or (cmd[1] == config.checkout_daemon() and "installed by the build step" or "from PATH")
  local path = vim.fn.exepath(cmd[1])
  if path == "" then
    health.error(string.format("daemon command `%s` (%s): not found", shown, where), {
      "run the build step: nvim -l " .. config.checkout() .. "/editors/nvim/build.lua",
      "or pip install /path/to/claude-sidecar (claude-sidecar on PATH)",
      "or point require('claude_sidecar').setup({ cmd = { '/path/to/claude-sidecar', '--stdio' } }) at it",
    })
    return
  end
  local resolved = path == cmd[1] and "" or (": " .. path)
  health.ok(string.format("daemon command: %s (%s%s)", shown, where, resolved))
  if config.shared() then
    health.info('daemon = "shared": the per-user daemon; chats outlive Neovim (:help claude_sidecar-shared)')
  end

  local server, err = rpc.server(), nil
  if server then
    health.ok("daemon running, pid " .. tostring(rpc.pid()))
  else
    health.info("daemon not running (it starts with the first chat); asked a short-lived one")
    server, err = probe(cmd)
  end
  if not server then
    health.error("the daemon did not answer: " .. tostring(err), {
      "check require('claude_sidecar').setup({ cmd = ... }): it must run `claude-sidecar --stdio`",
    })
    return
  end
  health.ok(string.format("daemon version: %s %s", server.name or "?", server.version or "?"))
  if require("claude_sidecar.protocol").has("watchChannels", server) then
    health.ok(":ClaudeAgents: every chat of the daemon in one list (<CR> open, d/m/x review/merge/discard)")
  else
    health.warn(":ClaudeAgents is not available: this daemon does not serve the feature watchChannels", {
      "upgrade claude-sidecar (the build step again, or `uv tool upgrade claude-sidecar`)",
    })
  end

  local cli = server.cli
  if cli.path and not cli.error then
    local found = cli.source and (", found via " .. cli.source) or ""
    health.ok(string.format("Claude Code CLI the daemon runs: %s (version %s%s)", cli.path, cli.version or "?", found))
    if cli.tested == false then
      health.warn(
        string.format(
          "CLI %s is not a version the daemon is tested with (%s)",
          cli.version,
          table.concat(cli.tested_versions, ", ")
        ),
        {
          "it may work; if something breaks, use the CLI bundled with the daemon: unset "
            .. "$CLAUDE_SIDECAR_CLI and cli_path, or put it first on PATH",
        }
      )
    end
  elseif cli.path then
    health.warn(string.format("Claude Code CLI: %s: %s", cli.path, cli.error))
  else
    health.error("Claude Code CLI: " .. (cli.error or "not found"), {
      "install it (npm install -g @anthropic-ai/claude-code), or the claude-agent-sdk Python package",
      "or set require('claude_sidecar').setup({ cli_path = '/path/to/claude' })",
    })
  end

  local report, doctor_err = doctor(cmd)
  if not report then
    health.warn("could not ask `claude-sidecar doctor` how the CLI authenticates: " .. tostring(doctor_err))
  else
    local auth = type(report.auth) == "table" and report.auth or {}
    local base_url = type(auth.baseUrl) == "string" and (", API at " .. auth.baseUrl) or ""
    if auth.loggedIn == true then
      local source = type(auth.source) == "string" and (" from " .. auth.source) or ""
      health.ok(string.format("CLI authentication: %s%s%s", tostring(auth.method), source, base_url))
    elseif auth.loggedIn == false then
      -- The doctor's fix names the commands this user has (`claude-sidecar login`, and
      -- `claude auth login` only when `claude` is on PATH).
      local advice = {}
      for _, problem in ipairs(type(report.problems) == "table" and report.problems or {}) do
        local fix = type(problem) == "string" and problem:match("^the CLI has no credentials: (.*)$")
        if fix then
          table.insert(advice, fix)
        end
      end
      table.insert(advice, "an API key can also come from setup({ env = { ANTHROPIC_API_KEY = ... } })")
      health.error("the CLI has no credentials" .. base_url, advice)
    else
      health.warn("CLI authentication unknown: " .. tostring(auth.error))
    end
    if type(report.configDir) == "string" then
      health.info("CLI config and sessions: " .. report.configDir)
    end
  end

  local log_file = config.options.log_file
  if log_file then
    health.info("log file: " .. log_file)
  else
    health.info("no log_file: warnings and errors (the daemon's too) are shown as messages, one line each")
    local recent = require("claude_sidecar.log").recent()
    if #recent > 0 then
      health.info("the last of them, whole:\n" .. table.concat(recent, "\n"))
    end
  end
end

return M
