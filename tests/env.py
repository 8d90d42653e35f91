"""The isolated environment every daemon, CLI and SDK call of the suite runs in."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TypedDict

import pytest
from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.runtime.host import PLATFORM_ENV

from tests import zygote

# The compatibility run (tests/run-all.sh) points every daemon at another CLI than the
# pinned one: a path to its binary.
COMPAT_CLI = os.environ.get("SIDECAR_TEST_CLI") or None

# The cross-release suite (tests/cross-release.sh) runs the tests marked ``cross_release``
# against the daemon of another release: the path of its ``claude-sidecar`` executable.
DAEMON_UNDER_TEST = os.environ.get("SIDECAR_TEST_DAEMON") or None


ZYGOTE: str | None = None
"""The socket of this test worker's fork server (tests/zygote), while the running test may
start its daemons through it (conftest's ``zygote`` fixtures); None: started directly."""


def daemon_argv(*args: str) -> list[str]:
    """The command line that runs the daemon under test with ``args``: this checkout's
    (``python -m claude_sidecar``, or its stand-in forked by tests/zygote), or in the
    cross-release suite another release's."""
    if DAEMON_UNDER_TEST:
        return [DAEMON_UNDER_TEST, *args]
    if ZYGOTE is not None:
        return zygote.argv(ZYGOTE, *args)
    return [sys.executable, "-m", "claude_sidecar", *args]


HELD_CLI = Path(__file__).parent / "fixtures" / "held-cli.sh"


class HeldCliEnv(TypedDict):
    CLAUDE_SIDECAR_CLI: str
    CLAUDE_SIDECAR_HELD_CLI: str
    CLAUDE_SIDECAR_HOLD: str


def held_cli_env(go: Path) -> HeldCliEnv:
    """Variables that start a daemon's resumed chats on a CLI held until the file ``go``
    exists (tests/fixtures/held-cli.sh): what a client does while a long session's CLI
    starts, shown without sleeps. Other chats start at once; the CLI is the one under test."""
    return HeldCliEnv(
        CLAUDE_SIDECAR_CLI=str(HELD_CLI),
        CLAUDE_SIDECAR_HELD_CLI=COMPAT_CLI or find_cli(),
        CLAUDE_SIDECAR_HOLD=str(go),
    )


API_KEY = "sk-ant-test-dummy"
"""The key the CLI sends the stand-in model (which takes any)."""


PLATFORM_PATHS = ("native", "portable")
"""The daemon's paths: this machine's own calls, or the portable ones macOS takes (forced)."""

both_platform_paths = pytest.mark.parametrize("platform_path", PLATFORM_PATHS, indirect=True)
"""Runs a test once on each path (the ``platform_path`` fixture, which ``daemon_env`` sets)."""


def isolated_env(home: Path, model_url: str | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without the host's Anthropic and Claude settings
    (``ANTHROPIC_*``, ``CLAUDE*``: credentials, a config dir, and CLAUDECODE, which makes
    the CLI refuse to start inside another session), with ``home`` as HOME, no
    nonessential traffic, and the CLI under test in the compatibility run; with
    ``model_url``, the CLI talks to the stand-in model there (with a dummy key). ``extra``
    is set last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(HOME=str(home), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    if PLATFORM_ENV in os.environ:
        # A whole run forced onto the portable paths (runtime/host.py) forces its daemons.
        env[PLATFORM_ENV] = os.environ[PLATFORM_ENV]
    if model_url is not None:
        env.update(ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY=API_KEY)
    if COMPAT_CLI:
        env["CLAUDE_SIDECAR_CLI"] = COMPAT_CLI
    env.update(extra)
    return env


def isolate(
    monkeypatch: pytest.MonkeyPatch, home: Path, model_url: str | None = None, **extra: str
) -> None:
    """Make this process's environment ``isolated_env(home, model_url, **extra)`` for the
    test: for what reads it in the test process (the official SDK finds sessions through
    HOME and CLAUDE_CONFIG_DIR)."""
    env = isolated_env(home, model_url, **extra)
    for name in os.environ.keys() - env.keys():
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
