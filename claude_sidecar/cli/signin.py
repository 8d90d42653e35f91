"""Signing the CLI in: the command a user has for it, and the fix the daemon names.

The CLI signs in with ``claude auth login`` (a Claude account, in the browser) or takes an
API key from ``ANTHROPIC_API_KEY`` in its environment. A user of the CLI bundled with
claude-agent-sdk has no ``claude`` on PATH, so the fixes name ``claude-sidecar login``
(which runs the CLI the daemon would run), and ``claude auth login`` only when ``claude``
is on PATH.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping

from claude_sidecar.protocol.errors import AuthRequired

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
# The CLI's marker on the synthetic assistant message of a turn that could not
# authenticate (CLI 2.1.233 and 2.1.330: no credentials, or an HTTP 401 from the API).
CLI_AUTH_FAILED = "authentication_failed"


# Set by the checkout's bootstrap.py to the command that ran it: in a checkout, what the user
# types (`uv run` puts the venv's claude-sidecar on the daemon's PATH, not on the user's).
LAUNCHER_VARIABLE = "CLAUDE_SIDECAR_LAUNCHER"


def login_command(env: Mapping[str, str] | None = None) -> str:
    """The command that signs this user in: bootstrap.py's when the daemon was started
    through it, else ``claude-sidecar login`` when that is on the PATH of ``env``, else this
    Python running the module (an editor's daemon from a checkout's venv)."""
    env = os.environ if env is None else env
    launcher = env.get(LAUNCHER_VARIABLE)
    if launcher:
        return f"{launcher} login"
    if shutil.which("claude-sidecar", path=env.get("PATH")):
        return "claude-sidecar login"
    return f"{shlex.quote(sys.executable)} -m claude_sidecar login"


def routes(env: Mapping[str, str] | None = None) -> list[str]:
    """The two ways to sign in, each a sentence naming commands this user has."""
    env = os.environ if env is None else env
    account = f"a Claude account: run `{login_command(env)}` in a terminal"
    if shutil.which("claude", path=env.get("PATH")):
        account += " (or `claude auth login`)"
    return [
        account,
        f"an API key: set {API_KEY_VARIABLE} in the environment the daemon starts in and "
        f"restart it (`{login_command(env)} --api-key` says where)",
    ]


def login_fix(env: Mapping[str, str] | None = None) -> str:
    """One sentence: how to give the CLI credentials."""
    account, key = routes(env)
    return f"sign in with {account}; or use {key}"


def auth_required(
    cli_text: str, status: int | None, env: Mapping[str, str] | None = None
) -> AuthRequired:
    """The error of a turn the CLI could not authenticate: ``status`` None when it had no
    credentials at all, the API's HTTP status (401) when they were refused."""
    return AuthRequired(
        reason="noCredentials" if status is None else "refused",
        how=login_command(env),
        fix=f"{login_fix(env)}; then send the message again",
        routes=routes(env),
        cli_text=cli_text,
        status=status,
    )
