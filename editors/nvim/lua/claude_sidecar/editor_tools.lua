--- The editor's own tools for the agent (claude/callEditorTool): what only Neovim knows.
local M = {}

--- The tools declared in initialize (initializationOptions.editorTools).
function M.declarations()
  return {
    {
      name = "getDiagnostics",
      description = "Errors and warnings Neovim shows (from LSP servers and linters) for one file, "
        .. "or for every loaded file when path is left out. Each has file, line (1-based), "
        .. "severity, source and message.",
      inputSchema = {
        type = "object",
        properties = {
          path = { type = "string", description = "absolute path of the file" },
        },
      },
    },
    {
      name = "getOpenEditors",
      description = "The files open in Neovim: path, whether it is the current one, and whether it "
        .. "has unsaved changes.",
    },
    {
      name = "getSelection",
      description = "The current file in Neovim, the cursor position, and the selected text of the "
        .. "last visual selection in it (lines, 1-based).",
    },
  }
end

local severity_names = { "error", "warning", "info", "hint" }

local function file_buffers()
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= "" then
      table.insert(bufs, buf)
    end
  end
  return bufs
end

--- The file window the user worked in last (not a chat or prompt window).
local function user_window()
  local wins = { vim.fn.win_getid(vim.fn.winnr("#")), vim.api.nvim_get_current_win() }
  vim.list_extend(wins, vim.api.nvim_tabpage_list_wins(0))
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_is_valid(win) then
      local buf = vim.api.nvim_win_get_buf(win)
      if vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= "" then
        return win, buf
      end
    end
  end
  return nil, nil
end

local tools = {}

function tools.getDiagnostics(args)
  local bufs = file_buffers()
  if args.path ~= nil then
    if type(args.path) ~= "string" then
      return nil, { code = -32602, message = "path must be a string (an absolute file path)" }
    end
    bufs = {}
    for _, buf in ipairs(file_buffers()) do
      if vim.api.nvim_buf_get_name(buf) == args.path then
        table.insert(bufs, buf)
      end
    end
    if #bufs == 0 then
      return nil,
        {
          code = -32602,
          message = args.path .. " is not open in Neovim; " .. "call getDiagnostics without path for every open file",
        }
    end
  end
  local out = {}
  for _, buf in ipairs(bufs) do
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(out, {
        file = vim.api.nvim_buf_get_name(buf),
        line = d.lnum + 1,
        column = d.col + 1,
        severity = severity_names[d.severity] or "error",
        source = d.source,
        message = d.message,
      })
    end
  end
  return { diagnostics = out }
end

function tools.getOpenEditors()
  local _, active = user_window()
  local out = {}
  for _, buf in ipairs(file_buffers()) do
    table.insert(
      out,
      { path = vim.api.nvim_buf_get_name(buf), current = buf == active, unsaved = vim.bo[buf].modified }
    )
  end
  return { editors = out }
end

function tools.getSelection()
  local win, buf = user_window()
  if not win or not buf then
    return { file = vim.NIL, selection = vim.NIL }
  end
  local cursor = vim.api.nvim_win_get_cursor(win)
  local result = {
    file = vim.api.nvim_buf_get_name(buf),
    cursor = { line = cursor[1], column = cursor[2] + 1 },
    selection = vim.NIL,
  }
  local from, to = vim.api.nvim_buf_get_mark(buf, "<"), vim.api.nvim_buf_get_mark(buf, ">")
  if from[1] > 0 and to[1] >= from[1] then
    result.selection = {
      startLine = from[1],
      endLine = to[1],
      text = table.concat(vim.api.nvim_buf_get_lines(buf, from[1] - 1, to[1], false), "\n"),
    }
  end
  return result
end

--- Answer claude/callEditorTool: returns result, err.
function M.call(params)
  local tool = tools[params.tool]
  if not tool then
    return nil, { code = -32601, message = "Neovim has no tool " .. tostring(params.tool) }
  end
  return tool(type(params.arguments) == "table" and params.arguments or {})
end

return M
