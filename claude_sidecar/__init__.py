"""claude-sidecar: embed the Claude Code agent in any editor."""
