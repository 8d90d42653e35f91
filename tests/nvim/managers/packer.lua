--- packer.nvim as a plugin sees it, for the tests (packer cannot be installed here; it is no
--- longer maintained, its last commit is of 2023-08). Written from packer.nvim's source:
--- lua/packer.lua (config: package_root stdpath("data")/site/pack, plugin_package "packer",
--- compile_path stdpath("config")/plugin/packer_compiled.lua), lua/packer/plugin_utils.lua
--- (post_update_hook: for a start plugin, load_plugin appends install_path to the runtimepath
--- and sources its plugin/**/*.vim, then each `run` task: a function(plugin), a ":command", or a
--- shell command in install_path) and lua/packer/compile.lua (the compiled file appends
--- install_path/<rtp> to 'runtimepath', then runs each plugin's `config`, dumped as byte code).
---
--- Two steps, as with packer: install() is :PackerSync (clone, run hooks, compile) in one
--- Neovim; the next Neovim starts with packer_compiled.lua in the config's plugin/ folder.
--- Left out: lazy loading (opt plugins), `setup`, `requires`, updates, the UI.
local M = {}

local function start_dir()
  return vim.fs.joinpath(vim.fn.stdpath("data"), "site", "pack", "packer", "start")
end

--- :PackerSync of the plugins `use()`d by `startup`.
---@param startup fun(use: fun(spec: table))
function M.install(startup)
  local plugins = {}
  startup(function(spec)
    spec = type(spec) == "string" and { spec } or spec
    local short_name = spec.as or spec[1]:gsub("%.git$", ""):match("[^/]+$")
    table.insert(
      plugins,
      vim.tbl_extend("force", {}, spec, {
        short_name = short_name,
        install_path = vim.fs.joinpath(start_dir(), short_name),
      })
    )
  end)
  local compiled = {}
  for _, plugin in ipairs(plugins) do
    local done = vim.system({ "git", "clone", "--quiet", plugin[1], plugin.install_path }, { text = true }):wait()
    assert(done.code == 0, done.stderr)
    -- post_update_hook: load_plugin, then the run tasks.
    vim.o.runtimepath = vim.o.runtimepath .. "," .. plugin.install_path
    for _, file in ipairs(vim.fn.glob(plugin.install_path .. "/plugin/**/*.vim", false, true)) do
      vim.cmd.source(vim.fn.fnameescape(file))
    end
    local tasks = type(plugin.run) == "table" and plugin.run or { plugin.run }
    for _, task in ipairs(tasks) do
      if type(task) == "function" then
        task(plugin)
      elseif task:sub(1, 1) == ":" then
        vim.cmd(task:sub(2))
      else
        local out = vim.system({ vim.o.shell, "-c", task }, { cwd = plugin.install_path, text = true }):wait()
        assert(out.code == 0, out.stderr)
      end
    end
    -- compile.lua: the runtimepath line, then the config chunks.
    if plugin.rtp then
      local path = vim.fs.joinpath(plugin.install_path, plugin.rtp)
      table.insert(compiled, 1, string.format("vim.o.runtimepath = vim.o.runtimepath .. %q", "," .. path))
    end
    if plugin.config then
      table.insert(
        compiled,
        string.format("assert(loadstring(%q, %q))()", string.dump(plugin.config, true), "config " .. plugin.short_name)
      )
    end
  end
  local path = vim.fs.joinpath(vim.fn.stdpath("config"), "plugin", "packer_compiled.lua")
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  vim.fn.writefile(vim.split(table.concat(compiled, "\n"), "\n"), path)
end

return M
