"""Long sessions for tests and benchmarks: a real session's turns repeated to any length.

A seed is one short session run by the real CLI (started as the daemon starts it: the same
flags and environment, ``build_launch``) against the stand-in model: a first text exchange
(the CLI's start-up lines go with it), then a text exchange and an Edit exchange (a tool
use and its result; the file really is edited). ``grow_session`` writes a session file of
any length from it: the first exchange once, then the two later exchanges again and again
with fresh ids (entry uuids, message ids, tool_use ids, request ids, the CLI's request
records) and rising timestamps, every entry on one ``parentUuid`` chain; lines the CLI
writes when it exits (``cost-state``) come once at the end. The file is written as it is
made: a 100k-entry session (~170 MB) is never held in memory.

``CliProcess`` runs the CLI directly, as the daemon would: ``resumed`` times a ``--resume``
until the CLI's ``initialize`` answer (the floor a daemon's resume cannot go under), and a
turn can follow. Used by ``tests/test_long_session.py`` and ``bench/long_session.py``.
"""

from __future__ import annotations

import datetime
import json
import re
import secrets
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from claude_sidecar.cli.launch import build_launch
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.protocol.api import NewChannelParams

from tests.env import isolated_env

FIRST_PROMPT = "hello, this session will grow long"
TEXT_PROMPT = "tell me about the notes"
EDIT_PROMPT = "edit the notes"
NOTES = "notes.txt"
NOTES_BEFORE = "the first line of the notes\n"

SEED_SCENARIO: dict[str, Any] = {
    "rules": [
        {
            "match": "(?i)^edit the notes",
            "steps": [
                [
                    {"text": "I'll change the first line."},
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{cwd}/" + NOTES,
                                "old_string": "first line",
                                "new_string": "edited line",
                            },
                        }
                    },
                ],
                [{"text": "The notes now say `edited line`."}],
            ],
        },
        {
            "match": "(?i)^tell me about",
            "steps": [
                [
                    {
                        "text": "The notes hold one line. It says what the project is about, "
                        "in a few words, and nothing else yet."
                    }
                ]
            ],
        },
    ],
    "default": [[{"text": "Hello! Ask me about the notes."}]],
}
"""What the stand-in model answers while the seed is recorded."""

# Lines the CLI writes once, when its process ends: kept once, at the end of a grown file.
_EXIT_LINES = frozenset({"cost-state"})

_TOKEN = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    rb"|(?<![A-Za-z0-9_])(?:msg|toolu|req)_[A-Za-z0-9_]+"
    rb"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
)
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class CliProcess:
    """One CLI process started with the daemon's command line and environment, spoken to
    over stream-json: ``initialize`` first, then turns."""

    def __init__(
        self, cli: str, env: dict[str, str], cwd: str, session_id: str, resume: bool
    ) -> None:
        options = NewChannelParams(
            cwd=cwd, permission_mode="acceptEdits", resume=session_id if resume else None
        )
        launch = build_launch(cli, options, session_id, env)
        # A file, not a pipe nobody reads while the CLI runs: read when something failed;
        # closed by close(), with the process.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            launch.argv,
            cwd=cwd,
            env=launch.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        try:
            self.initialize_ms = self._initialize()
        except BaseException:
            self.close()
            raise

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def _lines(self) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # the CLI may print other things on stdout
            if line.get("type") == "control_request":
                raise AssertionError(f"the CLI asked something the seed does not answer: {raw!r}")
            yield line
        raise AssertionError(f"the CLI exited: {self._killed()}")

    def _initialize(self) -> float:
        request_id = f"req_init_{secrets.token_hex(4)}"
        self._write(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": "initialize"},
            }
        )
        for line in self._lines():
            response = line.get("response") or {}
            if line.get("type") == "control_response" and response.get("request_id") == (
                request_id
            ):
                if response.get("subtype") != "success":
                    raise AssertionError(f"initialize failed: {line}")
                return (time.perf_counter() - self.started) * 1000
        raise AssertionError("unreachable")

    def turn(self, text: str) -> dict[str, Any]:
        """Send ``text`` as the user; the turn's ``result`` line."""
        self._write(
            {
                "type": "user",
                "session_id": "",
                "message": {"role": "user", "content": [{"type": "text", "text": text}]},
                "parent_tool_use_id": None,
                "uuid": str(uuid.uuid4()),
            }
        )
        for line in self._lines():
            if line.get("type") == "result":
                return line
        raise AssertionError("unreachable")

    def close(self) -> None:
        """End the CLI: its stdin closed, then killed if it does not exit in 10 s."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()

    def _killed(self) -> str:
        """The end of the CLI's stderr, once it is surely gone."""
        self.process.kill()
        self.process.wait()
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-2000:]

    def __enter__(self) -> CliProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class _Line:
    """A seed line cut at its ids and timestamps: ``parts`` alternates literal bytes and
    tokens (odd indexes) to replace."""

    parts: list[bytes]

    @classmethod
    def cut(cls, raw: bytes) -> _Line:
        parts: list[bytes] = []
        at = 0
        for match in _TOKEN.finditer(raw):
            parts += [raw[at : match.start()], match.group()]
            at = match.end()
        parts.append(raw[at:])
        return cls(parts)

    def render(self, values: dict[bytes, bytes]) -> bytes:
        parts = self.parts[:]
        for i in range(1, len(parts), 2):
            parts[i] = values.get(parts[i], parts[i])
        return b"".join(parts)


@dataclass(frozen=True)
class Seed:
    """A recorded session, cut into what a grown session repeats."""

    cwd: str
    session_id: str
    head: list[bytes]
    """The first exchange with the CLI's start-up lines: written once, first."""
    turns: list[bytes]
    """The text and the Edit exchange: repeated."""
    exit_lines: list[bytes]
    head_entries: int
    head_prompts: int
    head_tools: int
    turn_entries: int
    """Entries (lines with a ``uuid``) of one repetition of ``turns``."""
    turn_prompts: int
    """Prompts the user typed, of one repetition."""
    turn_tools: int
    """Tool uses of one repetition."""
    cut_turns: list[_Line] = field(repr=False)
    links: dict[bytes, bytes] = field(repr=False)
    """Ids of the first exchange that ``turns`` refers to -> the id of ``turns`` that
    takes their place for the next repetition."""

    def entries_for(self, repeats: int) -> int:
        """The entries of a session grown with ``repeats`` repetitions."""
        return self.head_entries + repeats * self.turn_entries

    def repeats_for(self, entries: int) -> int:
        """The repetitions that make a session of at least ``entries`` entries (at least 1)."""
        return max(1, -(-(entries - self.head_entries) // self.turn_entries))


def record_seed(cli: str, model_url: str, home: Path, workspace: Path) -> Seed:
    """Run the seed session with the real CLI in ``workspace`` (the model at ``model_url``
    must play ``SEED_SCENARIO``) and read it back, cut for ``grow_session``."""
    notes = workspace / NOTES
    notes.write_text(NOTES_BEFORE)
    session_id = str(uuid.uuid4())
    with CliProcess(cli, isolated_env(home, model_url), str(workspace), session_id, False) as run:
        for prompt in (FIRST_PROMPT, TEXT_PROMPT, EDIT_PROMPT):
            result = run.turn(prompt)
            if result.get("is_error"):
                raise AssertionError(f"the seed's turn {prompt!r} failed: {result}")
    if notes.read_text() != NOTES_BEFORE.replace("first line", "edited line"):
        raise AssertionError(f"the Edit did not change {notes}: {notes.read_text()!r}")
    path = project_dir(home, str(workspace)) / f"{session_id}.jsonl"
    return cut_seed(path.read_bytes().splitlines(keepends=True), str(workspace), session_id)


def _blocks(line: dict[str, Any]) -> list[Any]:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _is_prompt(line: dict[str, Any]) -> bool:
    """A prompt the user typed: a user entry with text, not the CLI's own (meta)."""
    return (
        line.get("type") == "user"
        and not line.get("isMeta")
        and any(b.get("type") == "text" for b in _blocks(line))
    )


def _tool_uses(line: dict[str, Any]) -> int:
    if line.get("type") != "assistant":
        return 0
    return sum(1 for b in _blocks(line) if b.get("type") == "tool_use")


def _second_turn_start(lines: list[dict[str, Any]]) -> int:
    """The index of the first line of the ``TEXT_PROMPT`` exchange: its prompt, and the
    queue lines written for it just before."""
    for i, line in enumerate(lines):
        if _is_prompt(line) and TEXT_PROMPT in [b.get("text") for b in _blocks(line)]:
            while i > 0 and lines[i - 1].get("type") == "queue-operation":
                i -= 1
            return i
    raise AssertionError(f"the seed has no prompt {TEXT_PROMPT!r}")


def cut_seed(raw: list[bytes], cwd: str, session_id: str) -> Seed:
    """A ``Seed`` from the lines of a recorded session file (see ``record_seed``)."""
    lines = [json.loads(r) for r in raw]
    start = _second_turn_start(lines)
    exits = [i for i, line in enumerate(lines) if line.get("type") in _EXIT_LINES]
    body = [i for i in range(start, len(lines)) if i not in exits]
    head, turns = raw[:start], [raw[i] for i in body]
    head_uuids = {u for r in head for u in _UUID.findall(r)} - {session_id.encode()}
    # A repetition's links to what came before (the first exchange, for the first one)
    # take the same role in the repetition before it: the chain's parent is the last entry,
    # a request record's base the last request record.
    links: dict[bytes, bytes] = {}
    last_uuid = last_request = b""
    for i in body:
        line = lines[i]
        for key, value in line.items():
            if isinstance(value, str) and value.encode() in head_uuids:
                if key == "parentUuid":
                    links[value.encode()] = b"uuid"
                elif key == "base" and line.get("type") == "api-request":
                    links[value.encode()] = b"request"
                else:
                    raise AssertionError(f"a later turn refers to the first by {key!r}: {line}")
        if isinstance(line.get("uuid"), str):
            last_uuid = line["uuid"].encode()
        if line.get("type") == "api-request":
            last_request = line["id"].encode()
    roles = {b"uuid": last_uuid, b"request": last_request}
    resolved = {external: roles[role] for external, role in links.items()}
    return Seed(
        cwd=cwd,
        session_id=session_id,
        head=head,
        turns=turns,
        exit_lines=[raw[i] for i in exits],
        head_entries=sum(1 for line in lines[:start] if isinstance(line.get("uuid"), str)),
        head_prompts=sum(1 for line in lines[:start] if _is_prompt(line)),
        head_tools=sum(_tool_uses(line) for line in lines[:start]),
        turn_entries=sum(1 for i in body if isinstance(lines[i].get("uuid"), str)),
        turn_prompts=sum(1 for i in body if _is_prompt(lines[i])),
        turn_tools=sum(_tool_uses(lines[i]) for i in body),
        cut_turns=[_Line.cut(r) for r in turns],
        links=resolved,
    )


@dataclass(frozen=True)
class GrownSession:
    """A session file written by ``grow_session``."""

    session_id: str
    path: Path
    repeats: int
    """How often the seed's text and Edit exchanges were written after its first one."""
    entries: int
    prompts: int
    tools: int
    size: int


def _tokens(lines: list[_Line] | list[bytes]) -> list[bytes]:
    found: dict[bytes, None] = {}
    for line in lines:
        if isinstance(line, _Line):
            found.update(dict.fromkeys(line.parts[1::2]))
        else:
            found.update(dict.fromkeys(_TOKEN.findall(line)))
    return list(found)


def _parse_time(stamp: bytes) -> float:
    return datetime.datetime.fromisoformat(stamp.decode().replace("Z", "+00:00")).timestamp()


def _format_time(seconds: float) -> bytes:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.").encode() + b"%03dZ" % (moment.microsecond // 1000)


class _Renamer:
    """Fresh values for one copy of some lines: uuids, message, tool and request ids, and
    timestamps moved by ``shift`` seconds; the seed's session id becomes ``session_id``."""

    def __init__(self, seed_session: bytes, session_id: bytes, copy: int) -> None:
        self.fixed = {seed_session: session_id}
        self.copy = copy

    def values(self, tokens: list[bytes], shift: float) -> dict[bytes, bytes]:
        values: dict[bytes, bytes] = {}
        for n, token in enumerate(tokens):
            if token in self.fixed:
                values[token] = self.fixed[token]
            elif _TIMESTAMP.fullmatch(token):
                values[token] = _format_time(_parse_time(token) + shift)
            elif _UUID.fullmatch(token):
                values[token] = str(uuid.uuid4()).encode()
            else:
                prefix = token.split(b"_", 1)[0]
                values[token] = b"%s_lb%dx%d" % (prefix, self.copy, n)
        return values


def grow_session(
    seed: Seed, home: Path, entries: int, session_id: str | None = None, age: float = 0.0
) -> GrownSession:
    """Write a session of at least ``entries`` entries (whole repetitions of the seed's two
    later exchanges) into ``home``'s project folder for the seed's ``cwd``, streaming. Its
    last exchange has the seed's times less ``age`` seconds."""
    session_id = session_id or str(uuid.uuid4())
    repeats = seed.repeats_for(entries)
    stamps = [_parse_time(t) for r in seed.turns for t in _TIMESTAMP.findall(r)]
    # Each repetition one second after the one before; the last at the seed's own times.
    step = max(stamps) - min(stamps) + 1.0
    path = project_dir(home, seed.cwd) / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    renamer = _Renamer(seed.session_id.encode(), session_id.encode(), 0)
    head = [_Line.cut(r) for r in seed.head]
    previous = renamer.values(_tokens(head), -repeats * step - age)
    tokens = _tokens(seed.cut_turns)
    with open(path, "wb", buffering=1 << 20) as out:
        _write(out, head, previous)
        for copy in range(repeats):
            renamer.copy = copy + 1
            values = renamer.values(tokens, (copy + 1 - repeats) * step - age)
            for external, role in seed.links.items():
                # The first repetition links to the first exchange, the others to the last
                # entry (and request record) of the repetition before.
                values[external] = previous[role] if copy else previous[external]
            _write(out, seed.cut_turns, values)
            previous = values
        for raw in seed.exit_lines:
            out.write(raw.replace(seed.session_id.encode(), session_id.encode()))
    return GrownSession(
        session_id=session_id,
        path=path,
        repeats=repeats,
        entries=seed.entries_for(repeats),
        prompts=seed.head_prompts + repeats * seed.turn_prompts,
        tools=seed.head_tools + repeats * seed.turn_tools,
        size=path.stat().st_size,
    )


def _write(out: IO[bytes], lines: list[_Line], values: dict[bytes, bytes]) -> None:
    out.write(b"".join(line.render(values) for line in lines))
