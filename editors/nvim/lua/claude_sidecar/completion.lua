--- Completion in the prompt buffer: `@` mentions of files (relative to the chat's directory),
--- open buffers and agents (`@agent-<name>`, as the CLI spells them), and `/` slash commands
--- at the start of a prompt. One engine, three front ends: 'completefunc' (<C-x><C-u>, set on
--- every prompt buffer), nvim-cmp (claude_sidecar.completion.cmp) and blink.cmp
--- (claude_sidecar.completion.blink).
local M = {}

--- At most this many candidates are offered (and files scanned without git).
local MAX_ITEMS = 200
local MAX_SCAN = 5000
local SKIP_DIRS = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true }

---@class claude_sidecar.Candidate
---@field word string what is inserted (with its `@` or `/`)
---@field kind "file"|"buffer"|"agent"|"command"
---@field detail string one line shown next to it (may be "")

---@class claude_sidecar.CompletionSource
---@field cwd string the chat's directory (`@` file names are relative to it)
---@field info table|nil the chat's `info` (its `commands` and `agents`)
---@field files (fun(cwd: string): string[])|nil the files to offer (default: M.files)
---@field buffers (fun(cwd: string): string[])|nil the buffers to offer (default: M.buffers)

local file_cache = {} ---@type table<string, {at: integer, files: string[]}>

--- The files under `cwd`, relative to it: git's (tracked and untracked, not ignored), else a
--- bounded walk. Cached for a few seconds, since a menu asks again at every key.
---@param cwd string
---@return string[]
function M.files(cwd)
  local cached = file_cache[cwd]
  if cached and vim.uv.now() - cached.at < 5000 then
    return cached.files
  end
  local files = {}
  local ok, done = pcall(function()
    return vim
      .system({ "git", "ls-files", "--cached", "--others", "--exclude-standard" }, { cwd = cwd, text = true })
      :wait(2000)
  end)
  if ok and done.code == 0 then
    for line in done.stdout:gmatch("[^\n]+") do
      table.insert(files, line)
      if #files >= MAX_SCAN then
        break
      end
    end
  else
    for name, type in
      vim.fs.dir(cwd, {
        depth = 8,
        skip = function(dir)
          return not SKIP_DIRS[vim.fs.basename(dir)]
        end,
      })
    do
      if type == "file" then
        table.insert(files, name)
        if #files >= MAX_SCAN then
          break
        end
      end
    end
  end
  table.sort(files)
  file_cache[cwd] = { at = vim.uv.now(), files = files }
  return files
end

--- The listed buffers with a file, as paths relative to `cwd` when inside it.
---@param cwd string
---@return string[]
function M.buffers(cwd)
  local out = {}
  local root = vim.fs.normalize(cwd) .. "/"
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.bo[buf].buflisted and vim.bo[buf].buftype == "" and name ~= "" then
      name = vim.fs.normalize(name)
      table.insert(out, vim.startswith(name, root) and name:sub(#root + 1) or vim.fn.fnamemodify(name, ":~"))
    end
  end
  return out
end

--- Where the word being completed starts (0-based byte column) and what it is, for the text
--- `before` the cursor on prompt line `lnum`; nil when it is no mention and no slash command.
---@param before string
---@param lnum integer 1-based
---@return integer|nil start, string|nil word
function M.word_at(before, lnum)
  local start = before:find("[@/][^%s]*$")
  if not start then
    return nil
  end
  local word = before:sub(start)
  if word:sub(1, 1) == "@" then
    -- A mention starts a word (not an e-mail address).
    if start > 1 and not before:sub(start - 1, start - 1):match("%s") then
      return nil
    end
    return start - 1, word
  end
  -- The CLI runs a slash command only at the very start of a message.
  if lnum == 1 and start == 1 then
    return 0, word
  end
  return nil
end

--- How well `candidate` matches `query` (case-insensitive): 3 prefix, 2 a path part's prefix,
--- 1 substring; 0 no match.
local function score(candidate, query)
  if query == "" then
    return 1
  end
  local c, q = candidate:lower(), query:lower()
  if vim.startswith(c, q) then
    return 3
  end
  local at = c:find(q, 1, true)
  if not at then
    return 0
  end
  return c:sub(at - 1, at - 1):match("[/%._%-]") and 2 or 1
end

--- The candidates for `word` (starting with `@` or `/`), best first.
---@param word string
---@param source claude_sidecar.CompletionSource
---@return claude_sidecar.Candidate[]
function M.candidates(word, source)
  local query = word:sub(2)
  local found = {} ---@type {c: claude_sidecar.Candidate, score: integer, order: integer}[]
  local seen = {}
  local function add(text, kind, detail)
    local s = score(text, query)
    if s > 0 and not seen[word:sub(1, 1) .. text] then
      seen[word:sub(1, 1) .. text] = true
      table.insert(
        found,
        { c = { word = word:sub(1, 1) .. text, kind = kind, detail = detail or "" }, score = s, order = #found }
      )
    end
  end
  local info = source.info or {}
  if word:sub(1, 1) == "/" then
    for _, cmd in ipairs(info.commands or {}) do
      add(cmd.name, "command", cmd.description)
      for _, alias in ipairs(cmd.aliases or {}) do
        add(alias, "command", "alias of /" .. cmd.name)
      end
    end
  else
    for _, name in ipairs((source.buffers or M.buffers)(source.cwd)) do
      add(name, "buffer", "buffer")
    end
    for _, agent in ipairs(info.agents or {}) do
      add("agent-" .. agent.name, "agent", agent.description)
    end
    for _, name in ipairs((source.files or M.files)(source.cwd)) do
      add(name, "file", "")
    end
  end
  table.sort(found, function(a, b)
    if a.score ~= b.score then
      return a.score > b.score
    end
    return a.order < b.order
  end)
  local out = {}
  for i = 1, math.min(#found, MAX_ITEMS) do
    out[i] = found[i].c
  end
  return out
end

--- The chat of prompt buffer `buf` as a completion source (nil for any other buffer).
---@param buf integer
---@return claude_sidecar.CompletionSource|nil
function M.source_for(buf)
  local chat = package.loaded["claude_sidecar.chat"]
  local c = chat and chat.for_buffer(buf)
  if not c or c.prompt_buf ~= buf then
    return nil
  end
  return { cwd = c.cwd, info = c.info }
end

--- What the prompt in `buf` asks to complete with the cursor at (1-based `lnum`, 0-based byte
--- `col`): the 0-based start column and the candidates; nil when nothing.
---@return integer|nil start, claude_sidecar.Candidate[]|nil candidates
function M.complete_at(buf, lnum, col)
  local source = M.source_for(buf)
  if not source then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1] or ""
  local start, word = M.word_at(line:sub(1, col), lnum)
  if not start then
    return nil
  end
  return start, M.candidates(word, source)
end

local MENU_KIND = { file = "f", buffer = "b", agent = "a", command = "/" }

--- 'completefunc' of the prompt buffers (<C-x><C-u>).
function M.completefunc(findstart, base)
  local buf = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  if findstart == 1 then
    local start = M.complete_at(buf, cursor[1], cursor[2])
    -- -3: no completion, and no error message.
    return start or -3
  end
  local source = M.source_for(buf)
  if not source then
    return {}
  end
  local items = {}
  for _, c in ipairs(M.candidates(base, source)) do
    table.insert(items, {
      word = c.word,
      kind = MENU_KIND[c.kind],
      menu = c.detail:gsub("\n.*", ""):sub(1, 60),
      info = c.detail ~= "" and c.detail or nil,
      icase = 1,
    })
  end
  return items
end

--- LSP CompletionItemKind of each candidate kind (what nvim-cmp and blink.cmp show).
M.LSP_KIND = { file = 17, buffer = 17, agent = 7, command = 3 }

--- The candidates at the cursor as LSP completion items replacing the whole `@...`/`/...` word,
--- for the nvim-cmp and blink.cmp sources.
---@param buf integer
---@param row integer 0-based
---@param col integer 0-based byte column of the cursor
---@return table[] items
function M.lsp_items(buf, row, col)
  local start, candidates = M.complete_at(buf, row + 1, col)
  if not start then
    return {}
  end
  local items = {}
  for _, c in ipairs(candidates) do
    table.insert(items, {
      label = c.word,
      filterText = c.word,
      kind = M.LSP_KIND[c.kind],
      detail = c.detail ~= "" and c.detail or nil,
      textEdit = {
        newText = c.word,
        range = {
          start = { line = row, character = start },
          ["end"] = { line = row, character = col },
        },
      },
    })
  end
  return items
end

return M
