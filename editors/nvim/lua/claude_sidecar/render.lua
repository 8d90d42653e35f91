--- Entries of a transcript -> buffer lines. Pure Lua (tested on its own).
local M = {}

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

--- What a tool call is about, in one short line.
function M.tool_summary(name, input)
  input = type(input) == "table" and input or {}
  if name == "AskUserQuestion" and type(input.questions) == "table" then
    local first = input.questions[1]
    local text = type(first) == "table" and first.question or "?"
    local more = #input.questions > 1 and string.format(" (+%d more)", #input.questions - 1) or ""
    return "Question(" .. tostring(text):gsub("\n", " ") .. more .. ")"
  elseif name == "ExitPlanMode" then
    return "Plan(ready for your approval)"
  end
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

--- The turn's end line: how it ended, how long it took (and how much of that was spent
--- waiting for the user's permission answers), what it cost.
function M.turn_summary(entry)
  local took = seconds(entry.duration_ms)
  if (entry.permission_wait_ms or 0) > 0 then
    took = string.format("%s (%s waiting for permission)", took, seconds(entry.permission_wait_ms))
  end
  local outcome = entry.outcome or (entry.is_error and "error" or "success")
  local summary
  if outcome == "success" then
    summary = "done in " .. took
  elseif outcome == "interrupted" then
    summary = "interrupted after " .. took
  elseif outcome == "maxTurns" then
    summary = "stopped after " .. took .. ": too many model calls (maxTurns)"
  elseif outcome == "maxBudget" then
    summary = "stopped after " .. took .. ": the budget is spent (maxBudget)"
  else
    summary = "error: " .. (entry.text or "the turn failed"):gsub("\n", " ")
  end
  if entry.cost_usd and entry.cost_usd > 0 then
    summary = summary .. string.format(" · $%.4f", entry.cost_usd)
  end
  return summary
end

--- A diff's lines, with the absolute paths of its ---/+++ headers made relative.
local function diff_lines(diff)
  local lines = {}
  for _, line in ipairs(split(diff)) do
    local mark, path = line:match("^([-+][-+][-+]) (/.*)$")
    if mark then
      line = mark .. " " .. vim.fn.fnamemodify(path, ":~:.")
    end
    if line ~= "" then
      table.insert(lines, line)
    end
  end
  return lines
end
M.diff_lines = diff_lines

--- The questions of an AskUserQuestion input, each with its options and their descriptions.
function M.question_lines(input)
  local lines = {}
  for _, q in ipairs(type(input) == "table" and type(input.questions) == "table" and input.questions or {}) do
    if type(q) == "table" then
      table.insert(
        lines,
        string.format("%s%s", q.header and ("[" .. q.header .. "] ") or "", tostring(q.question or "?"):gsub("\n", " "))
          .. (q.multiSelect and " (choose any)" or "")
      )
      for _, option in ipairs(type(q.options) == "table" and q.options or {}) do
        local description = option.description and option.description ~= "" and (" — " .. option.description) or ""
        table.insert(lines, "  • " .. tostring(option.label) .. description)
      end
    end
  end
  return lines
end

--- The body shown with a permission request: the edit's diff, the plan, or the questions.
function M.permission_body(entry)
  local input = type(entry.input) == "table" and entry.input or {}
  if entry.name == "ExitPlanMode" and type(input.plan) == "string" then
    return split(input.plan), "markdown"
  elseif entry.name == "AskUserQuestion" then
    return M.question_lines(input), "markdown"
  elseif entry.permission and entry.permission.preview then
    return diff_lines(entry.permission.preview), "diff"
  end
  return {}, nil
end

local PERMISSION_STATE = {
  pending = "? ",
  later = "? ",
  allowed = "✓ ",
  denied = "✗ ",
  withdrawn = "– ",
}

-- The highlight group of an entry's first line (and of every line for the kinds in WHOLE).
local HEAD_GROUP = {
  prompt = "ClaudeSidecarPrompt",
  thinking = "ClaudeSidecarThinking",
  tool = "ClaudeSidecarTool",
  notice = "ClaudeSidecarNotice",
  result = "ClaudeSidecarTurnEnd",
  separator = "ClaudeSidecarTurnEnd",
  marker = "ClaudeSidecarTurnEnd",
  file = "ClaudeSidecarFile",
  image = "ClaudeSidecarFile",
}
local WHOLE = { prompt = true, thinking = true, notice = true }

--- Lines of one entry (each entry starts with an empty separator line).
---@param entry table
---@param opts {tool_result_lines: integer}
---@return string[] lines
---@return {folds: {[1]: integer, [2]: integer}[], hl: {[1]: integer, [2]: string}[]} meta line
---  ranges to fold and {line, highlight group} pairs (1-based, within these lines)
function M.entry(entry, opts)
  local lines = { "" }
  local meta = { folds = {}, hl = {} }
  if entry.kind == "prompt" then
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "> " .. line)
    end
  elseif entry.kind == "text" then
    vim.list_extend(lines, split(entry.text))
  elseif entry.kind == "thinking" then
    table.insert(lines, "∴ Thinking")
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "  " .. line)
    end
    -- The header stays visible as the closed fold's text.
    table.insert(meta.folds, { 2, #lines })
  elseif entry.kind == "tool" then
    local prefix = entry.parent and "  ● " or "● "
    table.insert(lines, prefix .. M.tool_summary(entry.name, entry.input))
    local permission = entry.permission
    if permission then
      local body = M.permission_body(entry)
      local indent = entry.name == "ExitPlanMode" and "" or "    "
      local first = #lines + 1
      for _, line in ipairs(body) do
        table.insert(lines, indent .. line)
      end
      -- Once answered, the diff or plan folds away (zo opens it again).
      if permission.state ~= "pending" and permission.state ~= "later" and #lines >= first + 2 then
        table.insert(meta.folds, { first, #lines })
      end
      if permission.reason or permission.blocked_path then
        table.insert(lines, "    (" .. table.concat(
          vim.tbl_filter(function(x)
            return x ~= nil
          end, { permission.reason, permission.blocked_path }),
          ": "
        ) .. ")")
      end
      table.insert(lines, "  " .. (PERMISSION_STATE[permission.state] or "? ") .. permission.text:gsub("\n", " "))
      table.insert(meta.hl, { #lines, "ClaudeSidecarPermission" })
    end
    if entry.result then
      local result = split(entry.result)
      local shown = entry.expanded and #result or math.min(#result, opts.tool_result_lines)
      for i = 1, shown do
        table.insert(lines, (i == 1 and (entry.is_error and "  ⎿ ✗ " or "  ⎿ ") or "    ") .. result[i])
        if i == 1 and entry.is_error then
          table.insert(meta.hl, { #lines, "ClaudeSidecarToolError" })
        end
      end
      if #result > shown then
        table.insert(lines, string.format("    … +%d lines (<Tab> shows them)", #result - shown))
        table.insert(meta.hl, { #lines, "ClaudeSidecarNotice" })
      end
    end
  elseif entry.kind == "result" then
    table.insert(lines, "─── " .. M.turn_summary(entry) .. " ───")
  elseif entry.kind == "separator" then
    table.insert(lines, entry.text and ("─── " .. entry.text .. " ───") or "───")
  elseif entry.kind == "marker" then
    table.insert(lines, "═══ " .. entry.text .. " ═══")
  elseif entry.kind == "file" then
    table.insert(lines, string.format("✎ %s%s", entry.path, entry.stats or ""))
  elseif entry.kind == "image" then
    table.insert(lines, "🖼 " .. entry.text)
  elseif entry.kind == "notice" then
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "⚠ " .. line)
    end
  end
  local group = HEAD_GROUP[entry.kind]
  if group and #lines > 1 then
    local heads = {}
    for i = 2, WHOLE[entry.kind] and #lines or 2 do
      table.insert(heads, { i, group })
    end
    meta.hl = vim.list_extend(heads, meta.hl)
  end
  return lines, meta
end

--- Lines of a prompt waiting for the CLI to take it up (shown below the transcript).
---@return string[] lines
function M.queued(text)
  local lines = { "" }
  for _, line in ipairs(split(text)) do
    table.insert(lines, "> " .. line)
  end
  table.insert(lines, "  ⧗ queued: Claude reads it when the current step is done")
  return lines
end

return M
