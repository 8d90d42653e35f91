"""Whether the CLI can authenticate, as ACP ``authMethods``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from acp.schema import AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

_AUTH_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_CLOUD_VARIABLES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent


def sign_in_methods(env: Mapping[str, str] | None = None) -> list[AuthMethod]:
    """How to give the CLI credentials, as ACP auth methods: the agent's own (the user
    signs in with the command the description names, then the client calls
    ``authenticate``)."""
    from claude_sidecar.cli.signin import login_fix

    return [AuthMethodAgent(id="claude-login", name="Log in to Claude", description=login_fix(env))]


def methods_as_json(methods: list[AuthMethod]) -> list[dict[str, object]]:
    """The methods as they go on the wire (in an error's ``data``)."""
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in methods]


async def auth_methods(cli_path: str | None, env: Mapping[str, str] | None) -> list[AuthMethod]:
    """None when the CLI has credentials (in ``env``, None: the daemon's); else how to
    get some."""
    env = os.environ if env is None else env
    if any(env.get(v) for v in (*_AUTH_VARIABLES, *_CLOUD_VARIABLES)):
        return []
    from claude_sidecar.cli.doctor import examine

    report = await asyncio.to_thread(examine, cli_path, env)
    if report.auth.logged_in is not False:
        return []
    return sign_in_methods(env)
