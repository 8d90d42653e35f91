local agents = require("claude_sidecar.agents")

local NOW = agents.epoch("2026-11-29T14:02:30.000Z")

local function channel(id, state, extra)
  return vim.tbl_extend("force", {
    channelId = id,
    cwd = "/srv/shop",
    state = state,
    model = "claude-sonnet-4-5",
    lastEventAt = "2026-11-29T14:02:17.512Z",
  }, extra or {})
end

return {
  ["the daemon's times are read as UTC, to the millisecond"] = function()
    assert(agents.epoch("1970-01-02T00:00:01.500Z") == 86401.5)
    local day = agents.epoch("2026-11-29T14:02:17.512Z") - agents.epoch("2026-11-28T14:02:17.000Z")
    assert(math.abs(day - 86400.512) < 1e-6, day)
    assert(agents.epoch("2024-03-01T00:00:00Z") - agents.epoch("2024-02-28T00:00:00Z") == 2 * 86400, "leap day")
    assert(agents.epoch("yesterday") == nil)
  end,

  ["how long ago reads in the largest whole unit"] = function()
    assert(agents.ago(12.9) == "12 s ago")
    assert(agents.ago(-1) == "0 s ago", "a clock a little ahead")
    assert(agents.ago(185) == "3 min ago")
    assert(agents.ago(2 * 3600 + 59) == "2 h ago")
    assert(agents.ago(4 * 86400) == "4 d ago")
  end,

  ["the chats waiting for the user come first, then running, idle, exited; by age in each"] = function()
    local sorted = agents.sorted({
      channel("ch-10", "idle"),
      channel("ch-2", "exited", { exit = { code = 1 } }),
      channel("ch-9", "running"),
      channel("ch-3", "idle"),
      channel("ch-11", "awaitingPermission"),
      channel("ch-4", "starting"),
    })
    local ids = vim.tbl_map(function(c)
      return c.channelId
    end, sorted)
    assert(table.concat(ids, " ") == "ch-11 ch-4 ch-9 ch-3 ch-10 ch-2", table.concat(ids, " "))
  end,

  ["a CLI that ended with an error or a signal failed; one that was closed exited"] = function()
    assert(agents.state(channel("ch-1", "exited", { exit = { code = 0 } })).label == "exited")
    assert(agents.state(channel("ch-1", "exited", { exit = { code = 1 } })).label == "failed")
    assert(agents.state(channel("ch-1", "exited", { exit = { code = vim.NIL, signal = 9 } })).label == "failed")
  end,

  ["each chat is a line of aligned cells under a header that counts them"] = function()
    local lines = agents.lines({
      channel("ch-1", "idle", { lastPrompt = "Add a cart page" }),
      channel("ch-2", "awaitingPermission", {
        cwd = "/srv/blog",
        model = "opus",
        lastEventAt = "2026-11-29T13:59:30.000Z",
        lastPrompt = "Fix the feed",
        pendingPermissions = {
          { requestId = "r1", toolName = "Write", input = { file_path = "/srv/blog/feed.xml" } },
          { requestId = "r2", toolName = "Bash", input = { command = "make" } },
        },
      }),
    }, NOW)
    local want = {
      "Claude chats: 1 waiting, 1 idle    <CR> open · d review · m merge · x discard · R refresh · q close",
      "waiting  /srv/blog  opus               3 min ago  asks Write(/srv/blog/feed.xml) (+1 more) · > Fix the feed",
      "idle     /srv/shop  claude-sonnet-4-5   12 s ago  > Add a cart page",
    }
    assert(vim.deep_equal(lines, want), vim.inspect(lines))
  end,

  ["a chat in a worktree says its branch and what it changed there"] = function()
    local worktree =
      { name = "dark", branch = "worktree-dark", path = "/srv/shop/.claude/worktrees/dark", root = "/srv/shop" }
    local counted = channel("ch-1", "running", {
      cwd = worktree.path,
      worktree = worktree,
      changes = { files = 3, added = 42, deleted = 7 },
      lastPrompt = "Add a dark mode",
    })
    local fresh = channel("ch-2", "idle", { worktree = worktree, changes = vim.NIL })
    local merged = channel("ch-3", "idle", { worktree = worktree, changes = { files = 0, added = 0, deleted = 0 } })
    local lines = agents.lines({ counted, fresh, merged }, NOW)
    assert(vim.endswith(lines[2], "on worktree-dark +42 -7 in 3 files · > Add a dark mode"), lines[2])
    assert(vim.startswith(lines[2], "running  /srv/shop  "), "the repository's folder, not the worktree's")
    assert(vim.endswith(lines[3], "on worktree-dark"), lines[3])
    assert(vim.endswith(lines[4], "on worktree-dark, nothing changed"), lines[4])
  end,

  ["a window too narrow for the lines shortens the folders' parents"] = function()
    local wide = channel("ch-1", "idle", { cwd = "/srv/projects/shop", lastPrompt = "Add a cart page" })
    local lines = agents.lines({ wide }, NOW, 40)
    assert(lines[2] == "idle  /s/p/shop  claude-sonnet-4-5  12 s ago  > Add a cart page", lines[2])
    lines = agents.lines({ wide }, NOW, 80)
    assert(lines[2] == "idle  /srv/projects/shop  claude-sonnet-4-5  12 s ago  > Add a cart page", lines[2])
  end,

  ["an empty daemon says so"] = function()
    local lines = agents.lines({}, NOW)
    assert(
      lines[1]
        == "No Claude chat in the daemon    <CR> open · d review · m merge · x discard · R refresh · q close",
      lines[1]
    )
    assert(#lines == 1)
  end,
}
