-- luacheck for the Neovim client: scripts/lint.sh runs `luacheck .` from editors/nvim.
-- Neovim runs LuaJIT (Lua 5.1 plus `bit`, `jit`, `unpack`, ...).
std = "luajit"
-- `vim` is Neovim's API table: read-only, except its tables of variables and options, whose fields
-- (vim.g.x, vim.b[buf].x, vim.bo[buf].filetype, ...) are set as Neovim means them to be.
local writable = { read_only = false, other_fields = true }
read_globals = {
  vim = {
    other_fields = true,
    fields = { g = writable, b = writable, w = writable, t = writable, v = writable, env = writable,
      o = writable, go = writable, bo = writable, wo = writable, opt = writable, opt_local = writable,
      opt_global = writable },
  },
}
-- Stay with luacheck's line limit, which StyLua's column_width (stylua.toml) matches.
max_line_length = 120
-- The nvim-cmp and blink.cmp sources are objects those plugins call with `:`, so their methods take
-- `self` whether they use it or not; an unused implicit `self` is not a mistake here.
self = false
-- .toolchain/ holds the installed linters (and npm's files), not ours.
exclude_files = { ".toolchain/" }
