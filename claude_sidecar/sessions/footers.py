"""Turn footers kept beside the CLI's sessions: what a session file does not hold.

A session file has no record of how a turn ended, how long it took or what it cost, so a
resumed chat would lose its footers. Each footer a live channel's conversation makes
(``LiveConversation.footers``) is written to
``$XDG_STATE_HOME/claude-sidecar/turns/<session id>.jsonl`` (``~/.local/state`` when unset),
one line per turn with the prompts it answered and the context meter the turn left, and a
stored session's entries get them back after the exchange of those prompts (a resumed
channel its cost so far and its meter). Never in the CLI's own folders: its listing would
take the file for a session.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from claude_sidecar.protocol.api import (
    ContextReading,
    Effort,
    Entry,
    NoticeEntry,
    PromptEntry,
    TextEntry,
    TurnEntry,
)

log = logging.getLogger(__name__)


class Footer(msgspec.Struct):
    """One recorded footer: the prompts of its turn, the footer entry itself, the context
    meter after the turn, and the model and effort the user had chosen for it (None: the
    CLI's default; all three absent in files of earlier versions)."""

    prompts: list[str]
    entry: TurnEntry
    context: ContextReading | None = None
    model: str | None = None
    effort: Effort | None = None


class Choices(Protocol):
    """What the user chose for a channel's turns (``ChannelSettings`` has them)."""

    requested_model: str | None
    effort: Effort | None


def last_choices(footers: Sequence[Footer]) -> tuple[str | None, Effort | None]:
    """The model and effort chosen for the last turn that recorded each: what a resumed
    chat goes on with (the CLI continues a session's model by itself, not its effort)."""
    model = next((f.model for f in reversed(footers) if f.model is not None), None)
    effort = next((f.effort for f in reversed(footers) if f.effort is not None), None)
    return model, effort


_decode = msgspec.json.Decoder(Footer).decode
_encode = msgspec.json.Encoder().encode


def context_after(entries: Sequence[Entry], footers: Sequence[Footer]) -> ContextReading | None:
    """The context meter as the last turn of ``entries`` that recorded one left it."""
    recorded = {f.entry.id: f.context for f in footers if f.context is not None}
    turns = (e for e in reversed(entries) if isinstance(e, TurnEntry) and e.id in recorded)
    return next((recorded[e.id] for e in turns), None)


class FooterLog:
    """The footers of every session of one environment (``env``: None for the daemon's)."""

    def __init__(self, env: Mapping[str, str] | None) -> None:
        self._env = env

    def directory(self) -> Path:
        """Where the footer files are."""
        env = os.environ if self._env is None else self._env
        state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME", "~")) / ".local" / "state")
        return Path(state).expanduser() / "claude-sidecar" / "turns"

    def _path(self, session_id: str) -> Path:
        # Session ids are UUIDs (checked at the edge); a name with a separator is refused.
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.directory() / f"{session_id}.jsonl"

    def record(
        self,
        session_id: str,
        prompts: Sequence[str],
        footer: TurnEntry,
        context: ContextReading | None = None,
        *,
        model: str | None = None,
        effort: Effort | None = None,
    ) -> None:
        """Append one footer of ``session_id`` (``context``: the meter after its turn); a
        failure is logged, never raised (this runs on the channel's reader)."""
        try:
            path = self._path(session_id)
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with path.open("ab") as f:
                f.write(_encode(Footer(list(prompts), footer, context, model, effort)) + b"\n")
        except (OSError, ValueError) as e:
            log.warning("session %s: could not record a turn footer: %s", session_id, e)

    def load(self, session_id: str) -> list[Footer]:
        """The footers recorded for ``session_id``, oldest first (unreadable lines skipped)."""
        try:
            lines = self._path(session_id).read_bytes().splitlines()
        except (OSError, ValueError):
            return []
        footers = []
        for line in lines:
            try:
                footers.append(_decode(line))
            except msgspec.MsgspecError:
                log.warning("session %s: skipped an unreadable footer line", session_id)
        return footers

    def forget(self, session_id: str) -> None:
        """Delete the footers of ``session_id`` (its session was deleted)."""
        try:
            self._path(session_id).unlink(missing_ok=True)
        except (OSError, ValueError) as e:
            log.warning("session %s: could not delete its turn footers: %s", session_id, e)


class ChannelFooters:
    """One channel's footer sink: each footer recorded with the model and effort chosen
    for the channel when its turn ended."""

    def __init__(self, footers: FooterLog, choices: Choices) -> None:
        self._footers = footers
        self._choices = choices

    def record(
        self,
        session_id: str,
        prompts: Sequence[str],
        footer: TurnEntry,
        context: ContextReading | None = None,
    ) -> None:
        """Append one footer of ``session_id`` with the channel's current choices."""
        self._footers.record(
            session_id,
            prompts,
            footer,
            context,
            model=self._choices.requested_model,
            effort=self._choices.effort,
        )


def _is_prompt(entry: Entry) -> bool:
    return isinstance(entry, PromptEntry) and entry.parent_id is None


def place_footers(entries: list[Entry], footers: Sequence[Footer]) -> list[Entry]:
    """``entries`` with each footer at the end of the exchange of its turn's last prompt
    (before the next prompt of the main conversation); a footer whose prompts are not there
    (a session cleared since) or that is there already is left out.

    Linear in the entries and footers: a session kept for days has thousands of each (a
    search of the entries per footer took 30 s for 18,004 entries and 5,144 footers)."""
    placed = list(entries)
    prompts = [i for i, e in enumerate(placed) if _is_prompt(e)]
    # A prompt's id -> its (last) position; a prompt's position -> where its exchange ends.
    prompt_at = {placed[i].id: i for i in prompts}
    exchange_end = dict(zip(prompts, [*prompts[1:], len(placed)], strict=False))
    known = {e.id for e in placed}
    # Position in ``entries`` -> the footers that go before the entry there, in order.
    slots: dict[int, list[Entry]] = {}
    for footer in footers:
        if footer.entry.id in known:
            continue
        last = max((prompt_at[p] for p in footer.prompts if p in prompt_at), default=-1)
        if last < 0:
            continue
        end = exchange_end[last]
        if footer.entry.outcome == "interrupted" and end not in slots:
            # (After another footer of the exchange, its last entry is that footer.)
            _mark_aborted(placed, last, end)
        slots.setdefault(end, []).append(footer.entry)
        known.add(footer.entry.id)
    if not slots:
        return placed
    out: list[Entry] = []
    for i, entry in enumerate(placed):
        out += slots.get(i, ())
        out.append(entry)
    return out + slots.get(len(placed), [])


def _mark_aborted(entries: list[Entry], prompt: int, end: int) -> None:
    """Mark the answer an interrupt cut short, which the session file does not flag: the
    exchange's last top-level entry (before the CLI's interrupted notice) when it is text.
    An interrupt during a tool leaves the text before it complete, as it does live."""
    for i in range(end - 1, prompt, -1):
        entry = entries[i]
        if entry.parent_id is not None or (
            isinstance(entry, NoticeEntry) and entry.subtype == "interrupted"
        ):
            continue
        if isinstance(entry, TextEntry):
            entries[i] = msgspec.structs.replace(entry, aborted=True)
        return
