"""A stored session's conversation produced from its end, an exchange at a time.

:class:`TailReader` finds the current conversation the way :mod:`.chain` does, but from
the file's last line backwards (:mod:`.backward`): the leaf is the last main-chain
``user``/``assistant`` entry (or a ``system`` child written after it), and the walk follows
``parentUuid`` towards the root, reading the file back only as far as the next parent. The
lines it passes are decoded whole only when their exchange is rendered. :meth:`older`
gives the entries of one more exchange (a top-level prompt and what followed it), newest
exchange first, so the last page of a session of any length costs the same.

The rules are :mod:`.chain`'s, each read lazily:

* the last compact boundary's preserved segment is relinked (the file is read back to
  that boundary before the walk passes its compact summary);
* a parent that is not in the file is bridged to the closest earlier entry, with a warning
  (this reads back to the file's start);
* the tool calls and results of a parallel turn that the walk passed by are put back
  after the response (they are written after the exchange's prompt, which the walk has
  passed when the exchange is rendered).

One rule differs: what came before a compaction is not dropped. Where the walk reaches a
compact boundary (``parentUuid`` null), it goes on along ``logicalParentUuid``, the
conversation as it was before the compaction, leaving out what the compaction preserved
(shown after the boundary already). So the entries before a ``compaction`` notice are
what the CLI no longer sends to the model, still browsable.

Each exchange is rendered by :class:`.render.Renderer`; sub-agents follow their tool use
(:mod:`.subagents`) and turn footers are placed at the end of their exchange
(:mod:`.footers`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from claude_sidecar.protocol.api import Entry, HistoryMessage, PromptEntry, ToolEntry
from claude_sidecar.sessions.backward import LineIndex, Slim
from claude_sidecar.sessions.entries import CHAIN_TYPES, Line
from claude_sidecar.sessions.footers import Footer, place_footers
from claude_sidecar.sessions.render import Renderer
from claude_sidecar.sessions.subagents import (
    messages_with_subagents,
    render_subagent,
    subagent_transcripts,
)


class TailReader:
    """The conversation of the session file at ``path``, from its end (see the module
    docstring). ``footers``: the session's recorded turn footers. Not thread-safe: one
    caller at a time."""

    def __init__(self, path: Path, footers: Sequence[Footer] = ()) -> None:
        self.path = path
        self.index = LineIndex(path)
        self._warnings: list[str] = []
        self._walk = self._chain()
        # The uuids of the lines walked (the chain), and of every line shown.
        self._on_chain: set[str] = set()
        self._seen: set[str] = set()
        # The last compact boundary of the file, once the reading passed it, and the
        # relinking of its preserved segment (uuid -> parent).
        self._boundary: Slim | None = None
        self._relinked: dict[str, str] = {}
        self._anchor: str | None = None
        self._preserved: tuple[str, str] | None = None  # (first, last)
        # Message id -> its assistant lines; uuid -> the tool result lines hanging off it.
        self._siblings: dict[str, list[Slim]] = {}
        self._results: dict[str, list[Slim]] = {}
        self._grouped = 0
        self._agents = subagent_transcripts(path, self._warnings)
        self._footers = list(footers)
        self._footers_of: dict[str, list[int]] = {}
        for i, footer in enumerate(self._footers):
            for prompt in footer.prompts:
                self._footers_of.setdefault(prompt, []).append(i)
        self._placed: set[int] = set()
        # The uuids of the lines from before the last compaction (``messages`` leaves them
        # out), and the sub-agents rendered for the exchange given last.
        self._before_compaction: set[str] = set()
        self._rendered: dict[str, list[Renderer]] = {}
        self.messages: list[HistoryMessage] = []
        """The legacy ``messages`` of the exchange :meth:`older` gave last (none for what
        came before the last compaction: the legacy view starts there)."""
        self.done = False
        self._numbered: list[str] | None = None

    def close(self) -> None:
        """Close the session file (the warnings numbered first, when it was read whole)."""
        self.warnings  # noqa: B018 (numbering them reads the file)
        self.index.close()

    @property
    def warnings(self) -> list[str]:
        """What could not be read so far: the lines read, then the links and the content.
        A line is named by its byte offset until the whole file was read, then by its
        line number."""
        found = [text for _, text in sorted(self.index.warnings)] + self._warnings
        if not self.done or not self.index.done or not found:
            return found
        if self._numbered is None or len(self._numbered) != len(found):
            offsets = [int(m) for w in found for m in _AT_BYTE.findall(w)]
            numbers = self.index.line_numbers(offsets) if offsets else {}

            def numbered(warning: str) -> str:
                warning = _JOINED.sub(lambda m: f"entry on line {numbers[int(m[1])]}", warning)
                return _AT_BYTE.sub(lambda m: f"line {numbers[int(m[1])]}", warning)

            self._numbered = [numbered(w) for w in found]
        return list(self._numbered)

    # ------------------------------------------------------------ the walk

    def _chain(self) -> Iterator[Slim]:
        """The conversation's lines, newest first (see the module docstring)."""
        index = self.index
        leaf: Slim | None = None
        while leaf is None:
            leaf = next(
                (
                    s
                    for s in index.newest_first[self._grouped :]
                    if s.type in ("user", "assistant") and not s.sidechain
                ),
                None,
            )
            self._group()
            if leaf is None and not index.read_back():
                return
        for later in reversed(index.newest_first[: leaf.order]):
            if later.type == "system" and later.parent == leaf.uuid:
                leaf = later
        current: Slim | None = leaf
        # Before a compaction: the links as written, and what the chain after it showed
        # already is passed through, not shown again.
        before_compaction = False
        segment: set[str] = set()
        while current is not None:
            if before_compaction:
                if current.uuid in segment:
                    self._warn_loop(current, current.uuid)
                    return
                segment.add(current.uuid)
            self._on_chain.add(current.uuid)
            if current.uuid not in self._seen:
                self._seen.add(current.uuid)
                if before_compaction:
                    self._before_compaction.add(current.uuid)
                yield current
            raw = current.parent
            if not raw:
                if current.compact_boundary and current.logical_parent:
                    # (Not bridged when missing: the history before it was not kept.)
                    before_compaction, segment = True, set()
                    current = self.index.find(current.logical_parent)
                    self._group()
                    continue
                return
            self._find(raw, current, warn=False)  # (may reveal the last boundary)
            parent = raw if before_compaction else (self._parent(current) or raw)
            found = index.by_uuid.get(parent)
            if found is None:
                found = self._find(parent, current)
            elif not before_compaction and parent in self._on_chain:
                self._warn_loop(current, parent)
                return
            current = found

    def _warn_loop(self, current: Slim, parent: str) -> None:
        self._warnings.append(
            f"at byte {current.offset}: the chain loops back to {parent}; "
            "the history before it is left out"
        )

    def _find(self, uuid: str, child: Slim, *, warn: bool = True) -> Slim | None:
        """The line ``uuid``, read back to; a missing one (``warn``) is bridged to the
        closest earlier line of the conversation, with a warning."""
        found = self.index.find(uuid)
        self._group()
        if found is not None:
            if self._boundary is None and (found.compact_summary or found.compact_boundary):
                # Its compaction's boundary is right before it: its relinking applies.
                while self._boundary is None and self.index.read_back():
                    self._group()
            return found
        if not warn:
            return None
        bridge = self.index.older(child)
        while bridge is not None and (
            bridge.uuid in self._on_chain or bridge.sidechain or bridge.type not in CHAIN_TYPES
        ):
            bridge = self.index.older(bridge)
        self._group()
        joined = (
            f"joined to the entry at byte {bridge.offset}"
            if bridge is not None
            else "the history before it is missing"
        )
        self._warnings.append(f"at byte {child.offset}: parent {uuid} is not in the file; {joined}")
        return bridge

    def _group(self) -> None:
        """File the lines read since the last call: the last boundary, parallel groups."""
        lines = self.index.newest_first
        for s in lines[self._grouped :]:
            if s.compact_boundary and self._boundary is None:
                self._boundary = s
            if s.sidechain:
                continue
            if s.message_id is not None:
                self._siblings.setdefault(s.message_id, []).append(s)
            elif s.tool_result:
                for key in {s.parent, s.source_tool}:
                    if key is not None:
                        self._results.setdefault(key, []).append(s)
        self._grouped = len(lines)

    def _parent(self, slim: Slim) -> str | None:
        """``slim``'s parent after the last compaction's relinking."""
        self._relink()
        if slim.uuid in self._relinked:
            return self._relinked[slim.uuid]
        if self._preserved is not None and slim.parent == self._anchor:
            first, last = self._preserved
            if slim.uuid != first:
                return last
        return slim.parent

    def _relink(self) -> None:
        """Read the last boundary's preserved segment (once), as :mod:`.chain` does."""
        boundary = self._boundary
        if boundary is None or self._anchor is not None:
            return
        self._anchor = ""  # (done, whatever the outcome)
        line = self.index.line(boundary)
        meta = line.entry.compact_metadata if line is not None else None
        if not isinstance(meta, dict):
            return
        uuids: list[str] = []
        anchor = None
        kept, segment = meta.get("preservedMessages"), meta.get("preservedSegment")
        if isinstance(kept, dict) and isinstance(kept.get("uuids"), list):
            anchor = kept.get("anchorUuid")
            uuids = [u for u in kept["uuids"] if isinstance(u, str)]
        elif isinstance(segment, dict):
            anchor, head = segment.get("anchorUuid"), segment.get("headUuid")
            current = segment.get("tailUuid")
            seen: set[str] = set()
            while isinstance(current, str) and current not in seen:
                found = self.index.find(current)
                if found is None:
                    break
                seen.add(current)
                uuids.append(current)
                if current == head:
                    break
                current = found.parent
            if not uuids or uuids[-1] != head:
                return
            uuids.reverse()
        self._group()
        if (
            not uuids
            or not isinstance(anchor, str)
            or any(self.index.find(u) is None for u in uuids)
        ):
            return
        self._group()
        for uuid, previous in zip(uuids, [anchor, *uuids[:-1]], strict=True):
            self._relinked[uuid] = previous
        self._anchor, self._preserved = anchor, (uuids[0], uuids[-1])

    # ------------------------------------------------------------ exchanges

    def older(self) -> list[Entry] | None:
        """The entries of the next exchange back (oldest first); None once the
        conversation's start was given."""
        while not self.done:
            chunk: list[Line] = []
            for slim in self._walk:
                line = self.index.line(slim)
                if line is None:
                    continue
                chunk.append(line)
                if _opens_exchange(line):
                    break
            else:
                self.done = True
            chunk.reverse()
            entries = self._render(self._recovered(chunk))
            if entries:
                return entries
        return None

    def _recovered(self, chain: list[Line]) -> list[Line]:
        """``chain`` with the calls and results of parallel tool use the walk passed by."""
        anchors: dict[str, Line] = {}
        for line in chain:
            entry = line.entry
            if entry.type == "assistant":
                slim = self.index.by_uuid.get(entry.uuid or "")
                if slim is not None and slim.message_id is not None:
                    anchors[slim.message_id] = line
        inserts: dict[str, list[Slim]] = {}
        for mid, anchor in anchors.items():
            group = sorted(self._siblings.get(mid, []), key=lambda s: s.offset)
            found = [s for s in group if s.uuid not in self._seen]
            taken = {s.uuid for s in found}
            for member in group:
                for result in sorted(self._results.get(member.uuid, []), key=lambda s: s.offset):
                    if result.uuid not in self._seen and result.uuid not in taken:
                        taken.add(result.uuid)
                        found.append(result)
            if not found:
                continue
            found.sort(key=lambda s: (s.type != "assistant", s.timestamp, s.offset))
            self._seen.update(s.uuid for s in found)
            inserts[anchor.entry.uuid or ""] = found
        if not inserts:
            return chain
        out: list[Line] = []
        for line in chain:
            out.append(line)
            for slim in inserts.get(line.entry.uuid or "", ()):
                extra = self.index.line(slim)
                if extra is not None:
                    out.append(extra)
        return out

    def _render(self, lines: list[Line]) -> list[Entry]:
        renderer = Renderer(self._warnings)
        for line in lines:
            renderer.render(line)
        self._rendered = {}
        entries = self._with_subagents(renderer.stored.entries)
        shown = [m for m in renderer.messages if m.uuid not in self._before_compaction]
        self.messages = messages_with_subagents(shown, self._rendered)
        prompts = {e.id for e in entries if isinstance(e, PromptEntry) and e.parent_id is None}
        claimed = sorted(
            {i for p in prompts for i in self._footers_of.get(p, ()) if i not in self._placed}
        )
        self._placed.update(claimed)
        if not claimed:
            return entries
        return place_footers(entries, [self._footers[i] for i in claimed])

    def _with_subagents(self, entries: list[Entry]) -> list[Entry]:
        """Insert each sub-agent's entries after the tool use that started it."""
        out: list[Entry] = []
        for entry in entries:
            out.append(entry)
            if isinstance(entry, ToolEntry) and entry.id in self._agents:
                for path in self._agents.pop(entry.id):
                    renderer = render_subagent(self.path, path, entry.id, self._warnings)
                    if renderer is not None:
                        self._rendered.setdefault(entry.id, []).append(renderer)
                        out.extend(self._with_subagents(renderer.stored.entries))
        return out

    def chain_uuids(self) -> Iterator[str]:
        """The uuids of the conversation's lines, newest first, to its start, without
        rendering them: for a reader of its own (it gives no entries after)."""
        for slim in self._walk:
            yield slim.uuid

    def rest(self) -> list[Entry]:
        """Every entry not given yet, oldest first."""
        chunks: list[list[Entry]] = []
        while (chunk := self.older()) is not None:
            chunks.append(chunk)
        return [entry for chunk in reversed(chunks) for entry in chunk]


# How a warning names a line until line numbers are known (``Line.place``, backward).
_AT_BYTE = re.compile(r"\bat byte (\d+)")
_JOINED = re.compile(r"entry at byte (\d+)")


def _opens_exchange(line: Line) -> bool:
    """Whether ``line`` is a top-level prompt (an exchange starts there)."""
    entry = line.entry
    if entry.type != "user" or entry.is_meta or entry.is_compact_summary:
        return False
    probe = Renderer([])
    probe.render(line)
    return any(isinstance(e, PromptEntry) for e in probe.stored.entries)
