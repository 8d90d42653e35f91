"""The ACP agent without credentials: `initialize` offers its sign-in, and a prompt the CLI
cannot authenticate is answered with ACP's `auth_required` (-32000) carrying the fix and
the auth methods, against the real CLI (a temp HOME, no key in the environment)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError

from tests.acp.client import acp_agent, text
from tests.env import isolated_env
from tests.harness import json_object


@pytest.fixture
def daemon_env(home: Path) -> dict[str, str]:
    # No `claude` on PATH (the bundled CLI runs), no model URL, no key.
    return isolated_env(home, PATH="/usr/bin:/bin")


async def test_initialize_offers_the_sign_in_that_names_a_command_the_user_has(
    daemon_env: dict[str, str],
) -> None:
    async with acp_agent(daemon_env) as (conn, _, _client):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)

    (method,) = answer.auth_methods
    assert method.id == "claude-login"
    assert f"`{sys.executable} -m claude_sidecar login`" in method.description
    assert "claude auth login" not in method.description


async def test_a_prompt_without_credentials_is_answered_with_auth_required_and_the_fix(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    async with acp_agent(daemon_env) as (conn, _, client):
        session = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as raised:
            await conn.prompt(session_id=session, prompt=[text("hello")])

    error = raised.value
    data = json_object(error.data)
    assert error.code == -32000 and str(error) == "Authentication required"
    assert data["name"] == "authRequired" and data["reason"] == "noCredentials"
    assert data["how"] == f"{sys.executable} -m claude_sidecar login"
    assert data["message"].startswith("Claude Code has no credentials; sign in")
    assert [m["id"] for m in data["authMethods"]] == ["claude-login"]
    shown = client.text(session)
    assert "Please run /login" not in shown, "the CLI's raw words are not streamed as text"
