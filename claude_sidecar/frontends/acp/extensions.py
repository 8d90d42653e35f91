"""This agent's extension methods (``_claude-sidecar/*``): what the daemon has beyond ACP.

- ``rewindFiles``: restore the files the session's tools changed since one of its
  prompts (``claude/rewindFiles``), or with ``dryRun`` only say what would change;
- ``forkSession``: a new session continuing a copy of a session's conversation through
  one of its prompts' exchanges (``claude/forkSession`` with ``atMessageId``);
- ``diagnostics``: what the agent holds now (``diagnostics.snapshot``: the counts the
  ``claude/*`` daemon logs on ``SIGUSR1``) and each session's CLI;
- ``worktreeChanges``, ``mergeWorktree``, ``removeWorktree``: those ``claude/*`` methods
  for a session started in a worktree (``session/new``'s ``_meta.claudeSidecar.worktree``).

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
from claude_sidecar.frontends.acp.registry import SessionRegistry, session_options
from claude_sidecar.protocol import api
from claude_sidecar.protocol.api import is_uuid
from claude_sidecar.runtime import diagnostics

if TYPE_CHECKING:
    from claude_sidecar.hub.hub import Hub

PREFIX = "claude-sidecar/"
"""The methods' prefix (on the wire after ACP's ``_``: ``_claude-sidecar/...``)."""

METHODS = (
    "rewindFiles",
    "forkSession",
    "diagnostics",
    "worktreeChanges",
    "mergeWorktree",
    "removeWorktree",
)
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


async def call(
    sessions: SessionRegistry, hub: Hub, name: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Run extension method ``name`` (without the prefix) with ``params``, on the
    agent's ``sessions`` and ``hub``."""
    if name == "rewindFiles":
        session = sessions.get(_string(params, "sessionId") or "")
        message_id = _message_id(params, "messageId") or ""
        dry_run = params.get("dryRun", False)
        if not isinstance(dry_run, bool):
            raise invalid("dryRun", f"is {dry_run!r}, not a boolean", "pass true or false")
        result = await rewind.rewind_files(hub.get(session.channel_id), message_id, dry_run)
        return dict(msgspec.to_builtins(result))
    if name == "forkSession":
        source = _string(params, "sessionId") or ""
        at = _message_id(params, "atMessageId", required=False)
        live = sessions.find(source)
        # A live session's own directory unless another is given; a stored one's is needed.
        cwd = _string(params, "cwd", required=live is None)
        if cwd is None:
            assert live is not None
            cwd = hub.get(live.channel_id).cwd
        options = session_options(
            cwd, params.get("additionalDirectories"), params.get("mcpServers")
        )
        session = await sessions.fork(source, options, at)
        answer = ForkSessionResponse(session_id=session.id, **session.opened_fields())
        return dict(answer.model_dump(mode="json", by_alias=True, exclude_none=True))
    if name in ("worktreeChanges", "mergeWorktree", "removeWorktree"):
        return await _worktree_call(sessions, hub, name, params)
    if name == "diagnostics":
        return {
            "version": __version__,
            "pid": os.getpid(),
            "stats": diagnostics.snapshot(hub.channel_count),
            "sessions": sessions.describe(),
        }
    raise KeyError(name)


async def _worktree_call(
    sessions: SessionRegistry, hub: Hub, name: str, params: dict[str, Any]
) -> dict[str, Any]:
    """A worktree method of the ``claude/*`` protocol on the session's channel: its params
    with ``sessionId`` for ``channelId``."""
    session_id = _string(params, "sessionId") or ""
    channel_id = sessions.get(session_id).channel_id
    rest = {k: v for k, v in params.items() if k != "sessionId"}
    method = f"_{PREFIX}{name}"
    if name == "worktreeChanges":
        api.decode_params(method, api.ChannelParams, {**rest, "channelId": channel_id})
        answer: msgspec.Struct = await hub.worktree_changes(channel_id)
    elif name == "mergeWorktree":
        merge = api.decode_params(
            method, api.MergeWorktreeParams, {**rest, "channelId": channel_id}
        )
        answer = await hub.merge_worktree(merge)
    else:
        remove = api.decode_params(
            method, api.RemoveWorktreeParams, {**rest, "channelId": channel_id}
        )
        answer = await hub.remove_worktree(remove)
        sessions.forget(session_id)
    return dict(msgspec.to_builtins(answer))
