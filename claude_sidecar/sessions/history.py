"""A stored session's conversation as ``claude/getHistory`` returns it, sub-agents included.

Nothing here talks to a CLI process: the session file is read (:mod:`.entries`), its
current conversation found (:mod:`.chain`) and rendered (:mod:`.render`), and each
sub-agent's transcript is put after the tool use that started it.
"""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.cli.paths import session_file
from claude_sidecar.protocol.api import History
from claude_sidecar.sessions.chain import conversation
from claude_sidecar.sessions.entries import File, load
from claude_sidecar.sessions.render import Renderer
from claude_sidecar.sessions.subagents import (
    messages_with_subagents,
    render_subagent,
    subagent_transcripts,
)
from claude_sidecar.sessions.tail import TailReader


def render_conversation(path: Path) -> tuple[Renderer, File]:
    """The session file at ``path`` decoded, and its current conversation rendered (the
    file's warnings hold the chain's too)."""
    file = load(path)
    renderer = Renderer(file.warnings)
    for line in conversation(file, file.warnings):
        renderer.render(line)
    return renderer, file


def _subagents(session_path: Path, warnings: list[str]) -> dict[str, list[Renderer]]:
    """Each sub-agent transcript of a session, rendered, by the tool use that started it."""
    by_tool_use: dict[str, list[Renderer]] = {}
    for tool_use_id, paths in subagent_transcripts(session_path, warnings).items():
        for path in paths:
            renderer = render_subagent(session_path, path, tool_use_id, warnings)
            if renderer is not None:
                by_tool_use.setdefault(tool_use_id, []).append(renderer)
    return by_tool_use


def read_history(
    home: Path, cwd: str, session_id: str, *, config_dir: Path | None = None
) -> History:
    """The conversation of one stored session, as an editor shows it.

    Raises ``ValueError`` if ``session_id`` is not a UUID or ``cwd`` is not absolute
    (checked before any file is touched) and ``FileNotFoundError`` if there is no such
    session in ``cwd``'s project folder. Problems inside the file never raise: they are
    listed in ``warnings`` and the rest is returned.

    Rules (see :mod:`.chain` for how the chain is found):

    * Not shown: attachments (injected context), ``isMeta`` user entries (command caveats,
      image path notes, reminders), sidechain entries in the main file, text blocks that
      are only a ``<system-reminder>``/``<ide_opened_file>``/``<ide_selection>``, redacted
      thinking, and system entries other than compact boundaries, local command output and
      warnings/errors.
    * A user entry is a ``userPrompt`` unless it holds tool results (``toolResult`` per
      block), is the compact summary, a task notification, command output or an
      interruption marker (``system``). A slash command (``<command-name>`` wrapper) is a
      ``userPrompt`` with the command as typed: its uuid is the one sendMessage returned.
    * Assistant entries give one message per block; an API error stand-in
      (``isApiErrorMessage``) is a ``system``/``apiError``.
    * Sub-agent transcripts follow the result of the tool use that started them, their
      messages marked with ``parentToolUseId``.

    ``entries`` holds the same conversation as the conversation's entries (see
    :mod:`..conversation.stored`), each sub-agent's right after its tool use, read as
    :mod:`.tail` reads it: what came before a compaction too, before its boundary.
    """
    path = session_file(home, cwd, session_id, config_dir)
    renderer, file = render_conversation(path)
    agents = _subagents(path, file.warnings)
    reader = TailReader(path)
    try:
        entries = reader.rest()
    finally:
        reader.close()
    return History(
        session_id, messages_with_subagents(renderer.messages, agents), file.warnings, entries
    )


def exchange_end(history: History, message_id: str) -> str | None:
    """The uuid of the last top-level assistant entry answering prompt ``message_id``:
    where a fork "at" that prompt cuts the history (``--resume-session-at``)."""
    end, inside = None, False
    for message in history.messages:
        if message.kind == "userPrompt" and message.parent_tool_use_id is None:
            # (A sub-agent's prompt is part of the exchange that started it.)
            if inside:
                break
            inside = message.uuid == message_id
        elif (
            inside
            and message.parent_tool_use_id is None
            and message.kind in ("assistantText", "thinking", "toolUse")
        ):
            end = message.uuid
    return end
