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

--- The turn's footer (a `turn` entry): how it ended, how long it took (and how much of that
--- was spent waiting for the user's permission answers), what it cost.
function M.turn_summary(entry)
  local took = seconds(entry.durationMs)
  if (entry.permissionWaitMs or 0) > 0 then
    took = string.format("%s (%s waiting for permission)", took, seconds(entry.permissionWaitMs))
  end
  local outcome = entry.outcome or "error"
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
    summary = "error: " .. (entry.error or "the turn failed"):gsub("\n", " ")
  end
  if entry.costUsd and entry.costUsd > 0 then
    summary = summary .. string.format(" · $%.4f", entry.costUsd)
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
  local permission = entry.permission or {}
  if entry.name == "ExitPlanMode" and type(input.plan) == "string" then
    return split(input.plan), "markdown"
  elseif entry.name == "AskUserQuestion" then
    return M.question_lines(input), "markdown"
  elseif permission.preview then
    return diff_lines(permission.preview), "diff"
  elseif permission.previewNote then
    return { permission.previewNote }, nil
  end
  return {}, nil
end

-- A permission request's line by its decision; `answer` (what the user picked here) says more.
local DECISION = {
  pending = { "? ", "waiting for your answer" },
  answered = { "✓ ", "answered" },
  allowed = { "✓ ", "allowed" },
  denied = { "✗ ", "denied" },
  cancelled = { "– ", "withdrawn" },
}

local function permission_line(permission, answer)
  local decision = DECISION[permission.decision] or DECISION.pending
  if permission.decision == "cancelled" then
    return "  " .. decision[1] .. decision[2]
  elseif answer and answer.withdrawn then
    -- Withdrawn here (the daemon is gone): no later decision will come.
    return "  " .. DECISION.cancelled[1] .. answer.text
  end
  local text = answer and answer.text or (permission.byRule and "allowed by autoAllowTools") or decision[2]
  return "  " .. decision[1] .. text:gsub("\n", " ")
end

-- How a tool that has no result says where it is.
local STATUS = {
  pending = "  ⎿ …",
  running = "  ⎿ running…",
  interrupted = "  ⎿ interrupted",
  failed = "  ⎿ ✗ did not finish",
}

-- What a notice of the CLI looks like, by subtype: a boundary line, or a mark before its text.
local BOUNDARY = {
  compaction = "conversation compacted",
  cleared = "conversation cleared: Claude starts afresh from here",
}
local LEVEL_MARK = { error = "✗ ", warn = "⚠ ", info = "  " }

local function tool_lines(entry, opts, ui, lines, meta)
  table.insert(lines, "● " .. M.tool_summary(entry.name, entry.input))
  local permission = entry.permission
  if permission then
    local body = M.permission_body(entry)
    local indent = entry.name == "ExitPlanMode" and "" or "    "
    local first = #lines + 1
    for _, line in ipairs(body) do
      table.insert(lines, indent .. line)
    end
    -- Once answered, the diff or plan folds away (zo opens it again).
    if permission.decision ~= "pending" and #lines >= first + 2 then
      table.insert(meta.folds, { first, #lines })
    end
    if permission.decisionReason then
      table.insert(lines, "    (" .. permission.decisionReason:gsub("\n", " ") .. ")")
    end
    table.insert(lines, permission_line(permission, ui.answer))
    table.insert(meta.hl, { #lines, "ClaudeSidecarPermission" })
  end
  local result = entry.result
  if result then
    local text = split(result.text)
    if (result.imageCount or 0) > 0 then
      table.insert(text, string.format("[%d image%s]", result.imageCount, result.imageCount > 1 and "s" or ""))
    end
    local shown = ui.expanded and #text or math.min(#text, opts.tool_result_lines)
    for i = 1, shown do
      table.insert(lines, (i == 1 and (result.isError and "  ⎿ ✗ " or "  ⎿ ") or "    ") .. text[i])
      if i == 1 and result.isError then
        table.insert(meta.hl, { #lines, "ClaudeSidecarToolError" })
      end
    end
    if #text > shown then
      table.insert(lines, string.format("    … +%d lines (<Tab> shows them)", #text - shown))
      table.insert(meta.hl, { #lines, "ClaudeSidecarNotice" })
    end
  elseif entry.status == "denied" then
    table.insert(lines, "  ⎿ ✗ denied")
  elseif STATUS[entry.status] and not (permission and permission.decision == "pending") then
    table.insert(lines, STATUS[entry.status])
    table.insert(meta.hl, { #lines, "ClaudeSidecarNotice" })
  end
  for _, file in ipairs(entry.files or {}) do
    table.insert(
      lines,
      string.format("  ✎ %s (+%d −%d)", vim.fn.fnamemodify(file.path, ":~:."), file.added or 0, file.removed or 0)
    )
    table.insert(meta.hl, { #lines, "ClaudeSidecarFile" })
  end
end

-- The highlight group of an entry's first line (and of every line for the kinds in WHOLE).
local HEAD_GROUP = {
  prompt = "ClaudeSidecarPrompt",
  thinking = "ClaudeSidecarThinking",
  tool = "ClaudeSidecarTool",
  notice = "ClaudeSidecarNotice",
  turn = "ClaudeSidecarTurnEnd",
  marker = "ClaudeSidecarTurnEnd",
  file = "ClaudeSidecarFile",
  image = "ClaudeSidecarFile",
}
local WHOLE = { prompt = true, thinking = true, notice = true }

--- Lines of one entry (each entry starts with an empty separator line).
---@param entry table an entry of the conversation, or one of the plugin's own
---@param opts {tool_result_lines: integer}
---@param ui {expanded: boolean|nil, answer: claude_sidecar.Answer|nil, depth: integer|nil, hidden: boolean|nil}|nil
---  what only this Neovim knows: the whole result shown, the user's answer, how deep a sub-agent
---  nests it, whether the entry is not drawn at all (an interrupt its turn's footer says)
---@return string[] lines
---@return {folds: {[1]: integer, [2]: integer}[], hl: {[1]: integer, [2]: string}[]} meta line
---  ranges to fold and {line, highlight group} pairs (1-based, within these lines)
function M.entry(entry, opts, ui)
  ui = ui or {}
  if ui.hidden then
    return {}, { folds = {}, hl = {} }
  end
  local lines = { "" }
  local meta = { folds = {}, hl = {} }
  local kind = entry.kind
  if kind == "prompt" then
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "> " .. line)
    end
    if (entry.imageCount or 0) > 0 then
      lines[#lines] = lines[#lines] .. string.format("  🖼 ×%d", entry.imageCount)
    end
  elseif kind == "text" then
    vim.list_extend(lines, split(entry.text))
  elseif kind == "thinking" then
    table.insert(lines, "∴ Thinking")
    for _, line in ipairs(split(entry.text)) do
      table.insert(lines, "  " .. line)
    end
    -- The header stays visible as the closed fold's text.
    table.insert(meta.folds, { 2, #lines })
  elseif kind == "tool" then
    tool_lines(entry, opts, ui, lines, meta)
  elseif kind == "turn" then
    table.insert(lines, "─── " .. M.turn_summary(entry) .. " ───")
  elseif kind == "marker" or (kind == "notice" and BOUNDARY[entry.subtype]) then
    local boundary = kind == "marker" and entry.text or BOUNDARY[entry.subtype]
    table.insert(lines, "═══ " .. boundary .. " ═══")
    kind = "marker"
  elseif kind == "notice" and entry.subtype == "interrupted" then
    table.insert(lines, "⏹ interrupted")
  elseif kind == "notice" then
    -- The CLI's notices have a level; the plugin's own are warnings, marked on every line.
    local mark = LEVEL_MARK[entry.level or "warn"] or "⚠ "
    for i, line in ipairs(split(entry.text)) do
      table.insert(lines, ((i == 1 or not entry.level) and mark or "  ") .. line)
    end
  elseif kind == "file" then
    table.insert(lines, string.format("✎ %s%s", entry.path, entry.stats or ""))
  elseif kind == "image" then
    table.insert(lines, "🖼 " .. entry.text)
  end
  local group = HEAD_GROUP[kind]
  if group and #lines > 1 then
    local heads = {}
    for i = 2, WHOLE[kind] and #lines or 2 do
      table.insert(heads, { i, group })
    end
    meta.hl = vim.list_extend(heads, meta.hl)
  end
  -- What a sub-agent did is indented under the tool that started it.
  local indent = string.rep("  ", ui.depth or 0)
  if indent ~= "" then
    for i = 2, #lines do
      lines[i] = indent .. lines[i]
    end
  end
  return lines, meta
end

--- Lines of a prompt waiting for the CLI to take it up (shown below the transcript); with
--- `starting`, sent while the chat's CLI starts (it is sent once the chat is open).
---@return string[] lines
function M.queued(text, starting)
  local lines = { "" }
  for _, line in ipairs(split(text)) do
    table.insert(lines, "> " .. line)
  end
  table.insert(
    lines,
    starting and "  ⧗ waiting: sent once Claude has started"
      or "  ⧗ queued: Claude reads it when the current step is done"
  )
  return lines
end

return M
