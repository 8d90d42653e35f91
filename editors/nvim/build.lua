--- The build step: install the daemon of this checkout into <checkout>/.venv (where the
--- plugin looks for it first) and make the :help tags.
---
--- lazy.nvim runs it as `build = "editors/nvim/build.lua"`; by hand: `nvim -l editors/nvim/build.lua`.
--- It runs `uv sync --no-dev --frozen` (the locked versions) with uv from PATH, else with the uv
--- the checkout's bootstrap.py gets; when neither can be had, it makes the venv with python3
--- (3.11 or newer) and `pip install`s the checkout. Each needs the dependencies from PyPI or
--- from uv's/pip's cache.

local script = debug.getinfo(1, "S").source:gsub("^@", "")
local plugin = vim.fn.fnamemodify(script, ":p:h")
local checkout = vim.fn.fnamemodify(plugin, ":h:h")

local function say(text)
  -- print: stdout under `nvim -l`, a message when lazy.nvim runs it inside Neovim.
  print("claude_sidecar build: " .. text)
end

local function run(cmd)
  say(table.concat(cmd, " "))
  local out = vim.system(cmd, { cwd = checkout, text = true }):wait()
  if out.code ~= 0 then
    error(
      string.format(
        "claude_sidecar build: `%s` failed (exit %d):\n%s%s",
        table.concat(cmd, " "),
        out.code,
        out.stdout or "",
        out.stderr or ""
      ),
      0
    )
  end
end

--- The first python3 of at least 3.11 on PATH.
local function python()
  for _, name in ipairs({ "python3", "python3.13", "python3.12", "python3.11", "python" }) do
    if vim.fn.executable(name) == 1 then
      local out = vim.system({ name, "-c", "import sys; print(sys.version_info >= (3, 11))" }, { text = true }):wait()
      if out.code == 0 and vim.trim(out.stdout) == "True" then
        return name
      end
    end
  end
  error("claude_sidecar build: needs uv, or Python 3.11 or newer (python3) on PATH", 0)
end

--- uv: the one on PATH, else the one the checkout's bootstrap.py gets (any python3 runs it; it
--- downloads the pinned uv into <checkout>/.bootstrap and writes nothing into that Python).
local function uv()
  if vim.fn.executable("uv") == 1 then
    return "uv"
  end
  for _, name in ipairs({ "python3", "python" }) do
    if vim.fn.executable(name) == 1 then
      local out = vim.system({ name, checkout .. "/bootstrap.py", "--uv" }, { text = true }):wait()
      local path = vim.trim(out.stdout or "")
      if out.code == 0 and vim.fn.executable(path) == 1 then
        return path
      end
      say("bootstrap.py found no uv: " .. vim.trim(out.stderr or ""))
    end
  end
end

local uv_path = uv()
if uv_path then
  run({ uv_path, "sync", "--no-dev", "--frozen", "--project", checkout })
else
  local venv = checkout .. "/.venv"
  run({ python(), "-m", "venv", venv })
  local pip = vim.fn.has("win32") == 1 and (venv .. "/Scripts/pip") or (venv .. "/bin/pip")
  run({ pip, "install", "--upgrade", checkout })
end
local daemon = checkout
  .. (vim.fn.has("win32") == 1 and "/.venv/Scripts/claude-sidecar.exe" or "/.venv/bin/claude-sidecar")
run({ daemon, "--version" })
vim.cmd.helptags(vim.fn.fnameescape(plugin .. "/doc"))
say("done: the plugin runs " .. daemon)
