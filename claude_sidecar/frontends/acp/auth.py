"""Whether the CLI can authenticate, as ACP ``authMethods``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from acp.schema import AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

_AUTH_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_CLOUD_VARIABLES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent


async def auth_methods(cli_path: str | None, env: Mapping[str, str] | None) -> list[AuthMethod]:
    """None when the CLI has credentials (in ``env``, None: the daemon's); else how to
    get some."""
    env = os.environ if env is None else env
    if any(env.get(v) for v in (*_AUTH_VARIABLES, *_CLOUD_VARIABLES)):
        return []
    from claude_sidecar.cli.doctor import LOGIN_FIX, examine

    report = await asyncio.to_thread(examine, cli_path, env)
    if report.auth.logged_in is not False:
        return []
    return [AuthMethodAgent(id="claude-login", name="Log in to Claude", description=LOGIN_FIX)]
