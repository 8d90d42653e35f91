"""The Claude Code CLI versions the daemon is tested against.

The suite runs against every version listed here (the pinned one is the CLI bundled in
the ``claude-agent-sdk`` wheel this package depends on). A CLI between the oldest and the
newest listed is "in the tested range"; one outside it may still work, and
``claude-sidecar doctor`` says so instead of refusing it.
"""

from __future__ import annotations

import re

TESTED_CLI_VERSIONS: tuple[str, ...] = ("2.1.330",)
"""Every CLI version the README's test command runs the real-CLI tests against."""

_NUMBERS = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def version_key(version: str) -> tuple[int, int, int] | None:
    """``"2.1.330"`` -> ``(2, 1, 330)``; None for text that holds no x.y.z version."""
    match = _NUMBERS.search(version)
    if match is None:
        return None
    major, minor, patch = (int(n) for n in match.groups())
    return major, minor, patch


def in_tested_range(version: str) -> bool:
    """Whether ``version`` lies between the oldest and the newest tested CLI (inclusive)."""
    key = version_key(version)
    keys = [k for k in map(version_key, TESTED_CLI_VERSIONS) if k is not None]
    return key is not None and min(keys) <= key <= max(keys)


def tested_range() -> str:
    """The tested range as text: ``2.1.330`` or ``2.0.76 … 2.1.330``."""
    ordered = sorted(TESTED_CLI_VERSIONS, key=lambda v: version_key(v) or (0, 0, 0))
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]} … {ordered[-1]}"
