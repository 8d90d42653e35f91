"""The Claude Code CLI's own session files: listing, replaying history, renaming, deleting.

The CLI stores each conversation as JSON lines at
``<config>/projects/<slug of the cwd>/<session id>.jsonl`` where ``<config>`` is
``$HOME/.claude`` (or ``$CLAUDE_CONFIG_DIR``). Nothing here talks to a CLI process:
these are functions over those files, verified against CLI 2.1.330. Reading is done
here; renaming and deleting are done by the official SDK's ``rename_session`` and
``delete_session`` (see :func:`rename_session`), so that a session is edited exactly the
way every other SDK host edits it.

What a session file holds (CLI 2.1.330)
---------------------------------------
One JSON object per line, each with a ``type``:

* Conversation entries, linked by ``uuid`` / ``parentUuid``: ``user`` (prompts, tool
  results, meta lines), ``assistant`` (**one entry per content block**: a reply with
  thinking + text + tool_use is three entries sharing ``message.id``), ``system``
  (``compact_boundary``, ``local_command`` output, ...), ``attachment`` (context the CLI
  injected: environment, date, files, prompt snapshots; never shown) and, in older CLIs,
  ``progress``.
* Metadata lines without a uuid: ``custom-title`` (``/rename``), ``ai-title``, ``summary``
  (older CLIs), ``last-prompt``, ``agent-name``, ``mode``, ``permission-mode``, ``tag``,
  ``cost-state``, ``queue-operation``, ``api-request*``, ``tools-used``, ``atis-latch``,
  ``file-history-snapshot``, ... New ones appear in every release; they are ignored.

Sub-agents (the ``Agent``/``Task`` tool) write their own transcript at
``<project dir>/<session id>/subagents/**/agent-<id>.jsonl`` next to an
``agent-<id>.meta.json`` naming the ``toolUseId`` that started them.

The conversation chain
----------------------
The file is a tree, not a list: ``--resume-session-at`` branches off an earlier message,
parallel tool calls fan out (each tool result's parent is its own call), and after a
``/compact`` the chain starts again at a ``compact_boundary`` whose ``parentUuid`` is null.
:func:`read_history` does what the CLI does on resume:

1. The leaf is the **last** ``user``/``assistant`` entry in the file that is not a
   sidechain (or a ``system`` entry written after it as its child, such as the output of a
   final slash command); the chain is the walk from it along ``parentUuid`` to the root.
2. A compact boundary carrying a preserved segment (``compactMetadata.preservedSegment``
   or ``preservedMessages``) is relinked as the CLI does: the preserved messages follow
   the compact summary, and what was chained on the summary follows them.
   ``logicalParentUuid`` (the pre-compaction history) is not followed: like the CLI,
   the history of a compacted session starts at its last compaction.
3. A ``parentUuid`` that is not in the file (a lost or corrupt line) is bridged to the
   closest earlier entry in the file, with a warning.
4. Tool calls and results of a parallel turn that the walk passed by (siblings sharing
   the response's ``message.id``, results whose parent is one of them) are put back
   right after the response.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import msgspec

from .api import (History, HistoryKind, HistoryMessage, SessionPage, SessionSummary,
                  is_absolute_path, is_uuid)

__all__ = [
    "ConfigDirMismatch",
    "delete_session",
    "list_sessions",
    "project_dir",
    "read_history",
    "rename_session",
]

# ---------------------------------------------------------------- results


def _user_answer(entry: _Entry) -> Literal["allowed", "denied"] | None:
    """How the user answered the permission request of a tool result's entry (CLI 2.1.330
    stores ``permissionDecision`` {decision: accept | reject, source: user_... | ...});
    None when the user was not asked (rules, modes) or the CLI stored nothing."""
    answer = entry.permission_decision
    if not isinstance(answer, dict) or not str(answer.get("source", "")).startswith("user"):
        return None
    if answer.get("decision") == "accept":
        return "allowed"
    if answer.get("decision") == "reject":
        return "denied"
    return None


# ---------------------------------------------------------------- paths

_SLUG_MAX = 200
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def _js_hash36(text: str) -> str:
    """The CLI's ``Math.abs(hash).toString(36)``: Java's String.hashCode over UTF-16 units."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (h * 31 + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    h = abs(h - 0x100000000 if h >= 0x80000000 else h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if not h:
            return out


def _slug(path: str) -> str:
    """The CLI's directory name for ``path``.

    Every UTF-16 code unit that is not an ASCII letter or digit becomes ``-`` (so ``é``
    is one ``-`` and an emoji two); a result longer than 200 characters is cut to 200
    and gets ``-<base-36 hash of the path>`` appended.
    """
    units = path.encode("utf-16-le", "surrogatepass")
    slug = "".join(
        chr(u) if u < 128 and _NON_ALNUM.match(chr(u)) is None else "-"
        for u in (units[i] | units[i + 1] << 8 for i in range(0, len(units), 2)))
    if len(slug) <= _SLUG_MAX:
        return slug
    return f"{slug[:_SLUG_MAX]}-{_js_hash36(path)}"


def claude_home(env: Mapping[str, str]) -> tuple[Path, Path | None]:
    """``$HOME`` and ``$CLAUDE_CONFIG_DIR`` (None when unset) as a CLI run in ``env`` reads them."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    return Path(env.get("HOME", "~")).expanduser(), Path(config_dir) if config_dir else None


def config_home(home: Path, config_dir: Path | None) -> Path:
    """The CLI's config home: ``config_dir`` if set, else ``home/.claude``."""
    return config_dir if config_dir is not None else Path(home) / ".claude"


def _projects_root(home: Path, config_dir: Path | None) -> Path:
    return config_home(home, config_dir) / "projects"


def project_dir(home: Path, cwd: str, *, config_dir: Path | None = None) -> Path:
    """The folder where the CLI keeps the sessions it ran in ``cwd``.

    ``cwd`` must be absolute; symlinks are resolved first (the CLI sees the real path).
    ``config_dir`` replaces ``home/.claude`` for a CLI run with ``CLAUDE_CONFIG_DIR``.
    The folder may not exist (no session was ever run there).
    """
    if not is_absolute_path(cwd):
        raise ValueError(f"cwd must be an absolute path, got {cwd[:200]!r}")
    return _projects_root(home, config_dir) / _slug(os.path.realpath(cwd))


def _existing_project_dir(home: Path, cwd: str, config_dir: Path | None) -> Path | None:
    """``project_dir``, or for a cut (long) slug any folder with the same 200-char prefix.

    CLIs hashed long paths differently across versions and runtimes (Bun vs Node), so
    the suffix may not match what this module computes.
    """
    exact = project_dir(home, cwd, config_dir=config_dir)
    if exact.is_dir():
        return exact
    if len(exact.name) <= _SLUG_MAX:
        return None
    prefix = exact.name[:_SLUG_MAX] + "-"
    try:
        for candidate in sorted(exact.parent.iterdir()):
            if candidate.name.startswith(prefix) and candidate.is_dir():
                return candidate
    except OSError:
        pass
    return None


def _check_session_id(session_id: str) -> None:
    if not is_uuid(session_id):
        raise ValueError(f"session id is not a UUID: {str(session_id)[:80]!r}")


# ---------------------------------------------------------------- decoding


class _Block(msgspec.Struct):
    """A content block of a message (any type; only the fields used here)."""

    type: str = ""
    text: Any = None
    thinking: Any = None
    id: Any = None
    name: Any = None
    input: Any = None
    tool_use_id: Any = None
    content: Any = None
    is_error: Any = None


class _Message(msgspec.Struct):
    """The ``message`` of a user or assistant entry."""

    id: Any = None
    content: str | list[_Block] | None = None


class _Entry(msgspec.Struct, rename="camel"):
    """One line of a session file; unknown fields are ignored."""

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
    content: Any = None
    level: Any = None
    cwd: Any = None
    git_branch: Any = None
    custom_title: Any = None
    ai_title: Any = None
    summary: Any = None
    origin: Any = None
    compact_metadata: Any = None
    source_tool_assistant_uuid: Any = msgspec.field(default=None, name="sourceToolAssistantUUID")
    permission_decision: Any = None


class _TypeOnly(msgspec.Struct):
    type: Any = None


_decoder = msgspec.json.Decoder(_Entry)
_type_decoder = msgspec.json.Decoder(_TypeOnly)
# Copies of API request bodies (most of a file's bytes): never needed, not decoded.
_BULK_PREFIX = b'{"type":"api-request'

# Entry types that are part of the conversation tree.
_CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})


class _Line(msgspec.Struct):
    """A decoded entry and where it was in the file."""

    number: int
    index: int
    entry: _Entry


class _File(msgspec.Struct):
    """A session file, decoded."""

    lines: list[_Line]
    warnings: list[str]
    mtime: float


def _load(path: Path, label: str = "") -> _File:
    """Decode every line of ``path``; lines that cannot be read become warnings."""
    with open(path, "rb") as f:
        data = f.read()
        mtime = os.fstat(f.fileno()).st_mtime
    where = f"{label}: " if label else ""
    lines: list[_Line] = []
    warnings: list[str] = []
    raw_lines = data.split(b"\n")
    last = len(raw_lines)
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip() or raw.startswith(_BULK_PREFIX):
            continue
        try:
            entry = _decoder.decode(raw)
        except msgspec.ValidationError as e:
            try:
                kind = _type_decoder.decode(raw).type
            except msgspec.DecodeError:
                kind = None
            if isinstance(kind, str) and kind not in _CHAIN_TYPES:
                continue  # metadata of a shape this module does not know: not needed
            warnings.append(f"{where}line {number}: not a session entry ({e}); skipped")
            continue
        except msgspec.DecodeError as e:
            if number == last:
                warnings.append(f"{where}line {number}: truncated entry at the end of the file "
                                f"(the CLI may still be writing it); skipped")
            else:
                warnings.append(f"{where}line {number}: not valid JSON ({e}); skipped")
            continue
        if not isinstance(entry.type, str):
            warnings.append(f"{where}line {number}: entry without a type; skipped")
            continue
        if entry.type in _CHAIN_TYPES and not entry.uuid:
            warnings.append(f"{where}line {number}: {entry.type} entry without a uuid; skipped")
            continue
        if entry.uuid and entry.type not in _CHAIN_TYPES:
            warnings.append(f"{where}line {number}: entry of unknown type {entry.type!r}; "
                            f"not shown")
        lines.append(_Line(number, len(lines), entry))
    return _File(lines, warnings, mtime)


# ---------------------------------------------------------------- the chain


def _relink_preserved(nodes: dict[str, _Line], parent: dict[str, str | None],
                      lines: list[_Line]) -> None:
    """Apply the last compact boundary's preserved segment, as the CLI does on load."""
    boundary = next((ln for ln in reversed(lines) if ln.entry.type == "system"
                     and ln.entry.subtype == "compact_boundary"), None)
    meta = boundary.entry.compact_metadata if boundary else None
    if not isinstance(meta, dict):
        return
    uuids: list[str] = []
    anchor: Any = None
    kept = meta.get("preservedMessages")
    segment = meta.get("preservedSegment")
    if isinstance(kept, dict) and isinstance(kept.get("uuids"), list):
        anchor = kept.get("anchorUuid")
        uuids = [u for u in kept["uuids"] if isinstance(u, str)]
    elif isinstance(segment, dict):
        anchor, head, current = (segment.get("anchorUuid"), segment.get("headUuid"),
                                 segment.get("tailUuid"))
        seen: set[str] = set()
        while isinstance(current, str) and current in nodes and current not in seen:
            seen.add(current)
            uuids.append(current)
            if current == head:
                break
            current = parent.get(current)
        if not uuids or uuids[-1] != head:
            return
        uuids.reverse()
    if not uuids or not isinstance(anchor, str) or any(u not in nodes for u in uuids):
        return
    for uuid, previous in zip(uuids, [anchor, *uuids[:-1]], strict=True):
        parent[uuid] = previous
    for uuid, p in list(parent.items()):
        if p == anchor and uuid != uuids[0]:
            parent[uuid] = uuids[-1]


def _message_id(entry: _Entry) -> str | None:
    if entry.type != "assistant" or entry.message is None:
        return None
    return entry.message.id if isinstance(entry.message.id, str) and entry.message.id else None


def _blocks(entry: _Entry) -> list[_Block]:
    content = entry.message.content if entry.message is not None else None
    return content if isinstance(content, list) else []


def _chain(file: _File, warnings: list[str], sidechain: bool = False) -> list[_Line]:
    """The current conversation, root first (see the module docstring)."""
    nodes: dict[str, _Line] = {}
    parent: dict[str, str | None] = {}
    for line in file.lines:
        e = line.entry
        if e.uuid:  # unknown types with a uuid are kept so that the chain goes through them
            nodes[e.uuid] = line
            parent[e.uuid] = e.parent_uuid
    leaf = next((ln for ln in reversed(file.lines) if ln.entry.type in ("user", "assistant")
                 and (sidechain or not ln.entry.is_sidechain)), None)
    if leaf is None:
        return []
    for line in file.lines[leaf.index + 1:]:  # e.g. the output of a final slash command
        if line.entry.type == "system" and line.entry.parent_uuid == leaf.entry.uuid:
            leaf = line
    _relink_preserved(nodes, parent, file.lines)

    chain: list[_Line] = []
    seen: set[str] = set()
    current: _Line | None = leaf
    while current is not None:
        uuid = current.entry.uuid
        assert uuid is not None
        seen.add(uuid)
        chain.append(current)
        p = parent.get(uuid)
        if not p:
            break
        nxt = nodes.get(p)
        if nxt is not None and p in seen:
            warnings.append(f"line {current.number}: the chain loops back to {p}; "
                            f"the history before it is left out")
            break
        if nxt is None:
            nxt = next((ln for ln in reversed(file.lines[:current.index]) if ln.entry.uuid
                        and ln.entry.uuid not in seen and ln.entry.type in _CHAIN_TYPES
                        and (sidechain or not ln.entry.is_sidechain)), None)
            joined = (f"joined to the entry on line {nxt.number}" if nxt is not None
                      else "the history before it is missing")
            warnings.append(f"line {current.number}: parent {p} is not in the file; {joined}")
        current = nxt
    chain.reverse()
    return _recover_parallel(file, chain, seen, sidechain)


def _recover_parallel(file: _File, chain: list[_Line], seen: set[str],
                      sidechain: bool) -> list[_Line]:
    """Put back the calls and results of parallel tool use that the walk passed by."""
    siblings: dict[str, list[_Line]] = {}
    results: dict[str, list[_Line]] = {}
    for line in file.lines:
        e = line.entry
        if e.is_sidechain and not sidechain:
            continue
        if (mid := _message_id(e)) is not None:
            siblings.setdefault(mid, []).append(line)
        elif e.type == "user" and any(b.type == "tool_result" for b in _blocks(e)):
            for key in {e.parent_uuid, e.source_tool_assistant_uuid}:
                if isinstance(key, str):
                    results.setdefault(key, []).append(line)
    inserts: dict[str, list[_Line]] = {}
    done: set[str] = set()
    anchors = {mid: line for line in chain if (mid := _message_id(line.entry)) is not None}
    for mid, anchor in anchors.items():
        if mid in done:
            continue
        done.add(mid)
        group = siblings.get(mid, [])
        found = [ln for ln in group if ln.entry.uuid not in seen]
        taken = {ln.entry.uuid for ln in found}
        for member in group:
            for result in results.get(member.entry.uuid or "", ()):
                if result.entry.uuid not in seen and result.entry.uuid not in taken:
                    taken.add(result.entry.uuid)
                    found.append(result)
        if not found:
            continue
        found.sort(key=lambda ln: (ln.entry.type != "assistant", str(ln.entry.timestamp or ""),
                                   ln.index))
        seen.update(ln.entry.uuid for ln in found if ln.entry.uuid)
        inserts[anchor.entry.uuid or ""] = found
    if not inserts:
        return chain
    out: list[_Line] = []
    for line in chain:
        out.append(line)
        out.extend(inserts.get(line.entry.uuid or "", ()))
    return out


# ---------------------------------------------------------------- rendering

_REMINDER = re.compile(r"^\s*<(system-reminder|ide_opened_file|ide_selection)>.*</\1>\s*$", re.S)
_TAG = r"<{0}>(.*?)</{0}>"
_INTERRUPTED = "[Request interrupted by user"
# A user entry whose text starts like this is the CLI talking, not the user.
_SYSTEM_PREFIXES = (
    ("<local-command-stdout>", "commandOutput"),
    ("<local-command-stderr>", "commandOutput"),
    ("<bash-stdout>", "commandOutput"),
    ("<bash-stderr>", "commandOutput"),
    ("<task-notification>", "taskNotification"),
    ("<session-start-hook>", "hook"),
    ("<tick>", "tick"),
    ("<goal>", "goal"),
    (_INTERRUPTED, "interrupted"),
)
_ASSISTANT_TOOL_USES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_QUIET_BLOCKS = frozenset({"redacted_thinking", "image", "document", "container_upload"})


def _tag(name: str, text: str) -> str | None:
    m = re.search(_TAG.format(re.escape(name)), text, re.S)
    return m.group(1).strip() if m else None


def _strip_tags(text: str) -> str:
    return re.sub(r"</?(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>",
                  "", text).strip()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _result_text(content: Any) -> tuple[str, int]:
    """The text of a tool result's content and how many images it holds."""
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    images = 0
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "image":
                images += 1
    return "\n".join(texts), images


class _Renderer:
    """Turns chain entries into HistoryMessages, collecting warnings."""

    def __init__(self, warnings: list[str], label: str = "",
                 parent_tool_use_id: str | None = None) -> None:
        self.warnings = warnings
        self.where = f"{label}: " if label else ""
        self.parent_tool_use_id = parent_tool_use_id
        self.messages: list[HistoryMessage] = []
        self.prompts = 0
        self.responses: set[str] = set()
        self.first_prompt: str | None = None
        self.first_command: str | None = None

    def add(self, line: _Line, kind: HistoryKind, **fields: Any) -> None:
        e = line.entry
        self.messages.append(HistoryMessage(
            kind=kind, uuid=e.uuid or "", timestamp=e.timestamp if isinstance(
                e.timestamp, str) else None, parent_tool_use_id=self.parent_tool_use_id,
            **fields))

    def render(self, line: _Line) -> None:
        e = line.entry
        if e.type == "user":
            self._user(line)
        elif e.type == "assistant":
            self._assistant(line)
        elif e.type == "system":
            self._system(line)

    def _user(self, line: _Line) -> None:
        e = line.entry
        if e.is_meta or e.message is None:
            return
        content = e.message.content
        if e.is_compact_summary:
            text = content if isinstance(content, str) else "\n".join(
                b.text for b in content or () if b.type == "text" and isinstance(b.text, str))
            self.add(line, "system", subtype="compactSummary", text=text)
            return
        blocks: list[_Block] = ([_Block(type="text", text=content)] if isinstance(content, str)
                                else content or [])
        if any(b.type == "tool_result" for b in blocks):
            for b in blocks:
                if b.type == "tool_result":
                    text, images = _result_text(b.content)
                    self.add(line, "toolResult", tool_use_id=b.tool_use_id if isinstance(
                        b.tool_use_id, str) else None, text=text, is_error=b.is_error is True,
                        image_count=images, permission=_user_answer(e))
                elif b.type == "text" and isinstance(b.text, str) and b.text.startswith(
                        _INTERRUPTED):
                    self.add(line, "system", subtype="interrupted", text=b.text)
            return
        texts: list[str] = []
        images = 0
        for i, b in enumerate(blocks):
            if b.type == "text" and isinstance(b.text, str):
                if not _REMINDER.match(b.text):
                    texts.append(b.text)
            elif b.type == "image":
                images += 1
            elif b.type not in _QUIET_BLOCKS:
                self.warnings.append(f"{self.where}line {line.number}: content block {i} of "
                                     f"unknown type {b.type!r}; not shown")
        text = "\n".join(texts).strip()
        if not text and not images:
            return
        if isinstance(e.origin, dict) and e.origin.get("kind") == "task-notification":
            self._notification(line, text)
            return
        for prefix, subtype in _SYSTEM_PREFIXES:
            if text.startswith(prefix):
                if subtype == "taskNotification":
                    self._notification(line, text)
                else:
                    self.add(line, "system", subtype=subtype, text=_strip_tags(text))
                return
        command = text.startswith("<command-name>")
        if command:
            name = _tag("command-name", text) or ""
            args = _tag("command-args", text) or ""
            text = f"{name} {args}".strip()
        elif text.startswith("<bash-input>"):
            text = "!" + (_tag("bash-input", text) or "")
        self.prompts += 1
        self.add(line, "userPrompt", text=text, image_count=images)
        if command:
            self.first_command = self.first_command or text
        else:
            self.first_prompt = self.first_prompt or text

    def _notification(self, line: _Line, text: str) -> None:
        summary = _tag("summary", text)
        result = _tag("result", text)
        shown = "\n\n".join(p for p in (summary, result) if p) or text
        self.add(line, "system", subtype="taskNotification", text=shown)

    def _assistant(self, line: _Line) -> None:
        e = line.entry
        blocks = _blocks(e)
        if e.is_api_error_message:
            text = "\n".join(b.text for b in blocks if isinstance(b.text, str))
            self.add(line, "system", subtype="apiError", text=text)
            return
        shown = False
        for i, b in enumerate(blocks):
            if b.type == "text" and isinstance(b.text, str):
                self.add(line, "assistantText", text=b.text)
            elif b.type == "thinking" and isinstance(b.thinking, str):
                self.add(line, "thinking", text=b.thinking)
            elif b.type in _ASSISTANT_TOOL_USES:
                self.add(line, "toolUse", tool_name=b.name if isinstance(b.name, str) else "",
                         tool_use_id=b.id if isinstance(b.id, str) else None, input=b.input)
            elif b.type.endswith("_tool_result"):
                text, images = _result_text(b.content)
                self.add(line, "toolResult", tool_use_id=b.tool_use_id if isinstance(
                    b.tool_use_id, str) else None, text=text, is_error=b.is_error is True,
                    image_count=images)
            elif b.type not in _QUIET_BLOCKS:
                self.warnings.append(f"{self.where}line {line.number}: content block {i} of "
                                     f"unknown type {b.type!r}; not shown")
                continue
            else:
                continue
            shown = True
        if shown:
            self.responses.add(_message_id(e) or e.uuid or "")

    def _system(self, line: _Line) -> None:
        e = line.entry
        subtype = e.subtype if isinstance(e.subtype, str) else ""
        text = e.content if isinstance(e.content, str) else None
        if subtype == "compact_boundary":
            self.add(line, "system", subtype="compactBoundary",
                     text=text or "Conversation compacted")
        elif subtype == "local_command":
            self.add(line, "system", subtype="commandOutput", text=_strip_tags(text or ""))
        elif text and e.level in ("warning", "error"):
            self.add(line, "system", subtype=_camel(subtype) or "notice", text=text)


# ---------------------------------------------------------------- history


def transcript_path(home: Path, cwd: str, session_id: str, *,
                    config_dir: Path | None = None) -> Path:
    """Where the CLI keeps (or will keep) the transcript of session ``session_id``."""
    directory = _existing_project_dir(home, cwd, config_dir)
    return (directory or project_dir(home, cwd, config_dir=config_dir)) / f"{session_id}.jsonl"


def _session_file(home: Path, cwd: str, session_id: str, config_dir: Path | None) -> Path:
    _check_session_id(session_id)
    path = transcript_path(home, cwd, session_id, config_dir=config_dir)
    if not path.is_file():
        raise FileNotFoundError(f"no session {session_id} for {cwd} (looked for {path})")
    return path


def session_exists(home: Path, cwd: str, session_id: str, *,
                   config_dir: Path | None = None) -> bool:
    """Whether the CLI has stored session ``session_id`` of ``cwd`` (it writes the file
    with the first message, so a CLI that died before one left nothing to resume)."""
    try:
        _session_file(home, cwd, session_id, config_dir)
    except FileNotFoundError:
        return False
    return True


def _subagents(session_path: Path, warnings: list[str]) -> dict[str, list[_Renderer]]:
    """Each sub-agent transcript of a session, rendered, by the tool use that started it."""
    root = session_path.with_suffix("") / "subagents"
    by_tool_use: dict[str, list[_Renderer]] = {}
    if not root.is_dir():
        return by_tool_use
    for path in sorted(root.rglob("agent-*.jsonl")):
        label = str(path.relative_to(session_path.parent))
        try:
            meta = msgspec.json.decode(path.with_name(path.name[:-6] + ".meta.json").read_bytes())
        except (OSError, msgspec.DecodeError):
            meta = None
        tool_use_id = meta.get("toolUseId") if isinstance(meta, dict) else None
        if not isinstance(tool_use_id, str):
            warnings.append(f"{label}: no toolUseId in its .meta.json; sub-agent not shown")
            continue
        try:
            file = _load(path, label)
        except OSError as e:
            warnings.append(f"{label}: cannot be read ({e}); sub-agent not shown")
            continue
        sub_warnings: list[str] = []
        renderer = _Renderer(file.warnings, label, tool_use_id)
        for line in _chain(file, sub_warnings, sidechain=True):
            renderer.render(line)
        warnings += file.warnings + [f"{label}: {w}" for w in sub_warnings]
        by_tool_use.setdefault(tool_use_id, []).append(renderer)
    return by_tool_use


def _with_subagents(messages: list[HistoryMessage],
                    agents: dict[str, list[_Renderer]]) -> list[HistoryMessage]:
    """Insert each sub-agent's messages after the result (else the call) of its tool use."""
    if not agents:
        return messages
    answered = {m.tool_use_id for m in messages if m.kind == "toolResult"}
    out: list[HistoryMessage] = []
    for message in messages:
        out.append(message)
        tid = message.tool_use_id
        if tid in agents and (message.kind == "toolResult" or (
                message.kind == "toolUse" and tid not in answered)):
            for renderer in agents.pop(tid):
                out.extend(_with_subagents(renderer.messages, agents))
    return out


def _read(path: Path, session_id: str) -> tuple[History, _Renderer, _File]:
    file = _load(path)
    warnings = file.warnings
    renderer = _Renderer(warnings)
    for line in _chain(file, warnings):
        renderer.render(line)
    return History(session_id, renderer.messages, warnings), renderer, file


def read_history(home: Path, cwd: str, session_id: str, *,
                 config_dir: Path | None = None) -> History:
    """The conversation of one stored session, as an editor shows it.

    Raises ``ValueError`` if ``session_id`` is not a UUID or ``cwd`` is not absolute
    (checked before any file is touched) and ``FileNotFoundError`` if there is no such
    session in ``cwd``'s project folder. Problems inside the file never raise: they are
    listed in ``warnings`` and the rest is returned.

    Rules (see the module docstring for how the chain is found):

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
    """
    path = _session_file(home, cwd, session_id, config_dir)
    history, _, _ = _read(path, session_id)
    agents = _subagents(path, history.warnings)
    history.messages = _with_subagents(history.messages, agents)
    return history


# ---------------------------------------------------------------- listing

_TITLE_MAX = 80
_PROMPT_MAX = 200
_cache: OrderedDict[Path, tuple[int, int, SessionSummary | None]] = OrderedDict()
_CACHE_MAX = 4096
_cache_lock = threading.Lock()  # the daemon may list from worker threads


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _iso(value: Any) -> str | None:
    """A timestamp as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (sortable as text), or None."""
    try:
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


def _summarize(path: Path, session_id: str) -> SessionSummary | None:
    """The listing entry of one session file; None if it has no user prompt."""
    history, renderer, file = _read(path, session_id)
    first = command = None
    titles: dict[str, str] = {}
    cwd = branch = None
    stamps: list[str] = []
    for line in file.lines:
        e = line.entry
        if e.is_sidechain:
            continue
        if (stamp := _iso(e.timestamp)) is not None:
            stamps.append(stamp)
        for key, value in (("custom-title", e.custom_title), ("ai-title", e.ai_title),
                           ("summary", e.summary)):
            if e.type == key and isinstance(value, str) and value.strip():
                titles[key] = value
        if cwd is None and isinstance(e.cwd, str):
            cwd = e.cwd
        if isinstance(e.git_branch, str) and e.git_branch:
            branch = e.git_branch
        if first is None and e.type == "user":
            probe = _Renderer([])
            probe.render(line)
            first = probe.first_prompt
            command = command or probe.first_command
    prompt = first or command
    if prompt is None:
        return None
    mtime = _iso(file.mtime) or ""
    title = next((titles[k].strip() for k in ("custom-title", "ai-title", "summary")
                  if k in titles), None) or _cut(prompt, _TITLE_MAX)
    custom = titles["custom-title"].strip() if "custom-title" in titles else None
    return SessionSummary(
        session_id=session_id, title=title, first_prompt=_cut(prompt, _PROMPT_MAX),
        updated_at=max(stamps) if stamps else mtime, created_at=min(stamps) if stamps else mtime,
        message_count=renderer.prompts + len(renderer.responses), custom_title=custom,
        cwd=cwd, git_branch=branch)


def _cached_summary(path: Path, session_id: str) -> SessionSummary | None:
    try:
        st = path.stat()
    except OSError:
        return None
    with _cache_lock:
        hit = _cache.get(path)
        if hit is not None and hit[:2] == (st.st_mtime_ns, st.st_size):
            _cache.move_to_end(path)
            return hit[2]
    try:
        summary = _summarize(path, session_id)
    except OSError:
        return None
    with _cache_lock:
        _cache[path] = (st.st_mtime_ns, st.st_size, summary)
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return summary


def _encode_cursor(summary: SessionSummary) -> str:
    raw = f"{summary.updated_at}|{summary.session_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[str, str]:
    problem = ("invalid cursor: pass the nextCursor of a previous claude/listSessions "
               "page unchanged, or leave it out for the first page")
    if not isinstance(cursor, str) or not 0 < len(cursor) <= 200:
        raise ValueError(problem)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError(problem) from None
    stamp, _, session_id = raw.partition("|")
    if _iso(stamp) != stamp or not is_uuid(session_id):
        raise ValueError(problem)
    return stamp, session_id


def list_sessions(home: Path, cwd: str, limit: int = 50, cursor: str | None = None, *,
                  config_dir: Path | None = None) -> SessionPage:
    """The sessions the CLI stored for ``cwd``, newest (``updatedAt``) first.

    ``cursor`` is the ``nextCursor`` of the previous page (None for the first). Cursors
    name a position (the last session shown), so sessions created meanwhile do not shift
    later pages. Raises ``ValueError`` for a bad cursor, a ``limit`` below 1 or a relative
    ``cwd``. A folder with no sessions gives an empty page.

    Listed: files named ``<uuid>.jsonl`` (so not the ``agent-*.jsonl`` sidechains older
    CLIs kept there) holding at least one user prompt outside sidechain entries.
    Results are cached per file by mtime and size.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    after = _decode_cursor(cursor) if cursor is not None else None
    directory = _existing_project_dir(home, cwd, config_dir)
    summaries: list[SessionSummary] = []
    if directory is not None:
        try:
            paths = [p for p in directory.iterdir() if p.suffix == ".jsonl"
                     and is_uuid(p.stem) and p.is_file()]
        except OSError:
            paths = []
        for path in paths:
            summary = _cached_summary(path, path.stem)
            if summary is not None:
                summaries.append(summary)
    summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
    if after is not None:
        summaries = [s for s in summaries if (s.updated_at, s.session_id) < after]
    page = summaries[:limit]
    more = len(summaries) > limit
    return SessionPage(page, _encode_cursor(page[-1]) if more else None)


# ---------------------------------------------------------------- editing


def _sdk() -> ModuleType:
    """The ``claude_agent_sdk`` package, imported on first use: it imports ``mcp``
    (about a second), which the daemon's start-up should not pay for an edit that may
    never come."""
    import claude_agent_sdk
    return claude_agent_sdk


class ConfigDirMismatch(RuntimeError):
    """The SDK would edit another config directory than the one the daemon's CLIs use."""


def _check_sdk_config_dir(home: Path, config_dir: Path | None) -> None:
    """Make sure the SDK's session functions edit the folder the daemon's CLIs write.

    ``claude_agent_sdk.rename_session``/``delete_session`` take no config directory: they
    read ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (``$HOME``), from this process's
    ``os.environ`` (SDK 0.2.187, ``_internal/sessions.py``). The daemon's CLIs get the
    environment the hub was given, which is ``os.environ`` too when the daemon runs as
    ``claude-sidecar --stdio``. Changing ``os.environ`` for the call would leak into every
    other thread of the daemon, so a hub given another environment is refused instead.
    """
    sdk = config_home(*claude_home(os.environ))
    ours = config_home(home, config_dir)
    if os.path.realpath(sdk) != os.path.realpath(ours):
        raise ConfigDirMismatch(
            f"the CLIs of this daemon keep sessions in {ours}, but the SDK's session "
            f"functions would edit {sdk} (they read only the daemon's own environment); "
            "run the daemon with the HOME / CLAUDE_CONFIG_DIR its CLIs use")


def _edit(action: str, home: Path, cwd: str, session_id: str, config_dir: Path | None,
          *args: Any) -> None:
    """Run the SDK's ``action`` (``rename_session``, ``delete_session``) on a session file.

    The file is looked up here first, as :func:`read_history` does, so that an edit finds
    exactly the sessions that :func:`list_sessions` shows for ``cwd`` (the SDK alone would
    also search the other git worktrees of ``cwd``) and an unknown session fails alike
    everywhere. The SDK is then given ``cwd`` as its ``directory``.
    """
    path = _session_file(home, cwd, session_id, config_dir)
    _check_sdk_config_dir(home, config_dir)
    edit = getattr(_sdk(), action)
    try:
        edit(session_id, *args, directory=cwd)
    except FileNotFoundError:
        # SDK 0.2.187 derives the folder from the NFC form of ``cwd`` and replaces code
        # points, the CLI uses the path as given and replaces UTF-16 units (see _slug):
        # for a path with an emoji or in NFD (macOS HFS+) the SDK looks in another
        # folder. Without a directory it searches every folder, which finds the file
        # that was found above, provided that no other folder holds the same id.
        if list(path.parent.parent.glob(f"*/{session_id}.jsonl")) != [path]:
            raise
        edit(session_id, *args, directory=None)


def rename_session(home: Path, cwd: str, session_id: str, title: str, *,
                   config_dir: Path | None = None) -> None:
    """Give the stored session ``session_id`` of ``cwd`` a custom title.

    Done by the SDK's ``rename_session``, which appends
    ``{"type":"custom-title","customTitle":<title stripped>,"sessionId":<id>}`` to the
    session file (the entry the CLI's ``/rename`` writes). The last custom title in the
    file wins, here (:func:`list_sessions`) as in the SDK's and the CLI's listings, so a
    rename can be repeated. Appending is safe while a CLI is writing the same file: it is
    one ``O_APPEND`` write, and (the SDK notes) a CLI that re-appends its metadata reads
    the file's tail first. Verified with CLI 2.1.330: the title stays through the
    channel's later turns and its close.

    Raises ``ValueError`` (``session_id`` not a UUID, ``title`` blank, ``cwd`` not
    absolute), ``FileNotFoundError`` (no such session in ``cwd``'s folder),
    ``ConfigDirMismatch`` (see :func:`_check_sdk_config_dir`), ``OSError`` (the write
    failed).
    """
    if not title.strip():
        raise ValueError("title must not be empty or only whitespace")
    _edit("rename_session", home, cwd, session_id, config_dir, title)


def delete_session(home: Path, cwd: str, session_id: str, *,
                   config_dir: Path | None = None) -> None:
    """Delete the stored session ``session_id`` of ``cwd`` for good.

    Done by the SDK's ``delete_session``: it removes ``<id>.jsonl`` and the ``<id>/``
    folder next to it (sub-agent transcripts). It leaves the CLI's file checkpoints
    (``<config>/file-history/<id>/``). Do not delete the session of a running CLI: the
    CLI keeps appending and recreates the file with only its newest entries (verified
    with CLI 2.1.330), a fragment that lists as a session of its own.

    Raises like :func:`rename_session`.
    """
    _edit("delete_session", home, cwd, session_id, config_dir)


def exchange_end(history: History, message_id: str) -> str | None:
    """The uuid of the last top-level assistant entry answering prompt ``message_id``:
    where a fork "at" that prompt cuts the history (``--resume-session-at``)."""
    end, inside = None, False
    for message in history.messages:
        if message.kind == "userPrompt":
            if inside:
                break
            inside = message.uuid == message_id
        elif inside and message.parent_tool_use_id is None and message.kind in (
                "assistantText", "thinking", "toolUse"):
            end = message.uuid
    return end
