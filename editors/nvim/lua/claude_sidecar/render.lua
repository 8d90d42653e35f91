--- Entries of a transcript -> buffer lines. Pure Lua (tested on its own).
local M = {}

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

--- What a tool call is about, in one short line.
function M.tool_summary(name, input)
  input = type(input) == "table" and input or {}
  local path = input.file_path or input.notebook_path
  local subject
  if type(path) == "string" then
    -- Relative to Neovim's directory, and cut from the left: the file name matters most.
    subject = vim.fn.fnamemodify(path, ":~:.")
    if #subject > 80 then
      subject = "…" .. subject:sub(-79)
    end
  else
    subject = input.command or input.pattern or input.url or input.description or input.prompt
    if subject == nil then
      local ok, json = pcall(vim.json.encode, input)
      subject = ok and json or ""
    end
    subject = tostring(subject):gsub("\n.*", " …")
    if #subject > 80 then
      subject = subject:sub(1, 77) .. "..."
    end
  end
  return string.format("%s(%s)", name or "?", subject)
end

local function seconds(ms)
  return ms and string.format("%.1f s", ms / 1000) or "?"
end

--- Lines of one entry (each entry starts with an empty separator line).
---@param entry table
---@param opts {tool_result_lines: integer}
---@return string[] lines, integer|nil fold_from first line (1-based, within these lines) to fold
function M.entry(entry, opts)
  local lines = { "" }
  local fold_from = nil
  if entry.kind == "prompt" then
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "> " .. line)
    end
  elseif entry.kind == "text" then
    vim.list_extend(lines, split(entry.text))
  elseif entry.kind == "thinking" then
    table.insert(lines, "∴ Thinking")
    fold_from = #lines + 1
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "  " .. line)
    end
  elseif entry.kind == "tool" then
    local prefix = entry.parent and "  ● " or "● "
    table.insert(lines, prefix .. M.tool_summary(entry.name, entry.input))
    if entry.result then
      local result = split(entry.result)
      local shown = math.min(#result, opts.tool_result_lines)
      for i = 1, shown do
        table.insert(lines, (i == 1 and (entry.is_error and "  ⎿ ✗ " or "  ⎿ ") or "    ") .. result[i])
      end
      if #result > shown then
        table.insert(lines, string.format("    … +%d lines", #result - shown))
      end
    end
  elseif entry.kind == "result" then
    local summary = entry.is_error and ("error: " .. (entry.text or "the turn failed"))
      or ("done in " .. seconds(entry.duration_ms))
    if entry.cost_usd then
      summary = summary .. string.format(" · $%.4f", entry.cost_usd)
    end
    table.insert(lines, "─── " .. summary .. " ───")
  elseif entry.kind == "permission" then
    local head = ("? " .. entry.tool .. " — " .. entry.text):gsub("\n", " ")
    table.insert(lines, head)
    if entry.preview then
      for _, line in ipairs(split(entry.preview)) do
        if line ~= "" then
          table.insert(lines, "    " .. line)
        end
      end
    end
  elseif entry.kind == "file" then
    table.insert(lines, string.format("✎ %s%s", entry.path, entry.stats or ""))
  elseif entry.kind == "notice" then
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "⚠ " .. line)
    end
  end
  return lines, fold_from
end

return M
