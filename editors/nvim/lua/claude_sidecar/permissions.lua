--- Permission requests: the user decides each tool use the agent asks about.
local errors = require("claude_sidecar.errors")
local render = require("claude_sidecar.render")
local rpc = require("claude_sidecar.rpc")

local M = {}

local waiting = {} ---@type {chat: table, params: table, index: integer}[]
local asking = false
-- requestId -> the request (its chat, params, transcript entry, withdrawn flag).
local items = {} ---@type table<string, {chat: table, params: table, index: integer, withdrawn: boolean?}>

local function settle(item, text)
  local chat = require("claude_sidecar.chat")
  item.chat.t.entries[item.index].text = text
  chat.refresh(item.chat, item.index)
end

local function respond(item, response, shown)
  items[item.params.requestId] = nil
  if item.withdrawn then
    return
  end
  response.channelId = item.chat.channel_id
  response.requestId = item.params.requestId
  rpc.request("claude/respondPermission", response, function(err)
    if err and errors.name(err) ~= "permissionRequestNotFound" then
      settle(item, "permission answer failed: " .. errors.describe(err))
    end
  end)
  settle(item, shown)
end

local function ask_questions(item, done)
  local questions = (item.params.input or {}).questions or {}
  local answers = {}
  local function ask(i)
    local q = questions[i]
    if not q then
      return done(answers)
    end
    local labels = {}
    for _, option in ipairs(q.options or {}) do
      table.insert(labels, option.label)
    end
    vim.ui.select(labels, { prompt = q.question, kind = "claude_sidecar.question" }, function(choice)
      if choice == nil then
        return done(nil)
      end
      answers[q.question] = choice
      ask(i + 1)
    end)
  end
  ask(1)
end

local PLAN_CHOICES = {
  { label = "Yes, and auto-accept edits", mode = "acceptEdits" },
  { label = "Yes, and ask before each edit", mode = "default" },
  { label = "No, keep planning", mode = nil },
}

local function ask(item, done)
  local params = item.params
  local name = params.toolName
  if name == "AskUserQuestion" then
    ask_questions(item, function(answers)
      if answers then
        local shown = {}
        for question, answer in pairs(answers) do
          table.insert(shown, question .. " " .. answer)
        end
        respond(item, { decision = "allow", answers = answers }, "✓ answered: " .. table.concat(shown, "; "))
      else
        respond(item, { decision = "deny", message = "The user did not answer." }, "✗ not answered")
      end
      done()
    end)
    return
  end
  if name == "ExitPlanMode" then
    vim.ui.select(PLAN_CHOICES, {
      prompt = "Claude has a plan. Go ahead?",
      kind = "claude_sidecar.plan",
      format_item = function(choice) return choice.label end,
    }, function(choice)
      if choice and choice.mode then
        respond(item, { decision = "allow", mode = choice.mode }, "✓ plan approved (" .. choice.mode .. ")")
      else
        respond(item, { decision = "deny", message = "The user wants to keep planning." }, "✗ keep planning")
      end
      done()
    end)
    return
  end
  local choices = { "Allow", "Always allow", "Deny" }
  vim.ui.select(choices, {
    prompt = "Allow " .. render.tool_summary(name, params.input) .. "?",
    kind = "claude_sidecar.permission",
  }, function(choice)
    if choice == "Allow" then
      respond(item, { decision = "allow" }, "✓ allowed")
    elseif choice == "Always allow" then
      respond(item, { decision = "allowAlways" }, "✓ always allowed")
    else
      respond(item, { decision = "deny" }, "✗ denied")
    end
    done()
  end)
end

local function next_question()
  if asking then
    return
  end
  local item = table.remove(waiting, 1)
  if not item then
    return
  end
  asking = true
  ask(item, function()
    asking = false
    vim.schedule(next_question)
  end)
end

--- claude/permissionRequest: show it in the chat (with its diff preview) and ask.
function M.request(chat, params)
  local entries = chat.t.entries
  table.insert(entries, {
    kind = "permission", tool = render.tool_summary(params.toolName, params.input),
    preview = params.preview or params.previewNote,
    text = params.autoDecision and "✓ allowed by autoAllowTools" or "waiting for your answer",
  })
  require("claude_sidecar.chat").refresh(chat, #entries)
  if params.autoDecision then
    return
  end
  local item = { chat = chat, params = params, index = #entries }
  items[params.requestId] = item
  table.insert(waiting, item)
  next_question()
end

--- claude/permissionCancelled: the request needs no answer any more.
function M.cancelled(_, params)
  local item = items[params.requestId]
  if not item then
    return
  end
  items[params.requestId] = nil
  item.withdrawn = true
  for i, other in ipairs(waiting) do
    if other == item then
      table.remove(waiting, i)
    end
  end
  settle(item, "withdrawn (" .. params.reason .. ")")
end

return M
