-- No require cycle between the client's modules (as madge checks the VS Code client's imports).
--
-- Only requires that run as a module loads count: those outside every function body (a
-- top-level `local chat = require("claude_sidecar.chat")`, also one inside a top-level `if` or
-- `do`). A require inside a function runs when the function is called, after every module has
-- loaded: that is how Lua code breaks a cycle, so it is not one. Two modules that require each
-- other as they load fail in Lua ("loop or previous error loading module"), or, when the loop
-- goes through a module that is already loaded, one of them gets the other half-made.
--
-- The scan reads the source: `require("claude_sidecar...")`, `require "..."`, `require '...'`,
-- `require [[...]]`, not in strings or comments. It does not see a require of a computed name,
-- nor one in a function that runs at load time (a local function called at the top level); the
-- last case checks that every require that runs while a module loads is one the scan found.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h") .. "/lua"
local PREFIX = "claude_sidecar"

---@class Require
---@field name string the module required
---@field line integer where

--- Whether `name` is a module of the client.
local function ours(name)
  return name == PREFIX or name:sub(1, #PREFIX + 1) == PREFIX .. "."
end

--- Whether the last of `tokens` (a string) is the name given to Lua's require: `require "x"`,
--- `require [[x]]` or `require("x")`, not `obj.require(...)` or `obj:require(...)`.
local function required(tokens)
  local i = #tokens - 1
  if tokens[i] and tokens[i].text == "(" then
    i = i - 1
  end
  local call, before = tokens[i], tokens[i - 1]
  return call ~= nil
    and call.kind == "name"
    and call.text == "require"
    and not (before and (before.text == "." or before.text == ":"))
end

--- The requires of the client's modules that `source` runs as it loads (outside function bodies).
---@param source string Lua source
---@return Require[]
local function load_time_requires(source)
  local found = {}
  local blocks = {} -- the open blocks, innermost last: "function", "if", "do" or "repeat"
  local functions = 0 -- how many of them are function bodies
  local tokens = {} -- the last four tokens: { kind = "name"|"string"|"symbol", text = ... }
  local line, pos, n = 1, 1, #source

  --- The text of a long bracket (`[[...]]`, `[==[...]==]`) opening at `at`, and where it ends.
  local function long_bracket(at)
    local level = source:match("^%[(=*)%[", at)
    if not level then
      return nil
    end
    local close = "]" .. level .. "]"
    local stop = source:find(close, at + #level + 2, true) or n + 1
    return source:sub(at + #level + 2, stop - 1):gsub("^\n", ""), stop + #close
  end

  local function push(kind, text)
    table.insert(tokens, { kind = kind, text = text })
    if #tokens > 4 then
      table.remove(tokens, 1)
    end
    if kind == "string" and functions == 0 and ours(text) and required(tokens) then
      table.insert(found, { name = text, line = line })
    end
  end

  --- Move past source[pos .. stop - 1], counting its lines.
  local function skip_to(stop)
    local _, newlines = source:sub(pos, stop - 1):gsub("\n", "")
    line = line + newlines
    pos = stop
  end

  local opens = { ["function"] = true, ["if"] = true, ["do"] = true, ["repeat"] = true }
  while pos <= n do
    local c = source:sub(pos, pos)
    if c:match("%s") then
      skip_to(pos + 1)
    elseif source:sub(pos, pos + 1) == "--" then
      local _, after = long_bracket(pos + 2)
      skip_to(after or source:find("\n", pos, true) or n + 1)
    elseif source:match("^%[=*%[", pos) then
      local text, after = long_bracket(pos)
      push("string", text)
      skip_to(after)
    elseif c == '"' or c == "'" then
      local at, text = pos + 1, {}
      while at <= n and source:sub(at, at) ~= c do
        local ch = source:sub(at, at)
        if ch == "\\" then
          at = at + 1
          ch = ch .. source:sub(at, at)
        end
        table.insert(text, ch)
        at = at + 1
      end
      push("string", table.concat(text))
      skip_to(at + 1)
    elseif c:match("[%a_]") then
      local word = source:match("^[%w_]+", pos)
      if opens[word] then
        table.insert(blocks, word)
        functions = functions + (word == "function" and 1 or 0)
      elseif word == "end" or word == "until" then
        functions = functions - (table.remove(blocks) == "function" and 1 or 0)
      end
      push("name", word)
      pos = pos + #word
    elseif c:match("%d") then
      pos = pos + #source:match("^[%w_.]+", pos)
    else
      push("symbol", c)
      pos = pos + 1
    end
  end
  return found
end

--- Every module of the client: its name and file.
---@return {name: string, file: string}[]
local function modules()
  local out = {}
  for path, kind in vim.fs.dir(root .. "/" .. PREFIX, { depth = 20 }) do
    if kind == "file" and path:match("%.lua$") then
      local name = (PREFIX .. "/" .. path):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
      table.insert(out, { name = name, file = root .. "/" .. PREFIX .. "/" .. path })
    end
  end
  table.sort(out, function(a, b)
    return a.name < b.name
  end)
  return out
end

--- The load-time require graph of the client: module name -> the requires it runs as it loads.
---@return table<string, Require[]>
local function graph()
  local edges = {}
  for _, module in ipairs(modules()) do
    local source = table.concat(vim.fn.readfile(module.file), "\n")
    edges[module.name] = load_time_requires(source)
  end
  return edges
end

--- The cycles of a graph (name -> { {name=...}, ... }), each as the list of names around it,
--- first name repeated at the end: one per edge that closes a cycle in a depth-first walk, so
--- there are none exactly when the graph has no cycle.
---@param edges table<string, {name: string}[]>
---@return string[][]
local function cycles(edges)
  local state = {} -- nil: not seen; "open": on the walk's path; "done"
  local path = {}
  local found = {}
  local function visit(name)
    state[name] = "open"
    table.insert(path, name)
    for _, edge in ipairs(edges[name] or {}) do
      if state[edge.name] == "open" then
        local cycle = {}
        for i = #path, 1, -1 do
          table.insert(cycle, 1, path[i])
          if path[i] == edge.name then
            break
          end
        end
        table.insert(cycle, edge.name)
        table.insert(found, cycle)
      elseif not state[edge.name] then
        visit(edge.name)
      end
    end
    table.remove(path)
    state[name] = "done"
  end
  local names = vim.tbl_keys(edges)
  table.sort(names)
  for _, name in ipairs(names) do
    if not state[name] then
      visit(name)
    end
  end
  return found
end

--- "a (a.lua:3) -> b (b.lua:7) -> a" for a cycle of `edges`: where each module requires the next.
local function describe(cycle, edges)
  local parts = {}
  for i = 1, #cycle - 1 do
    local line = "?"
    for _, edge in ipairs(edges[cycle[i]] or {}) do
      if edge.name == cycle[i + 1] then
        line = tostring(edge.line)
        break
      end
    end
    table.insert(parts, string.format("%s (line %s)", cycle[i], line))
  end
  table.insert(parts, cycle[#cycle])
  return table.concat(parts, " -> ")
end

local function names(requires)
  return vim.tbl_map(function(r)
    return r.name
  end, requires)
end

--- A graph from { a = { "b" }, ... }.
local function fake(spec)
  local edges = {}
  for name, targets in pairs(spec) do
    edges[name] = vim.tbl_map(function(target)
      return { name = target, line = 1 }
    end, targets)
  end
  return edges
end

return {
  ["the client's modules require no cycle of each other as they load"] = function()
    local edges = graph()
    assert(edges["claude_sidecar.chat"] and edges["claude_sidecar"], "modules not found under " .. root)
    assert(vim.tbl_contains(names(edges["claude_sidecar.chat"]), "claude_sidecar.rpc"), "the scan found nothing")
    local found = cycles(edges)
    local lines = vim.tbl_map(function(cycle)
      return describe(cycle, edges)
    end, found)
    assert(
      #found == 0,
      "require cycle(s) at load time (each module requires the next as it loads; move one of these "
        .. "requires into the function that uses it):\n"
        .. table.concat(lines, "\n")
    )
  end,

  ["the cycle finder names every cycle, and none in a graph without one"] = function()
    assert(#cycles(fake({ a = { "b", "c" }, b = { "c" }, c = {}, d = { "a" } })) == 0)
    local found = cycles(fake({ a = { "b" }, b = { "c" }, c = { "a" }, d = { "a" } }))
    assert(vim.deep_equal(found, { { "a", "b", "c", "a" } }), vim.inspect(found))
    found = cycles(fake({ a = { "a" }, b = { "c" }, c = { "b" } }))
    assert(vim.deep_equal(found, { { "a", "a" }, { "b", "c", "b" } }), vim.inspect(found))
    local edges = fake({ x = { "y" }, y = { "x" } })
    edges.y[1].line = 4
    assert(describe(cycles(edges)[1], edges) == "x (line 1) -> y (line 4) -> x", describe(cycles(edges)[1], edges))
  end,

  ["a synthetic cycle of modules is found through their sources"] = function()
    local sources = {
      ["claude_sidecar.a"] = 'local b = require("claude_sidecar.b")\nreturn {}',
      ["claude_sidecar.b"] = 'local M = {}\nlocal c = require "claude_sidecar.c"\nreturn M',
      ["claude_sidecar.c"] = "local a = require('claude_sidecar.a').x\nreturn {}",
    }
    local edges = {}
    for name, source in pairs(sources) do
      edges[name] = load_time_requires(source)
    end
    local found = cycles(edges)
    assert(#found == 1, vim.inspect(found))
    local text = describe(found[1], edges)
    assert(
      text == "claude_sidecar.a (line 1) -> claude_sidecar.b (line 2) -> claude_sidecar.c (line 1) -> claude_sidecar.a",
      text
    )
    -- The usual way out: c requires a where it uses it.
    edges["claude_sidecar.c"] =
      load_time_requires("local M = {}\nfunction M.f() return require('claude_sidecar.a') end")
    assert(#cycles(edges) == 0)
  end,

  ["only requires that run as the module loads count"] = function()
    local source = table.concat({
      'local config = require("claude_sidecar.config")', -- 1: counted
      'local x = require "claude_sidecar.render"', -- 2: counted
      "if vim.g.x then local y = require('claude_sidecar.log') end", -- 3: counted (top-level if)
      "do local z = require([[claude_sidecar.events]]) end", -- 4: counted
      "local function f() return require('claude_sidecar.chat') end", -- 5: in a function
      "local M = { g = function() require('claude_sidecar.rpc') end }", -- 6: in a function
      "function M.h()", -- 7
      "  for i = 1, 2 do if i then while true do repeat local a = 1 until a end end end", -- 8
      "  return require('claude_sidecar.permissions')", -- 9: still in M.h
      "end", -- 10
      "-- require('claude_sidecar.files') in a comment", -- 11
      "--[[ require('claude_sidecar.images')", -- 12
      "]] local s = \"require('claude_sidecar.sessions')\"", -- 13: a string
      "local t = [==[ require('claude_sidecar.rewind') ]==]", -- 14: a string
      "local u = M.require('claude_sidecar.attach')", -- 15: not Lua's require
      "local v = require('vim.lsp')", -- 16: not the client's
      "local w = require('claude_sidecar')", -- 17: counted
      "local e = 'it\\'s' local q = require('claude_sidecar.errors')", -- 18: counted after an escape
      "return M",
    }, "\n")
    local found = load_time_requires(source)
    local got = vim.tbl_map(function(r)
      return r.name .. ":" .. r.line
    end, found)
    assert(
      vim.deep_equal(got, {
        "claude_sidecar.config:1",
        "claude_sidecar.render:2",
        "claude_sidecar.log:3",
        "claude_sidecar.events:4",
        "claude_sidecar:17",
        "claude_sidecar.errors:18",
      }),
      vim.inspect(got)
    )
  end,

  ["every require a module runs as it loads is one the scan found"] = function()
    local edges = graph()
    local loading = {} -- the modules being loaded, innermost last
    local ran = {} -- module -> the client's modules it required while loading
    local original = require
    local function tracing(name)
      local client = ours(name)
      if client and #loading > 0 then
        local by = loading[#loading]
        ran[by] = ran[by] or {}
        ran[by][name] = true
      end
      if not client or package.loaded[name] then
        return original(name)
      end
      table.insert(loading, name)
      local ok, result = pcall(original, name)
      table.remove(loading)
      if not ok then
        error(result, 0)
      end
      return result
    end
    for name in pairs(package.loaded) do
      if ours(name) then
        package.loaded[name] = nil
      end
    end
    _G.require = tracing
    local ok, err = pcall(function()
      for _, module in ipairs(modules()) do
        tracing(module.name)
      end
    end)
    _G.require = original
    assert(ok, err)
    assert(ran["claude_sidecar.chat"] and ran["claude_sidecar.chat"]["claude_sidecar.rpc"], "the trace saw nothing")
    for by, targets in pairs(ran) do
      for name in pairs(targets) do
        assert(
          vim.tbl_contains(names(edges[by] or {}), name),
          string.format("%s requires %s as it loads, and the scan did not see it", by, name)
        )
      end
    end
  end,
}
