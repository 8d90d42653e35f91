"""The quick start for client authors holds: its example client runs as the guide says.

docs/examples/minimal_client.py is run as a user runs it (a subprocess, `claude-sidecar
--stdio` found on PATH) against the real CLI and the stand-in model; docs/client-quickstart.md
quotes it, and its quotes may not drift from the file; its state diagrams name the states
the daemon has.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from claude_sidecar.protocol import api, schema
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import DAEMON_UNDER_TEST

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "minimal_client.py"
GUIDE = ROOT / "docs" / "client-quickstart.md"

# A turn that streams text, asks to Write a file, and answers once the Write has run.
NOTES = {
    "rules": [
        {
            "match": "notes",
            "chunk": 6,
            "steps": [
                [
                    {"text": "I'll write the notes file for you."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/notes.txt", "content": "buy milk\n"},
                        }
                    },
                ],
                [{"text": "Done: notes.txt holds the note."}],
            ],
        }
    ]
}

# A turn whose answer stops after its first words and waits (for a prompt never sent).
HELD = {
    "rules": [
        {
            "match": "long",
            "steps": [
                [
                    {"text": "Working on it."},
                    {"wait_for_prompt": "^never sent$", "timeout": 120},
                    {"text": "Finished."},
                ]
            ],
        }
    ]
}


def client(daemon_env: dict[str, str], *args: str, **popen: Any) -> subprocess.Popen[str]:
    """The example, started as its reader would start it: the daemon it runs is this
    checkout's `claude-sidecar`, first on PATH (the environment's own Python's scripts), or
    the cross-release suite's daemon."""
    scripts = str(Path(DAEMON_UNDER_TEST or sys.executable).parent)
    env = {**daemon_env, "PATH": os.pathsep.join([scripts, daemon_env.get("PATH", "")])}
    # Started as from a terminal, where Ctrl-C is delivered: the test command runs pytest in a
    # background job, which ignores SIGINT, and a Python started with SIGINT ignored raises
    # no KeyboardInterrupt. A shell cannot undo that (`trap - INT`), so Python does, then runs
    # the example in its place.
    as_from_a_terminal = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )
    command = [sys.executable, "-c", as_from_a_terminal, str(EXAMPLE), *args]
    return subprocess.Popen(command, env=env, text=True, **popen)


def run(daemon_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    process = client(daemon_env, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate(timeout=90)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.cross_release
def test_the_example_streams_the_answer_allows_the_write_and_exits_0(
    model: ScriptedModel, daemon_env: dict[str, str], workspace: Path
) -> None:
    model.set_scenario(load_scenario(NOTES))

    done = run(daemon_env, str(workspace), "Write my notes, please")

    assert done.returncode == 0, done.stderr[-3000:]
    assert (workspace / "notes.txt").read_text() == "buy milk\n"
    out = done.stdout
    # In this order: the streamed text, the permission asked and allowed, the tool's end,
    # the answer after it, the turn's end.
    said = [
        "I'll write the notes file for you.",
        "? Write notes.txt: allow",
        "[Write: done]",
        "Done: notes.txt holds the note.",
        "[turn ended: success, $",
    ]
    at = [out.find(line) for line in said]
    assert -1 not in at and at == sorted(at), out


@pytest.mark.cross_release
def test_ctrl_c_in_the_example_interrupts_the_turn_and_still_shuts_down(
    model: ScriptedModel, daemon_env: dict[str, str], workspace: Path
) -> None:
    model.set_scenario(load_scenario(HELD))
    process = client(
        daemon_env, str(workspace), "a long job", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    seen = ""
    while not seen.endswith("Working on it."):  # the answer has begun, then waits
        piece = process.stdout.read(1)
        assert piece, f"the example ended first: {seen!r}"
        seen += piece

    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=90)

    assert "[turn ended: interrupted" in out, err[-3000:]
    assert "Finished." not in seen + out
    assert process.returncode == 1  # the turn did not succeed
    assert "Traceback" not in err


@pytest.mark.cross_release
def test_the_example_reports_a_refused_request_by_its_error_and_exits_1(
    daemon_env: dict[str, str], tmp_path: Path
) -> None:
    done = run(daemon_env, str(tmp_path / "no-such-folder"), "hello")

    assert done.returncode == 1
    assert "error: claude/newChannel failed: {'code': -32602" in done.stderr
    assert "'data': {'name': 'invalidParams', 'field': 'cwd'}" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_example_is_under_100_lines() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 100, f"{EXAMPLE.name} has {len(lines)} lines; the guide promises < 100"


def quotes() -> list[tuple[int, str]]:
    """The guide's code blocks that say they quote the example: (line, the block's text)."""
    guide = GUIDE.read_text(encoding="utf-8")
    marker = re.compile(r"^<!-- quoted from examples/minimal_client\.py -->\n```python\n", re.M)
    found = []
    for m in marker.finditer(guide):
        end = guide.index("\n```\n", m.end())
        found.append((guide.count("\n", 0, m.start()) + 1, guide[m.end() : end + 1]))
    return found


def test_the_guides_quotes_of_the_example_are_the_examples_own_lines() -> None:
    source = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    found = quotes()
    assert len(found) >= 5, "the guide quotes the example step by step"
    for line, quote in found:
        block = textwrap.dedent(quote)
        n = block.count("\n")
        windows = (textwrap.dedent("".join(source[i : i + n])) for i in range(len(source)))
        assert block in windows, (
            f"docs/client-quickstart.md line {line}: this quote is not in {EXAMPLE.name} "
            f"(copy it again from the file):\n{block}"
        )


def test_every_python_block_of_the_guide_is_a_checked_quote() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert guide.count("```python\n") == len(quotes())
    assert "(examples/minimal_client.py)" in guide  # and it links the whole file


def mermaid(title: str) -> str:
    """The Mermaid block under the guide's heading ``title``."""
    guide = GUIDE.read_text(encoding="utf-8")
    start = guide.index(f"\n## {title}\n")
    block = guide.index("```mermaid\n", start)
    return guide[block : guide.index("\n```\n", block)]


def test_the_channel_diagram_has_every_state_of_claude_status() -> None:
    diagram = mermaid("A channel's states")
    states = set(re.findall(r"^\s*(\w+) -->", diagram, re.M))
    states |= set(re.findall(r"--> (\w+)", diagram))
    assert states - {"*"} == set(typing.get_args(api.ChannelState))


def test_the_permission_diagram_has_every_way_a_request_is_cancelled() -> None:
    diagram = mermaid("A permission request's life")
    for reason in typing.get_args(api.CancelReason):
        assert reason in diagram
    for decision in typing.get_args(api.PermissionDecision):
        assert decision in diagram


SCHEMA = schema.build()
TRIMMED = "..."  # as in docs/protocol.md: `"...": "..."` stands for fields left out


def untrimmed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untrimmed(v) for k, v in value.items() if k != TRIMMED}
    if isinstance(value, list):
        return [untrimmed(v) for v in value if v != TRIMMED]
    return value


def test_every_message_the_guide_shows_on_the_wire_validates_against_the_schema() -> None:
    guide = GUIDE.read_text(encoding="utf-8").splitlines()
    asked: dict[Any, str] = {}
    problems, checked = [], 0
    for number, line in enumerate(guide, 1):
        if not (m := re.match(r"^(?:->|<-) (\{.*\})$", line)):
            continue
        message = json.loads(m.group(1))
        method = message.get("method") or asked.get(message.get("id"), "")
        entry = SCHEMA["x-methods"].get(method) or SCHEMA["x-notifications"].get(method)
        if "method" in message:
            asked[message.get("id")] = method
        if entry is None or "error" in message:
            continue  # initialize, shutdown, exit: LSP's own
        part, value = (
            ("params", message["params"]) if "method" in message else ("result", message["result"])
        )
        trimmed = TRIMMED in json.dumps(value)
        validator = jsonschema.Draft202012Validator({**SCHEMA, **entry[part]})
        problems += [
            f"line {number} ({method} {part}): {e.message[:200]}"
            for e in validator.iter_errors(untrimmed(value))
            if not (trimmed and e.validator == "required")
        ]
        checked += 1
    assert not problems
    assert checked >= 10, "the guide shows the wire of each step"


# The guide's last table: where each step is in the real clients, by column.
CLIENT_ROOTS = (
    ROOT / "editors/nvim/lua/claude_sidecar",
    ROOT / "editors/vscode/src",
    ROOT / "editors/intellij/core/src/main/kotlin/dev/claudesidecar/core",
)


def client_pointers() -> list[tuple[Path, str, list[str]]]:
    """(the base folder of its column, a file named in a cell, the names said to be in it)
    for every cell of the table of the real clients."""
    guide = GUIDE.read_text(encoding="utf-8")
    table = guide[guide.index("\n## The same steps in the real clients\n") :]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line][1:]
    found = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")][1:]
        assert len(cells) == len(CLIENT_ROOTS), row
        for base, cell in zip(CLIENT_ROOTS, cells, strict=True):
            for part in cell.split("; "):
                m = re.match(r"`([^`]+\.(?:lua|ts|kt))`(.*)$", part)
                assert m, f"not `file`: `name`, ...: {part!r}"
                names = re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", m.group(2)))
                found.append((base, m.group(1), names))
    return found


def test_the_guides_pointers_into_the_real_clients_name_files_and_functions_they_have() -> None:
    pointers = client_pointers()
    assert len(pointers) >= 30
    for base, path, names in pointers:
        if path.startswith("editors/"):
            head, _, tail = path.partition("/.../")
            files = list((ROOT / head).rglob(tail)) if tail else [ROOT / path]
        else:
            files = [base / path]
        assert len(files) == 1 and files[0].is_file(), f"no file {path} (under {base})"
        text = files[0].read_text(encoding="utf-8")
        for name in names:
            for word in name.split("."):
                assert re.search(rf"\b{re.escape(word)}\b", text), f"{path} has no {name}"
