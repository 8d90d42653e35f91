--- Chats in git worktrees of their own (feature `worktrees`): starting one, reviewing what its
--- agent changed as one diff, merging its branch into the branch it was made from, discarding it.
local errors = require("claude_sidecar.errors")
local log = require("claude_sidecar.log")
local protocol = require("claude_sidecar.protocol")
local rpc = require("claude_sidecar.rpc")

local M = {}

--- The lines of a review: what the branch changed against its base (its commits, then each
--- file's unified diff; a binary or too large file named, not shown).
---@param changes table a claude/worktreeChanges result
---@return string[]
function M.review_lines(changes)
  local worktree = changes.worktree
  local lines = {
    string.format(
      "# %s: %d file%s, +%d -%d against %s (%s)",
      worktree.branch,
      #changes.files,
      #changes.files == 1 and "" or "s",
      changes.added,
      changes.deleted,
      worktree.baseBranch ~= vim.NIL and worktree.baseBranch or worktree.baseRef,
      worktree.baseCommit:sub(1, 10)
    ),
  }
  for _, commit in ipairs(changes.commits) do
    table.insert(lines, string.format("# %s %s", commit.commit:sub(1, 10), commit.subject))
  end
  if #changes.files == 0 then
    table.insert(lines, "# nothing changed yet")
  end
  for _, file in ipairs(changes.files) do
    local note = file.uncommitted and " (not committed yet)" or ""
    if file.diff ~= vim.NIL and file.diff then
      table.insert(lines, "")
      if note ~= "" then
        table.insert(lines, "#" .. note)
      end
      vim.list_extend(lines, vim.split(file.diff, "\n", { trimempty = true }))
    else
      local why = file.omitted == "binary" and "binary file" or string.format("%d bytes, too large to show", file.size)
      table.insert(lines, "")
      table.insert(lines, string.format("# %s %s: %s%s", file.status, file.path, why, note))
    end
  end
  return lines
end

--- Review what the agent of `channel` (a claude/listChannels item) changed: one diff buffer
--- in a new tab page.
---@param channel table
function M.review(channel)
  if not M.usable(channel, "review") then
    return
  end
  rpc.request(
    "claude/worktreeChanges",
    { channelId = channel.channelId },
    vim.schedule_wrap(function(err, result)
      if err then
        return errors.report(err)
      end
      vim.cmd("tabnew")
      local buf = vim.api.nvim_get_current_buf()
      vim.bo[buf].buftype = "nofile"
      vim.bo[buf].bufhidden = "wipe"
      vim.bo[buf].swapfile = false
      pcall(vim.api.nvim_buf_set_name, buf, "[Claude review] " .. result.worktree.branch)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.review_lines(result))
      vim.bo[buf].modifiable = false
      vim.bo[buf].filetype = "diff"
      vim.keymap.set("n", "q", "<Cmd>tabclose<CR>", { buffer = buf, nowait = true, desc = "Close the review" })
    end)
  )
end

--- Whether `channel` runs in a worktree and the daemon serves worktrees (else says why).
---@param channel table
---@param what string
function M.usable(channel, what)
  if not protocol.require("worktrees", ":ClaudeAgents " .. what) then
    return false
  end
  if type(channel.worktree) ~= "table" then
    log.notify(
      vim.log.levels.INFO,
      "that chat runs in %s, not in a worktree of its own: nothing to %s",
      channel.cwd,
      what
    )
    return false
  end
  return true
end

--- Merge the branch of `channel` into the branch its worktree was made from (the user picks
--- merge, squash or rebase); a conflict or the user's own uncommitted files: nothing changes and
--- the error names the files.
---@param channel table
---@param done fun()|nil after a merge
function M.merge(channel, done)
  if not M.usable(channel, "merge") then
    return
  end
  local worktree = channel.worktree
  local into = worktree.baseBranch ~= vim.NIL and worktree.baseBranch or worktree.baseRef
  vim.ui.select({ "merge", "squash", "rebase" }, {
    prompt = string.format("Bring %s into %s by", worktree.branch, into),
  }, function(strategy)
    if not strategy then
      return
    end
    rpc.request(
      "claude/mergeWorktree",
      { channelId = channel.channelId, strategy = strategy },
      vim.schedule_wrap(function(err, result)
        if err then
          return errors.report(err)
        end
        log.notify(
          vim.log.levels.INFO,
          "%s of %s into %s: %d file%s, now %s",
          strategy,
          worktree.branch,
          result.target,
          #result.files,
          #result.files == 1 and "" or "s",
          result.commit:sub(1, 10)
        )
        if done then
          done()
        end
      end)
    )
  end)
end

--- Close the chat of `channel` and remove its worktree and branch, after asking; work that
--- was never merged is named and asked about again before it is thrown away.
---@param channel table
function M.remove(channel)
  if not M.usable(channel, "discard") then
    return
  end
  local branch = channel.worktree.branch
  local function remove(force)
    rpc.request(
      "claude/removeWorktree",
      { channelId = channel.channelId, force = force },
      vim.schedule_wrap(function(err, result)
        if errors.name(err) == "unmergedWork" and not force then
          vim.ui.select({ "Keep it", "Discard it anyway" }, {
            prompt = err.message,
          }, function(choice)
            if choice == "Discard it anyway" then
              remove(true)
            end
          end)
          return
        end
        if err then
          return errors.report(err)
        end
        log.notify(
          vim.log.levels.INFO,
          "removed %s and its worktree (session %s stays resumable)",
          result.branch,
          result.sessionId
        )
      end)
    )
  end
  vim.ui.select({ "Keep it", "Discard it" }, {
    prompt = string.format("Close the chat and remove %s with its worktree?", branch),
  }, function(choice)
    if choice == "Discard it" then
      remove(false)
    end
  end)
end

--- A worktree's name from a task's first `words` (4) words, the rule every client uses:
--- lowercased, each run of characters other than a-z and 0-9 one dash, no dash at either end
--- ("Fix the login form!" -> "fix-the-login-form"); "" when the task has no such word.
---@param task string
---@param words integer|nil
---@return string
function M.name_from(task, words)
  local taken = {}
  for word in task:lower():gmatch("[a-z0-9]+") do
    if #taken == (words or 4) then
      break
    end
    table.insert(taken, word)
  end
  return table.concat(taken, "-")
end

--- :ClaudeWorktree without a name: asks what the chat should do (its first prompt; empty: none),
--- then the worktree's name, by default the task's first words (empty: the daemon picks one).
--- Cancelling either question starts nothing; `opened(chat)` shows the chat that was started.
---@param opened fun(chat: table)
function M.ask(opened)
  if rpc.server() and not protocol.require("worktrees", ":ClaudeWorktree") then
    return
  end
  vim.ui.input({ prompt = "New chat in a worktree: what should Claude do there? " }, function(task)
    if task == nil then
      return
    end
    task = vim.trim(task)
    vim.ui.input({
      prompt = "Worktree name (branch worktree-<name>; empty: the daemon picks one): ",
      default = M.name_from(task),
    }, function(name)
      if name == nil then
        return
      end
      local chat = M.new_chat(vim.trim(name))
      if not chat then
        return
      end
      if task ~= "" then
        -- Queued until the channel is open, then sent as the chat's first prompt.
        require("claude_sidecar.chat").send(chat, task)
      end
      opened(chat)
    end)
  end)
end

--- :ClaudeWorktree [name] — a new chat in a worktree of its own (on branch worktree-<name>;
--- without a name the daemon chooses one), made from the current branch.
---@param name string|nil
function M.new_chat(name)
  local chat = require("claude_sidecar.chat")
  local function start()
    local worktree = { baseRef = "head" }
    if name and name ~= "" then
      worktree.name = name
    end
    return chat.new(vim.fn.getcwd(), { worktree = worktree })
  end
  if rpc.server() then
    if protocol.require("worktrees", ":ClaudeWorktree") then
      return start()
    end
    return nil
  end
  return start()
end

return M
