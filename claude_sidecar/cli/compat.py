"""The Claude Code CLI versions the daemon is tested against.

The suite runs against every version listed here: the pinned one is the CLI bundled in
the ``claude-agent-sdk`` wheel this package depends on; ``COMPAT_CLI_VERSION`` is the
older one the compatibility run installs from npm (``tests/run-all.sh`` reads it from
here: ``python3 -m claude_sidecar.cli.compat``). A CLI between the oldest and the
newest listed is "in the tested range"; one outside it may still work, and
``claude-sidecar doctor`` says so instead of refusing it.
"""

from __future__ import annotations

import re

PINNED_CLI_VERSION = "2.1.330"
"""The CLI bundled in the ``claude-agent-sdk`` wheel of ``uv.lock``: the main test run."""

COMPAT_CLI_VERSION = "2.1.233"
"""The older CLI of the compatibility run (``@anthropic-ai/claude-code`` from npm)."""

TESTED_CLI_VERSIONS: tuple[str, ...] = (COMPAT_CLI_VERSION, PINNED_CLI_VERSION)
"""Every CLI version the README's test command runs the real-CLI tests against."""

WRITES_TRANSCRIPT_BEFORE_RESULT = PINNED_CLI_VERSION
"""The oldest CLI known to write a turn's transcript to its session file before it prints
the turn's ``result`` line (older ones, 2.1.233 among them, write it up to 100 ms later,
their session writer's flush interval; the daemon then waits for it, see channel.py)."""

REFUSES_RECONNECTING_A_DISABLED_MCP_SERVER = PINNED_CLI_VERSION
"""The oldest CLI known to refuse ``mcp_reconnect`` of a disabled server (2.1.233
reconnects it, silently enabling it again; the daemon refuses it for such CLIs)."""

_NUMBERS = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def version_key(version: str) -> tuple[int, int, int] | None:
    """``"2.1.330"`` -> ``(2, 1, 330)``; None for text that holds no x.y.z version."""
    match = _NUMBERS.search(version)
    if match is None:
        return None
    major, minor, patch = (int(n) for n in match.groups())
    return major, minor, patch


def older_than(version: str | None, first: str) -> bool:
    """Whether CLI ``version`` predates ``first``; an unknown version (a CLI that cannot
    tell it) counts as current."""
    key, bound = version_key(version or ""), version_key(first)
    return key is not None and bound is not None and key < bound


def in_tested_range(version: str) -> bool:
    """Whether ``version`` lies between the oldest and the newest tested CLI (inclusive)."""
    key = version_key(version)
    keys = [k for k in map(version_key, TESTED_CLI_VERSIONS) if k is not None]
    return key is not None and min(keys) <= key <= max(keys)


def tested_range() -> str:
    """The tested range as text: ``2.1.330`` or ``2.0.76 … 2.1.330``."""
    ordered = sorted(TESTED_CLI_VERSIONS, key=lambda v: version_key(v) or (0, 0, 0))
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]} … {ordered[-1]}"


if __name__ == "__main__":
    # tests/run-all.sh: which CLI the compatibility run installs.
    print(COMPAT_CLI_VERSION)
