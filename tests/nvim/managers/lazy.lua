--- lazy.nvim's require("lazy").setup() as a plugin sees it, for the tests (lazy.nvim cannot be
--- installed here). Written from lazy.nvim 11.17's source: lua/lazy/init.lua (setup),
--- core/config.lua (Config.setup), core/loader.lua (setup, install_missing, startup, _load,
--- add_to_rtp, packadd, source_runtime, config, loader), core/handler/cmd.lua (the stubs) and
--- manage/task/plugin.lua (build). Left out: the UI, lockfile, updates, event/ft/keys handlers,
--- dependencies, ftdetect, vim.loader's byte-code cache.
local M = {}

-- Stands in for lazy.nvim's own directory, which Config.setup puts on the reset runtimepath.
M.me = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")

---@type table[]
M.plugins = {}

--- Loader.source_runtime: every *.lua and *.vim file under `dir`, sorted.
local function source_runtime(dir)
  if vim.fn.isdirectory(dir) == 0 then
    return
  end
  local files = {}
  for name, type in vim.fs.dir(dir, { depth = math.huge }) do
    if (type == "file" or type == "link") and (name:match("%.lua$") or name:match("%.vim$")) then
      table.insert(files, dir .. "/" .. name)
    end
  end
  table.sort(files)
  for _, path in ipairs(files) do
    vim.cmd.source(vim.fn.fnameescape(path))
  end
end

--- Loader.add_to_rtp: the plugin's dir right after lazy.nvim's own, before the first after/ dir.
local function add_to_rtp(plugin)
  local rtp = vim.api.nvim_get_runtime_file("", true)
  local idx
  for i, path in ipairs(rtp) do
    if path == M.me then
      idx = i + 1
    elseif path:sub(-6) == "/after" then
      idx = idx or i
      break
    end
  end
  table.insert(rtp, idx or (#rtp + 1), plugin.dir)
  vim.opt.rtp = rtp
end

--- Plugin.values(plugin, "opts"): a table, or what a function makes of {}.
local function opts_of(plugin)
  if type(plugin.opts) == "function" then
    return plugin.opts(plugin, {}) or {}
  end
  return plugin.opts or {}
end

--- Loader._load: stubs gone (Handler.disable), dir on the rtp, its plugin/ files sourced
--- (Loader.packadd), then config(plugin, opts), or require(<main>).setup(opts) for `opts` alone.
function M.load(plugin)
  if plugin.loaded then
    return
  end
  plugin.loaded = true
  for _, name in ipairs(plugin.cmd or {}) do
    pcall(vim.api.nvim_del_user_command, name)
  end
  add_to_rtp(plugin)
  source_runtime(plugin.dir .. "/plugin")
  if type(plugin.config) == "function" then
    plugin.config(plugin, opts_of(plugin))
  elseif plugin.opts or plugin.config == true then
    require(plugin.main or plugin.name).setup(opts_of(plugin))
  end
end

--- handler/cmd.lua M:_add: a stub that loads the plugin, then runs the command again with the
--- same arguments, bang, range and modifiers.
local function add_cmd_stub(plugin, name)
  vim.api.nvim_create_user_command(name, function(event)
    local command = { cmd = name, bang = event.bang or nil, mods = event.smods, args = event.fargs }
    if event.range == 1 then
      command.range = { event.line1 }
    elseif event.range == 2 then
      command.range = { event.line1, event.line2 }
    end
    pcall(vim.api.nvim_del_user_command, name)
    M.load(plugin)
    local info = vim.api.nvim_get_commands({})[name] or vim.api.nvim_buf_get_commands(0, {})[name]
    if not info then
      error("Command `" .. name .. "` not found after loading `" .. plugin.name .. "`")
    end
    command.nargs = info.nargs
    if event.args and event.args ~= "" and info.nargs and info.nargs:find("[1?]") then
      command.args = { event.args }
    end
    vim.cmd(command)
  end, { bang = true, range = true, nargs = "*" })
end

--- manage/task/plugin.lua M.build.run: a function, a ":command", a "*.lua" file of the plugin
--- (loadfile'd and called inside Neovim) or a shell command run in the plugin's directory.
local function build(plugin)
  local builders = type(plugin.build) == "table" and plugin.build or { plugin.build }
  for _, b in ipairs(builders) do
    if type(b) == "function" then
      b(plugin)
    elseif b:sub(1, 1) == ":" then
      M.load(plugin)
      vim.cmd(b:sub(2))
    elseif b:match("%.lua$") then
      assert(loadfile(plugin.dir .. "/" .. b))()
    else
      local done = vim.system({ vim.o.shell, "-c", b }, { cwd = plugin.dir, text = true }):wait()
      assert(done.code == 0, done.stderr)
    end
  end
end

--- Loader.loader (package.loaders[3]): a module found in the lua/ folder of a plugin not loaded
--- yet loads that plugin first. Modules on the runtimepath are found before it.
local function module_loader(modname)
  local rel = modname:gsub("%.", "/")
  for _, plugin in ipairs(M.plugins) do
    if not plugin.loaded then
      for _, file in ipairs({ "/lua/" .. rel .. ".lua", "/lua/" .. rel .. "/init.lua" }) do
        if vim.uv.fs_stat(plugin.dir .. file) then
          M.load(plugin)
          return loadfile(plugin.dir .. file)
        end
      end
    end
  end
end

---@param opts table { spec = { ... } } or the list of specs
function M.setup(opts)
  local specs = opts.spec or opts
  table.insert(package.loaders, 3, module_loader)
  -- Config.setup: performance.reset_packpath, performance.rtp.reset, loadplugins off.
  vim.go.packpath = vim.env.VIMRUNTIME
  local lib = vim.fn.fnamemodify(vim.v.progpath, ":p:h:h") .. "/lib"
  lib = (vim.uv.fs_stat(lib .. "64") and (lib .. "64") or lib) .. "/nvim"
  vim.opt.rtp = {
    vim.fn.stdpath("config"),
    vim.fn.stdpath("data") .. "/site",
    M.me,
    vim.env.VIMRUNTIME,
    lib,
    vim.fn.stdpath("config") .. "/after",
  }
  vim.go.loadplugins = false

  local root = vim.fn.stdpath("data") .. "/lazy"
  for _, spec in ipairs(specs) do
    local url = spec.url or spec[1]
    local name = spec.name or (spec.dir or url):gsub("%.git$", ""):match("[^/]+$")
    local plugin = vim.tbl_extend("force", {}, spec, { name = name, dir = spec.dir or (root .. "/" .. name) })
    -- A plugin with a lazy-loading handler is lazy unless `lazy = false`.
    if plugin.lazy == nil then
      plugin.lazy = plugin.cmd ~= nil
    end
    table.insert(M.plugins, plugin)
  end

  -- Loader.install_missing: clone what is missing, then its build step.
  for _, plugin in ipairs(M.plugins) do
    if not vim.uv.fs_stat(plugin.dir) then
      local url = plugin.url or plugin[1]
      local done = vim.system({ "git", "clone", "--quiet", url, plugin.dir }, { text = true }):wait()
      assert(done.code == 0, done.stderr)
      if plugin.build then
        build(plugin)
      end
    end
  end

  -- Handler.setup: the cmd stubs.
  for _, plugin in ipairs(M.plugins) do
    for _, name in ipairs(plugin.cmd or {}) do
      add_cmd_stub(plugin, name)
    end
  end

  -- Loader.startup.
  vim.cmd.source(vim.fn.fnameescape(vim.env.VIMRUNTIME .. "/filetype.lua"))
  local rtp = vim.opt.rtp:get() -- before the init functions: what they add is not sourced below
  for _, plugin in ipairs(M.plugins) do
    if plugin.init then
      plugin.init(plugin)
    end
  end
  for _, plugin in ipairs(M.plugins) do
    if not plugin.lazy then
      M.load(plugin)
    end
  end
  for _, path in ipairs(rtp) do
    if not path:find("after/?$") then
      source_runtime(path .. "/plugin")
    end
  end
  for _, path in ipairs(vim.opt.rtp:get()) do
    if path:find("after/?$") then
      source_runtime(path .. "/plugin")
    end
  end
end

return M
