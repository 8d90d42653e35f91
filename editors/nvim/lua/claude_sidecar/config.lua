--- Options of claude_sidecar.setup(), with their defaults.
local M = {}

---@class claude_sidecar.Config
M.defaults = {
  -- Which daemon: "private" (`claude-sidecar --stdio`, its chats end with this Neovim) or
  -- "shared" (`claude-sidecar connect`: the per-user daemon, whose chats outlive the editor;
  -- a dropped connection is made again and every chat re-attached).
  daemon = "private",
  -- The daemon command; it must speak JSON-RPC on stdin/stdout (`claude-sidecar --stdio`, or
  -- `claude-sidecar connect` with daemon = "shared", e.g. { "ssh", "devbox", "claude-sidecar", "connect" }).
  -- nil: the daemon the build step installed in this checkout (<checkout>/.venv), else
  -- `claude-sidecar` from PATH, with --stdio or connect as `daemon` says.
  cmd = nil,
  -- Extra environment for the daemon (and, through it, the CLI).
  env = nil,
  -- Path of the Claude Code CLI; nil lets the daemon look for it.
  cli_path = nil,
  -- Defaults for new chats; nil means the CLI's own default.
  model = nil,
  permission_mode = nil,
  -- Merge streamed deltas into one notification per this many ms (0: every delta).
  coalesce_ms = 16,
  -- Spare CLIs kept ready for the next chat (0 turns the warm pool off).
  warm_pool = 1,
  -- Tool names (or patterns) the daemon allows without asking.
  auto_allow_tools = {},
  -- Answer the agent's questions about the editor (diagnostics, open buffers, selection).
  editor_tools = true,
  -- Chat window: "right", "left", "below", "above" (a split) or "tab".
  layout = "right",
  width = 80,
  height = 20,
  prompt_height = 5,
  -- :Claude and :ClaudeNew leave you typing in the prompt (insert mode).
  start_insert = true,
  -- Lines of a tool result shown in the chat (the rest is folded away).
  tool_result_lines = 8,
  -- Entries of a long chat read at a time: a chat opens with its last page, and the page
  -- before is read when you go up to its top (gg, <C-b>, [[). Needs a daemon that pages
  -- (feature transcriptPaging); an older one sends the whole chat.
  page_entries = 100,
  keymaps = {
    send = "<C-s>", -- in the prompt buffer (normal and insert mode)
    interrupt = "<C-c>", -- in the chat and prompt buffers
    close = "q", -- in the chat buffer: close the window (the chat goes on)
    toggle = "<Tab>", -- in the chat buffer: all of a tool's output / open a thinking block
  },
  log_level = vim.log.levels.WARN,
  log_file = nil,
}

---@type claude_sidecar.Config
M.options = vim.deepcopy(M.defaults)

--- The checkout this plugin is part of (the plugin is its editors/nvim folder).
function M.checkout()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  -- The real path: the plugin folder is often a symlink into a pack/*/start directory.
  return vim.fn.fnamemodify(vim.uv.fs_realpath(source) or source, ":p:h:h:h:h:h")
end

--- The daemon the build step installs: <checkout>/.venv/bin/claude-sidecar.
function M.checkout_daemon()
  local bin = vim.fn.has("win32") == 1 and "/.venv/Scripts/claude-sidecar.exe" or "/.venv/bin/claude-sidecar"
  return M.checkout() .. bin
end

--- The daemon's --log-level for the plugin's log_level: it need not say what is not recorded.
local function daemon_log_level(level)
  if level <= vim.log.levels.DEBUG then
    return "DEBUG"
  end
  return ({ [vim.log.levels.INFO] = "INFO", [vim.log.levels.WARN] = "WARNING" })[level] or "ERROR"
end

--- The daemon command to run: `cmd` if set, else the checkout's daemon, else the one on PATH
--- (these two with the --log-level that matches `log_level`, and `--stdio` or, for the shared
--- daemon, `connect`).
---@return string[]
function M.daemon_cmd()
  if M.options.cmd then
    return M.options.cmd
  end
  local installed = M.checkout_daemon()
  local program = vim.fn.executable(installed) == 1 and installed or "claude-sidecar"
  local level = daemon_log_level(M.options.log_level)
  if M.shared() then
    return { program, "--log-level", level, "connect" }
  end
  return { program, "--stdio", "--log-level", level }
end

--- Whether the plugin uses the shared daemon (`daemon = "shared"`).
---@return boolean
function M.shared()
  return M.options.daemon == "shared"
end

--- Merge user options over the defaults; errors name the bad option.
---@param opts table|nil
function M.apply(opts)
  opts = opts or {}
  vim.validate("opts", opts, "table")
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  vim.validate("cmd", merged.cmd, "table", true)
  vim.validate("daemon", merged.daemon, function(v)
    return v == "private" or v == "shared"
  end, '"private" or "shared"')
  vim.validate("coalesce_ms", merged.coalesce_ms, "number")
  vim.validate("warm_pool", merged.warm_pool, "number")
  vim.validate("page_entries", merged.page_entries, function(v)
    return type(v) == "number" and v >= 1 and v == math.floor(v)
  end, "a whole number of entries, 1 or more")
  vim.validate("layout", merged.layout, function(v)
    return vim.tbl_contains({ "right", "left", "below", "above", "tab" }, v)
  end, "one of right, left, below, above, tab")
  M.options = merged
  return merged
end

return M
