"""Release tooling of claude-sidecar: one version everywhere, and every artifact built at once.

    uv run python -m release check              # the version agrees everywhere?
    uv run python -m release set-version X.Y.Z  # X.Y.Z everywhere; CHANGELOG's Unreleased dated
    uv run python -m release build              # wheel, sdist, .vsix, jar, nvim plugin, sums

README.md, "Releasing", says how a release is cut. Never shipped: the wheel holds
claude_sidecar alone.
"""
