"""What a session listing knows of a session file, read once and extended as the file grows.

A listing needs little of each line: the first prompt, the first ``cwd``, the last titles
and git branch, the oldest and newest timestamps, and for ``messageCount`` the links of the
conversation tree. :class:`Scan` holds exactly that for the file's bytes up to ``offset``,
decoded with a slim decoder (tool inputs and results, the copies of files a tool wrote and
system texts are skipped, not built), and :func:`extend` adds the lines the CLI appended
since. :class:`Tally` is the count and what :func:`advance` needs to add an appended turn
to it without the earlier lines.

``messageCount`` stays what :class:`.render.Renderer` counts on the chain that
:func:`.chain.conversation` finds: each entry's part (a prompt, a response's id) is
decided by the rules of :mod:`.render`, and the chain is found by :mod:`.chain` itself,
run on entries rebuilt from the kept :class:`Link` s. The lines taken are those
:func:`.entries.load` keeps (the same typed fields are validated).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, BinaryIO

import msgspec

from claude_sidecar.conversation.blocks import as_typed
from claude_sidecar.sessions.chain import conversation
from claude_sidecar.sessions.entries import (
    BULK_PREFIX,
    CHAIN_TYPES,
    Block,
    Entry,
    File,
    Line,
    Message,
)
from claude_sidecar.sessions.render import ASSISTANT_TOOL_USES, REMINDER, SYSTEM_PREFIXES

_CHUNK = 4 * 1024 * 1024
_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_TITLES = {"custom-title": "custom_title", "ai-title": "ai_title", "summary": "summary"}


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    text: Any = None
    thinking: Any = None


class _Message(msgspec.Struct, gc=False):
    id: Any = None
    content: str | list[_Block] | None = None


class _Entry(msgspec.Struct, rename="camel", gc=False):
    """A line as :class:`.entries.Entry` validates it, with only what a listing reads."""

    type: Any = None
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: Any = None
    is_sidechain: bool | None = False
    is_meta: bool | None = False
    is_compact_summary: bool | None = False
    is_api_error_message: bool | None = False
    message: _Message | None = None
    subtype: Any = None
    cwd: Any = None
    git_branch: Any = None
    custom_title: Any = None
    ai_title: Any = None
    summary: Any = None
    origin: Any = None
    compact_metadata: Any = None
    source_tool_assistant_uuid: Any = msgspec.field(default=None, name="sourceToolAssistantUUID")


_decode = msgspec.json.Decoder(_Entry).decode


class Link(msgspec.Struct, array_like=True, gc=False):
    """One entry with a uuid: what :func:`.chain.conversation` reads of it, and what it
    adds to ``messageCount`` when on the chain (a prompt; the id of a response shown)."""

    type: str
    uuid: str
    parent: str | None
    sidechain: bool
    timestamp: str
    prompt: bool = False
    response: str | None = None
    message_id: str | None = None
    tool_result: bool = False
    source_tool: str | None = None
    subtype: str | None = None
    compact_metadata: Any = None

    def entry(self) -> Entry:
        """The entry as :mod:`.chain` needs it."""
        message = None
        if self.message_id is not None or self.tool_result:
            blocks = [Block(type="tool_result")] if self.tool_result else None
            message = Message(id=self.message_id, content=blocks)
        return Entry(
            type=self.type,
            uuid=self.uuid,
            parent_uuid=self.parent,
            timestamp=self.timestamp,
            is_sidechain=self.sidechain,
            message=message,
            subtype=self.subtype,
            compact_metadata=self.compact_metadata,
            source_tool_assistant_uuid=self.source_tool,
        )


class Fold(msgspec.Struct):
    """The listing's fields over the lines read so far (sidechain entries left out)."""

    first_prompt: str | None = None
    first_command: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    titles: dict[str, str] = msgspec.field(default_factory=dict)
    oldest: str | None = None
    newest: str | None = None


class Scan(msgspec.Struct):
    """A session file read up to ``offset`` (the end of its last complete line)."""

    offset: int = 0
    fold: Fold = msgspec.field(default_factory=Fold)
    links: list[Link] = msgspec.field(default_factory=list)


def iso(value: Any) -> str | None:
    """A timestamp as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (sortable as text), or None."""
    try:
        if isinstance(value, str) and _ISO.fullmatch(value):
            datetime.fromisoformat(value)  # a real date? (the CLI's stamps are all this form)
            return value
        if isinstance(value, str):
            dt = datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            dt = datetime.fromtimestamp(value, UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _prompt_text(e: _Entry) -> str | None:
    """The text of the prompt a user entry shows (before :func:`as_typed`), as
    ``Renderer._user`` decides; None when it shows none."""
    if e.is_meta or e.message is None or e.is_compact_summary:
        return None
    content = e.message.content
    blocks = [_Block(type="text", text=content)] if isinstance(content, str) else content or []
    texts: list[str] = []
    images = 0
    for b in blocks:
        if b.type == "tool_result":
            return None
        if b.type == "text" and isinstance(b.text, str):
            if not REMINDER.match(b.text):
                texts.append(b.text)
        elif b.type == "image":
            images += 1
    text = "\n".join(texts).strip()
    if not text and not images:
        return None
    if isinstance(e.origin, dict) and e.origin.get("kind") == "task-notification":
        return None
    if any(text.startswith(prefix) for prefix, _ in SYSTEM_PREFIXES):
        return None
    return text


def _shown(e: _Entry, blocks: list[_Block]) -> bool:
    """Whether an assistant entry shows a message (``Renderer._assistant``'s ``shown``)."""
    if e.is_api_error_message:
        return False
    return any(
        (b.type == "text" and isinstance(b.text, str))
        or (b.type == "thinking" and isinstance(b.thinking, str))
        or b.type in ASSISTANT_TOOL_USES
        or b.type.endswith("_tool_result")
        for b in blocks
    )


def _take(e: _Entry, scan: Scan) -> None:
    """Add one kept line to ``scan``: to the summary's fields (sidechain entries left out)
    and, for an entry with a uuid, its :class:`Link`."""
    fold = scan.fold
    kind = e.type
    text = _prompt_text(e) if kind == "user" else None
    if not e.is_sidechain:
        if (stamp := iso(e.timestamp)) is not None:
            if fold.oldest is None or stamp < fold.oldest:
                fold.oldest = stamp
            if fold.newest is None or stamp > fold.newest:
                fold.newest = stamp
        if kind in _TITLES:
            value = getattr(e, _TITLES[kind])
            if isinstance(value, str) and value.strip():
                fold.titles[kind] = value
        if fold.cwd is None and isinstance(e.cwd, str):
            fold.cwd = e.cwd
        if isinstance(e.git_branch, str) and e.git_branch:
            fold.git_branch = e.git_branch
        if fold.first_prompt is None and text is not None:
            if text.startswith("<command-name>"):
                fold.first_command = fold.first_command or as_typed(text)
            else:
                fold.first_prompt = as_typed(text)
    if not e.uuid:
        return
    blocks = (
        e.message.content if e.message is not None and isinstance(e.message.content, list) else []
    )
    mid = e.message.id if kind == "assistant" and e.message is not None else None
    mid = mid if isinstance(mid, str) and mid else None
    response = (mid or e.uuid) if kind == "assistant" and _shown(e, blocks) else None
    boundary = kind == "system" and e.subtype == "compact_boundary"
    scan.links.append(
        Link(
            type=kind,
            uuid=e.uuid,
            parent=e.parent_uuid,
            sidechain=bool(e.is_sidechain),
            timestamp=str(e.timestamp or ""),
            prompt=text is not None,
            response=response,
            message_id=mid,
            tool_result=kind == "user" and any(b.type == "tool_result" for b in blocks),
            source_tool=e.source_tool_assistant_uuid
            if isinstance(e.source_tool_assistant_uuid, str)
            else None,
            subtype=e.subtype if kind == "system" and isinstance(e.subtype, str) else None,
            compact_metadata=e.compact_metadata if boundary else None,
        )
    )


def take_lines(data: bytes, scan: Scan) -> None:
    """Add the lines of ``data`` to ``scan``, skipping those :func:`.entries.load` skips
    (blank, not JSON, not an entry, a request body copy, a chain entry without a uuid)."""
    for raw in data.split(b"\n"):
        if not raw or raw.isspace() or raw.startswith(BULK_PREFIX):
            continue
        try:
            e = _decode(raw)
        except msgspec.DecodeError:
            continue
        if not isinstance(e.type, str) or (e.type in CHAIN_TYPES and not e.uuid):
            continue
        _take(e, scan)


def _chunks(f: BinaryIO) -> Iterator[bytes]:
    """The rest of ``f`` from where it is, in pieces that end at a line end (the last
    piece may end without one: a line the CLI is still writing)."""
    carry = b""
    while chunk := f.read(_CHUNK):
        data = carry + chunk
        end = data.rfind(b"\n") + 1
        if end:
            yield data[:end]
        carry = data[end:]
    if carry:
        yield carry


def extend(f: BinaryIO, scan: Scan) -> Scan | None:
    """Read ``f`` from ``scan.offset`` to its end into ``scan`` (complete lines only: its
    ``offset`` moves to the last line end). Returns ``scan`` with the line still being
    written (no line end yet) taken too, as a copy, or None when there is no such line."""
    f.seek(scan.offset)
    for piece in _chunks(f):
        if not piece.endswith(b"\n"):
            last = Scan(
                scan.offset,
                msgspec.structs.replace(scan.fold, titles=dict(scan.fold.titles)),
                list(scan.links),
            )
            take_lines(piece, last)
            return last
        take_lines(piece, scan)
        scan.offset += len(piece)
    return None


class Tally(msgspec.Struct):
    """``messageCount`` of the links read so far, and what :func:`advance` needs to add
    appended links to it without the earlier ones.

    ``tip``: where the chain walk starts (the leaf, or the system entry after it);
    ``prompts``: the prompts on the chain; ``counted``: the responses counted (a
    response's message id, else its uuid), including those of a parallel turn's entries
    that the walk passed by; ``chain_mids``: the message ids on the chain; ``shown_mids``:
    the message ids of every non-sidechain assistant entry that shows something;
    ``guarded``: the uuids the last compact boundary names (its preserved segment);
    ``loose``: the entries after the leaf that are not on the chain (the attachments the
    CLI writes after a response: the next prompt is their child).
    """

    tip: str | None = None
    prompts: int = 0
    counted: set[str] = msgspec.field(default_factory=set)
    chain_mids: set[str] = msgspec.field(default_factory=set)
    shown_mids: set[str] = msgspec.field(default_factory=set)
    guarded: set[str] = msgspec.field(default_factory=set)
    loose: list[Link] = msgspec.field(default_factory=list)

    @property
    def count(self) -> int:
        """``messageCount``: prompts plus responses on the chain."""
        return self.prompts + len(self.counted)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (dicts and lists walked)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _leaf(links: list[Link], start: int = 0) -> int | None:
    """The index of the last non-sidechain user or assistant entry of ``links[start:]``."""
    return next(
        (
            i
            for i in range(len(links) - 1, start - 1, -1)
            if links[i].type in ("user", "assistant") and not links[i].sidechain
        ),
        None,
    )


def _tip(links: list[Link], tip: str | None, leaf: int | None) -> str | None:
    """Where :func:`.chain.conversation` starts its walk, given the ``tip`` of the links
    before these and the ``leaf`` of these (:func:`_leaf`): the leaf, then each system
    entry after it that is the child of the one before."""
    start = 0
    if leaf is not None:
        tip, start = links[leaf].uuid, leaf + 1
    for link in links[start:]:
        if tip is not None and link.type == "system" and link.parent == tip:
            tip = link.uuid
    return tip


def tally(links: list[Link]) -> Tally:
    """The tally of a whole file's ``links``: the chain found by :func:`.chain.conversation`."""
    lines = [Line(0, i, link.entry()) for i, link in enumerate(links)]
    chain = [links[line.index] for line in conversation(File(lines, [], 0.0), [])]
    boundary = next(
        (ln for ln in reversed(links) if ln.type == "system" and ln.subtype == "compact_boundary"),
        None,
    )
    leaf = _leaf(links)
    on_chain = {link.uuid for link in chain}
    return Tally(
        tip=_tip(links, None, leaf),
        prompts=sum(1 for link in chain if link.prompt),
        counted={link.response for link in chain if link.response is not None},
        chain_mids={link.message_id for link in chain if link.message_id is not None},
        shown_mids={
            link.message_id
            for link in links
            if link.message_id is not None and link.response is not None and not link.sidechain
        },
        guarded=set(_strings(boundary.compact_metadata)) if boundary is not None else set(),
        loose=[]
        if leaf is None
        else [link for link in links[leaf + 1 :] if link.uuid not in on_chain],
    )


def message_count(links: list[Link]) -> int:
    """Prompts plus responses on the current conversation chain of ``links``."""
    return tally(links).count


def _key(name: str) -> int:
    data = name.encode()
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def link_keys(links: list[Link]) -> list[int]:
    """A 64-bit key of each uuid in ``links`` and of each parent uuid not among them, for
    :func:`advance`'s ``known`` (two names with one key only send it to the slow path)."""
    uuids = {link.uuid for link in links}
    missing = {link.parent for link in links} - uuids
    return [_key(name) for name in (*uuids, *missing) if name is not None]


def advance(tally: Tally, added: list[Link], known: set[int]) -> bool:
    """Add the links appended to a file to its ``tally`` when they only extend the chain
    (the usual turn: new entries hanging off the walk's start); False, with ``tally``
    unchanged, when they may change it otherwise (a branch off an earlier entry, a
    compaction, a uuid the file already names, a link to an entry not in the file): the
    caller then tallies the whole file. ``known``: :func:`link_keys` of the earlier links.
    """
    old_tip = tally.tip
    if old_tip is None or old_tip in tally.guarded:
        return False
    by_uuid = {link.uuid: link for link in added}
    if len(by_uuid) != len(added):
        return False
    for link in added:
        if (
            (link.type == "system" and link.subtype == "compact_boundary")
            or link.uuid in tally.guarded
            or link.parent in tally.guarded
        ):
            return False
    if any(_key(uuid) in known for uuid in by_uuid):
        return False  # an entry the file has, or a parent it misses: the walk may change
    leaf = _leaf(added)
    tip = _tip(added, old_tip, leaf)
    loose = {link.uuid: link for link in tally.loose}
    walk: list[Link] = []
    current = tip
    while current != old_tip:
        step = by_uuid.get(current) or loose.get(current) if current is not None else None
        if step is None or step.uuid in tally.guarded or len(walk) > len(by_uuid) + len(loose):
            return False  # a branch off an earlier entry, a link to none, or a loop
        walk.append(step)
        current = step.parent
    for link in added:
        if link.message_id is not None and link.response is not None and not link.sidechain:
            tally.shown_mids.add(link.message_id)
            if link.message_id in tally.chain_mids:
                tally.counted.add(link.message_id)
    for link in walk:
        tally.prompts += link.prompt
        if link.response is not None:
            tally.counted.add(link.response)
        if link.message_id is not None:
            tally.chain_mids.add(link.message_id)
            if link.message_id in tally.shown_mids:
                tally.counted.add(link.message_id)
    walked = {link.uuid for link in walk}
    after = added if leaf is None else added[leaf + 1 :]
    kept = tally.loose if leaf is None else []
    tally.loose = [link for link in (*kept, *after) if link.uuid not in walked]
    tally.tip = tip
    return True
