--- :ClaudeModel: the chat's models (as its CLI offers them) in a picker, then the effort
--- level when the model takes one; a model named on the command line is checked first.
local log = require("claude_sidecar.log")

local M = {}

--- Call fn(info) with the chat's claude/channelInfo once its channel is open (fresh from the
--- daemon, so the current model and effort are right); the chat keeps it as `chat.info`.
---@param chat claude_sidecar.Chat
---@param fn fun(info: table)
function M.channel_info(chat, fn)
  require("claude_sidecar.chat").when_open(chat, function()
    require("claude_sidecar.rpc").request("claude/channelInfo", { channelId = chat.channel_id }, function(err, info)
      if err then
        require("claude_sidecar.errors").report(err)
        return
      end
      chat.info = info
      fn(info)
    end)
  end)
end

--- The model of `models` that `name` means: its value (alias), its resolved id or its display
--- name (any case); nil when none.
---@param models table[] channelInfo `models`
---@param name string
function M.find(models, name)
  local wanted = name:lower()
  for _, m in ipairs(models) do
    if
      m.value:lower() == wanted
      or (m.resolvedModel or ""):lower() == wanted
      or (m.displayName or ""):lower() == wanted
    then
      return m
    end
  end
  return nil
end

--- "Sonnet — Sonnet 5.5 · Efficient for routine tasks" (the picker's line for a model).
function M.label(m)
  if m.description and m.description ~= "" then
    return string.format("%s — %s", m.displayName or m.value, m.description)
  end
  return m.displayName or m.value
end

local function set(chat, model, effort)
  local params = { channelId = chat.channel_id, model = model, effort = effort }
  require("claude_sidecar.rpc").request("claude/setModel", params, function(err)
    if err then
      require("claude_sidecar.errors").report(err)
      return
    end
    -- A boundary: the turns below run on the new model.
    local text = string.format("model: %s%s", model, effort and (" · effort " .. effort) or "")
    require("claude_sidecar.chat").add_marker(chat, text)
    M.channel_info(chat, function() end)
  end)
end

--- Ask for the effort level when model `m` takes one, then switch.
local function choose_effort(chat, info, m, effort)
  local levels = m.supportedEffortLevels or {}
  if effort then
    if not vim.tbl_contains(levels, effort) then
      log.notify(
        vim.log.levels.WARN,
        "%s takes no effort %q%s",
        m.displayName or m.value,
        effort,
        #levels > 0 and ("; it takes " .. table.concat(levels, ", ")) or ""
      )
      return
    end
    return set(chat, m.value, effort)
  end
  if #levels == 0 then
    return set(chat, m.value, nil)
  end
  vim.ui.select(levels, {
    prompt = string.format("Effort for %s (now %s)", m.displayName or m.value, info.effort or "the CLI's default"),
    kind = "claude_sidecar.effort",
  }, function(level)
    if level then
      set(chat, m.value, level)
    end
  end)
end

--- Switch chat's model: `name` (and `effort`) when given, else pick from its CLI's models.
---@param chat claude_sidecar.Chat
---@param name string|nil a model alias, id or display name
---@param effort string|nil an effort level
function M.pick(chat, name, effort)
  M.channel_info(chat, function(info)
    local models = info.models or {}
    if name and name ~= "" then
      local m = M.find(models, name)
      if not m and name:match("^claude%-") then
        -- A full model id the CLI does not list (an older or newer model): the API decides.
        m = { value = name }
      end
      if not m then
        local known = vim.tbl_map(function(x)
          return x.value
        end, models)
        log.notify(vim.log.levels.WARN, "unknown model %q; known: %s", name, table.concat(known, ", "))
        return
      end
      return choose_effort(chat, info, m, effort)
    end
    if #models == 0 then
      log.notify(vim.log.levels.WARN, "the CLI offers no model list; use :ClaudeModel <name>")
      return
    end
    vim.ui.select(models, {
      prompt = string.format("Model (now %s)", info.model or chat.model or "the CLI's default"),
      kind = "claude_sidecar.model",
      format_item = M.label,
    }, function(m)
      if m then
        choose_effort(chat, info, m, nil)
      end
    end)
  end)
end

--- Model names for :ClaudeModel completion (of the current chat, if its CLI reported them).
function M.complete(arg_lead)
  local chat = package.loaded["claude_sidecar.chat"]
  local c = chat and chat.current()
  local out = {}
  for _, m in ipairs(c and c.info and c.info.models or {}) do
    if vim.startswith(m.value, arg_lead) then
      table.insert(out, m.value)
    end
  end
  return out
end

return M
