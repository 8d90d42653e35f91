-- Runs pure-Lua unit specs: nvim --headless -l tests/run.lua tests/<name>_spec.lua ...
-- A spec file returns { ["what it checks"] = function() ... end }; assert() fails a case.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.rtp:prepend(root)
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path

local failures, count = 0, 0
for _, file in ipairs(_G.arg) do
  local specs = dofile(file)
  local names = vim.tbl_keys(specs)
  table.sort(names)
  for _, name in ipairs(names) do
    count = count + 1
    local ok, err = pcall(specs[name])
    if ok then
      io.stdout:write("ok   " .. name .. "\n")
    else
      failures = failures + 1
      io.stdout:write("FAIL " .. name .. "\n     " .. tostring(err) .. "\n")
    end
  end
end
io.stdout:write(string.format("%d specs, %d failed\n", count, failures))
os.exit(failures > 0 and 1 or 0)
