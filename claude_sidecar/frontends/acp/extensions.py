"""This agent's extension methods (``_claude-sidecar/*``): what the daemon has beyond ACP.

- ``rewindFiles``: restore the files the session's tools changed since one of its
  prompts (``claude/rewindFiles``), or with ``dryRun`` only say what would change;
- ``forkSession``: a new session continuing a copy of a session's conversation through
  one of its prompts' exchanges (``claude/forkSession`` with ``atMessageId``);
- ``diagnostics``: what the agent holds now (``diagnostics.snapshot``: the counts the
  ``claude/*`` daemon logs on ``SIGUSR1``) and each session's CLI.

A prompt's ``messageId`` is in its answer's ``_meta.claudeSidecar`` and in a replayed
``user_message_chunk``. Bad params name the field, as ACP methods' do.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import msgspec
from acp.schema import ForkSessionResponse

from claude_sidecar import __version__
from claude_sidecar.channel import rewind
from claude_sidecar.frontends.acp.errors import invalid
from claude_sidecar.protocol.api import is_uuid
from claude_sidecar.runtime import diagnostics

if TYPE_CHECKING:
    from claude_sidecar.frontends.acp.agent import SidecarAgent

PREFIX = "claude-sidecar/"
"""The methods' prefix (on the wire after ACP's ``_``: ``_claude-sidecar/...``)."""

METHODS = ("rewindFiles", "forkSession", "diagnostics")
MESSAGE_FIX = (
    "pass the messageId of one of the session's prompts (the prompt's answer has it in "
    "_meta.claudeSidecar.messageId, a loaded session's user_message_chunk as messageId)"
)


def advertised() -> dict[str, Any]:
    """What ``initialize``'s ``_meta.claudeSidecar`` says of the extensions."""
    return {"extensionMethods": [f"_{PREFIX}{m}" for m in METHODS]}


def _string(params: dict[str, Any], field: str, *, required: bool = True) -> str | None:
    value = params.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(
            field,
            "is missing" if value is None else f"is {value!r}, not a string",
            f"pass {field} as a string",
        )
    return value


def _message_id(params: dict[str, Any], field: str, *, required: bool = True) -> str | None:
    value = _string(params, field, required=required)
    if value is not None and not is_uuid(value):
        raise invalid(field, f"is {value!r}, not a UUID", MESSAGE_FIX)
    return value


async def call(agent: SidecarAgent, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run extension method ``name`` (without the prefix) with ``params``."""
    if name == "rewindFiles":
        session = agent.sessions.get(_string(params, "sessionId") or "")
        message_id = _message_id(params, "messageId") or ""
        dry_run = params.get("dryRun", False)
        if not isinstance(dry_run, bool):
            raise invalid("dryRun", f"is {dry_run!r}, not a boolean", "pass true or false")
        result = await rewind.rewind_files(agent.hub.get(session.channel_id), message_id, dry_run)
        return dict(msgspec.to_builtins(result))
    if name == "forkSession":
        source = _string(params, "sessionId") or ""
        at = _message_id(params, "atMessageId", required=False)
        live = agent.sessions.find(source)
        # A live session's own directory unless another is given; a stored one's is needed.
        cwd = _string(params, "cwd", required=live is None)
        if cwd is None:
            assert live is not None
            cwd = agent.hub.get(live.channel_id).cwd
        options = agent.session_options(
            cwd, params.get("additionalDirectories"), params.get("mcpServers")
        )
        session = await agent.sessions.fork(source, options, at)
        answer = ForkSessionResponse(session_id=session.id, **agent.opened_fields(session))
        return dict(answer.model_dump(mode="json", by_alias=True, exclude_none=True))
    if name == "diagnostics":
        return {
            "version": __version__,
            "pid": os.getpid(),
            "stats": diagnostics.snapshot(agent.hub.channel_count),
            "sessions": agent.sessions.describe(),
        }
    raise KeyError(name)
