--- blink.cmp source for the prompt buffer (`@` files, buffers and agents, `/` commands):
---   sources = {
---     per_filetype = { claude_sidecar_prompt = { "claude_sidecar" } },
---     providers = { claude_sidecar = { name = "Claude", module = "claude_sidecar.completion.blink" } },
---   }
local completion = require("claude_sidecar.completion")

local source = {}
source.__index = source

--- A new source object (blink.cmp calls it with the provider's opts).
function source.new(opts)
  return setmetatable({ opts = opts or {} }, source)
end

--- Only prompt buffers of chats complete.
function source:enabled()
  return completion.source_for(vim.api.nvim_get_current_buf()) ~= nil
end

function source:get_trigger_characters()
  return { "@", "/" }
end

--- blink.cmp asks for the items at the cursor (ctx.cursor: 1-based row, 0-based byte col).
function source:get_completions(ctx, callback)
  callback({
    items = completion.lsp_items(ctx.bufnr, ctx.cursor[1] - 1, ctx.cursor[2]),
    is_incomplete_forward = false,
    is_incomplete_backward = false,
  })
end

return source
