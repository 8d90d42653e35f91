--- :checkhealth claude_sidecar
local M = {}

function M.check()
  local health = vim.health
  local config = require("claude_sidecar.config").options
  health.start("claude_sidecar")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is needed", { "upgrade Neovim" })
  end

  local daemon = config.cmd[1]
  local daemon_path = vim.fn.exepath(daemon)
  if daemon_path ~= "" then
    -- The daemon command with --version instead of --stdio (works for `python -m ...` too).
    local version_cmd = vim.tbl_filter(function(arg) return arg ~= "--stdio" end, config.cmd)
    table.insert(version_cmd, "--version")
    local out = vim.system(version_cmd, { text = true }):wait(20000)
    if out.code == 0 then
      health.ok("daemon: " .. vim.trim(out.stdout or "") .. " (" .. table.concat(config.cmd, " ") .. ")")
    else
      health.error(table.concat(version_cmd, " ") .. " failed: " .. vim.trim(out.stderr or ""), {
        "check setup({ cmd = ... }): it must start claude-sidecar",
      })
    end
  else
    health.error("daemon not found: " .. daemon, {
      "install it: uv tool install /path/to/claude-sidecar (or pip install it)",
      "or point setup({ cmd = { '/path/to/claude-sidecar', '--stdio' } }) at it",
    })
  end
  local rpc = require("claude_sidecar.rpc")
  if rpc.running() then
    health.ok("daemon running, pid " .. tostring(rpc.pid()))
  else
    health.info("daemon not running (it starts with the first chat)")
  end

  local cli = config.cli_path or vim.env.CLAUDE_SIDECAR_CLI or vim.fn.exepath("claude")
  if cli and cli ~= "" and vim.fn.executable(cli) == 1 then
    local out = vim.system({ cli, "--version" }, { text = true }):wait(10000)
    health.ok("Claude Code CLI: " .. cli .. " " .. vim.trim(out.stdout or ""))
  else
    health.warn("Claude Code CLI not on PATH and no cli_path set", {
      "the daemon also finds the CLI bundled with the claude-agent-sdk Python package",
      "or set setup({ cli_path = '/path/to/claude' })",
    })
  end
end

return M
