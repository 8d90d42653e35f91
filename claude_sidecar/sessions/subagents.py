"""A session's sub-agents: their transcripts, stored beside the session file, by the tool
use that started each, and each rendered as its own conversation."""

from __future__ import annotations

from pathlib import Path

import msgspec

from claude_sidecar.cli.paths import subagent_files, subagent_meta_path
from claude_sidecar.protocol.api import HistoryMessage
from claude_sidecar.sessions.chain import conversation
from claude_sidecar.sessions.entries import load
from claude_sidecar.sessions.render import Renderer


def subagent_transcripts(session_path: Path, warnings: list[str]) -> dict[str, list[Path]]:
    """Each sub-agent transcript of a session, by the tool use that started it (read from
    its ``.meta.json``; a transcript without one is left out, with a warning)."""
    by_tool_use: dict[str, list[Path]] = {}
    for path in subagent_files(session_path):
        label = str(path.relative_to(session_path.parent))
        try:
            meta = msgspec.json.decode(subagent_meta_path(path).read_bytes())
        except (OSError, msgspec.DecodeError):
            meta = None
        tool_use_id = meta.get("toolUseId") if isinstance(meta, dict) else None
        if not isinstance(tool_use_id, str):
            warnings.append(f"{label}: no toolUseId in its .meta.json; sub-agent not shown")
            continue
        by_tool_use.setdefault(tool_use_id, []).append(path)
    return by_tool_use


def render_subagent(
    session_path: Path, path: Path, tool_use_id: str, warnings: list[str]
) -> Renderer | None:
    """The sub-agent transcript at ``path`` rendered (None, with a warning, when it
    cannot be read); its problems go to ``warnings``."""
    label = str(path.relative_to(session_path.parent))
    try:
        file = load(path, label)
    except OSError as e:
        warnings.append(f"{label}: cannot be read ({e}); sub-agent not shown")
        return None
    sub_warnings: list[str] = []
    renderer = Renderer(file.warnings, label, tool_use_id)
    for line in conversation(file, sub_warnings, sidechain=True):
        renderer.render(line)
    warnings += file.warnings + [f"{label}: {w}" for w in sub_warnings]
    return renderer


def messages_with_subagents(
    messages: list[HistoryMessage], agents: dict[str, list[Renderer]]
) -> list[HistoryMessage]:
    """Insert each sub-agent's messages after the result (else the call) of its tool use."""
    if not agents:
        return messages
    answered = {m.tool_use_id for m in messages if m.kind == "toolResult"}
    out: list[HistoryMessage] = []
    for message in messages:
        out.append(message)
        tid = message.tool_use_id
        if tid in agents and (
            message.kind == "toolResult" or (message.kind == "toolUse" and tid not in answered)
        ):
            for renderer in agents.pop(tid):
                out.extend(messages_with_subagents(renderer.messages, agents))
    return out
