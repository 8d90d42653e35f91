--- vim.pack.add() of Neovim 0.12 as a plugin sees it, for the tests on Neovim 0.11 (which has no
--- vim.pack). Written from runtime/lua/vim/pack.lua and runtime/doc/pack.txt of Neovim 0.12:
--- plugins live in stdpath("data")/site/pack/core/opt/<name> (a git clone of `src`); a plugin not
--- on disk is cloned, its doc/ gets help tags, then PackChanged fires with kind "install" (data:
--- active, kind, spec, path); then each plugin is added: a `load` function is called with
--- { spec, path } and is "fully responsible for loading", else `:packadd` (`:packadd!` during
--- startup, when load defaults to false). Left out: the confirmation prompt (confirm = true
--- asks before installing), versions and the lockfile, PackChangedPre, update() and del().
local M = {}

local active = {}

-- Neovim 0.11 has no PackChanged/PackChangedPre events: autocmds created for them are kept here
-- and called as nvim_exec_autocmds calls an autocmd's callback (args.data, args.match).
local callbacks = { PackChanged = {}, PackChangedPre = {} }
local create_autocmd = vim.api.nvim_create_autocmd
-- luacheck: push ignore 122 (the emulation stands in for Neovim 0.12's API here)
vim.api.nvim_create_autocmd = function(event, opts)
  if callbacks[event] then
    table.insert(callbacks[event], opts.callback)
    return #callbacks[event]
  end
  return create_autocmd(event, opts)
end
-- luacheck: pop

local function trigger(event, kind, plug)
  local data = { active = active[plug.path] ~= nil, kind = kind, spec = vim.deepcopy(plug.spec), path = plug.path }
  for _, callback in ipairs(callbacks[event]) do
    callback({ event = event, match = plug.path, file = plug.path, data = data })
  end
end

---@param specs (string|table)[]
---@param opts table|nil { load = boolean|fun(plug_data) }
function M.add(specs, opts)
  opts = vim.tbl_extend("force", { load = vim.v.vim_did_enter == 1, confirm = true }, opts or {})
  local plug_dir = vim.fs.joinpath(vim.fn.stdpath("data"), "site", "pack", "core", "opt")
  for _, spec in ipairs(specs) do
    spec = type(spec) == "string" and { src = spec } or spec
    local name = (spec.name or spec.src:gsub("%.git$", "")):match("[^/]+$")
    local plug = {
      spec = { src = spec.src, name = name, version = spec.version, data = spec.data },
      path = vim.fs.joinpath(plug_dir, name),
    }
    if not vim.uv.fs_stat(plug.path) then
      trigger("PackChangedPre", "install", plug)
      local args = { "git", "clone", "--quiet", "--origin", "origin" }
      if vim.startswith(spec.src, "file://") then
        table.insert(args, "--no-hardlinks")
      end
      vim.list_extend(args, { spec.src, plug.path })
      local done = vim.system(args, { text = true }):wait()
      assert(done.code == 0, done.stderr)
      pcall(vim.cmd.helptags, { vim.fs.joinpath(plug.path, "doc"), magic = { file = false } })
      trigger("PackChanged", "install", plug)
    end
    if not active[plug.path] then
      active[plug.path] = true
      if vim.is_callable(opts.load) then
        opts.load({ spec = vim.deepcopy(plug.spec), path = plug.path })
      else
        vim.cmd.packadd({ name, bang = not opts.load, magic = { file = false } })
      end
    end
  end
end

return M
