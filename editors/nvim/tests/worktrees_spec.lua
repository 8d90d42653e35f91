local worktrees = require("claude_sidecar.worktrees")

return {
  ["a worktree's name is the task's first four words, lowercased, joined by dashes"] = function()
    assert(worktrees.name_from("Fix the login form!") == "fix-the-login-form")
    assert(worktrees.name_from("Add the feature, please: now") == "add-the-feature-please")
    assert(worktrees.name_from("  Port   v2.1 API_client  ") == "port-v2-1-api", "dots and underscores split words")
  end,

  ["a task without letters or digits names nothing: the daemon picks the name"] = function()
    assert(worktrees.name_from("") == "")
    assert(worktrees.name_from("?! …") == "")
  end,

  ["letters outside a-z separate words, as in the other clients"] = function()
    assert(worktrees.name_from("Über café fix") == "ber-caf-fix")
  end,
}
