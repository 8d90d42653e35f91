--- nvim-cmp source for the prompt buffer (`@` files, buffers and agents, `/` commands):
---   require("cmp").register_source("claude_sidecar", require("claude_sidecar.completion.cmp").new())
---   require("cmp").setup.filetype("claude_sidecar_prompt", { sources = { { name = "claude_sidecar" } } })
local completion = require("claude_sidecar.completion")

local source = {}
source.__index = source

--- A new source object for cmp.register_source.
function source.new()
  return setmetatable({}, source)
end

--- Only prompt buffers of chats complete.
function source:is_available()
  return completion.source_for(vim.api.nvim_get_current_buf()) ~= nil
end

function source:get_trigger_characters()
  return { "@", "/" }
end

--- The word includes its `@`/`/` and the path characters after it.
function source:get_keyword_pattern()
  return [=[[@/][^[:space:]]*]=]
end

--- nvim-cmp asks for the items at the cursor: callback({ items, isIncomplete }).
function source:complete(params, callback)
  local cursor = params.context.cursor
  callback({
    items = completion.lsp_items(params.context.bufnr, cursor.row - 1, cursor.col - 1),
    isIncomplete = false,
  })
end

return source
