"""Neovim on the shared daemon (``daemon = "shared"``): :ClaudeAttach opens a chat another
editor started, a dropped connection is made again and the chat re-attached with exactly
what it missed, a restarted Neovim finds its chat still running. One ``claude-sidecar serve``
per test on a socket of its own; each Neovim reaches it through ``claude-sidecar connect``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import daemon_argv
from tests.harness import descendant_pids, wait_until_dead
from tests.nvim.editor import Editor, StartEditor
from tests.nvim.long_chat import (
    PAGE,
    daemon_ids,
    focus_transcript,
    older_line,
    page_read,
    reads,
    record_transcript_requests,
    resume,
    shown_ids,
    store_long_session,
)

HELD = "x" * 80
REST = "z" * 80  # a text block of its own (the hold ends the first)
# "long" streams HELD, then holds the stream until a prompt matching "go on" reaches the
# model (from another chat), then streams REST: the test decides when the answer goes on.
SCENARIO = {
    "rules": [
        {"match": "(?i)hello", "steps": [[{"text": "Hello from the stand-in model!"}]]},
        {
            "match": "^long$",
            "steps": [
                [{"text": HELD}, {"wait_for_prompt": "^go on$", "timeout": 120}, {"text": REST}]
            ],
            "chunk": 2,
        },
    ],
    "default": [[{"text": "ok"}]],
}


class StartShared(Protocol):
    def __call__(self, *args: str) -> Path: ...


@pytest.fixture
def start_shared(daemon_env: dict[str, str], tmp_path: Path) -> Iterator[StartShared]:
    """Starts a shared daemon (`serve` with extra arguments) on a short socket path and
    returns the socket. On teardown the daemon serving it (that one, or one `connect`
    started after it died) is stopped, and none of its CLIs may outlive it."""
    started: list[tuple[Path, subprocess.Popen[bytes]]] = []

    def start(*args: str) -> Path:
        directory = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
        path = directory / "daemon.sock"
        with (tmp_path / "daemon.log").open("ab") as log:
            daemon = subprocess.Popen(
                # Forked by the fork server (tests/zygote) unless marked real_daemon_process.
                daemon_argv(
                    *("--log-level", "DEBUG", "serve", "--socket", str(path)),
                    *("--warm-pool=0", "--linger=60", *args),
                ),
                env=daemon_env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        started.append((path, daemon))
        wait_for_socket(path, daemon)
        return path

    yield start
    for path, daemon in started:
        serving = daemon.pid
        with contextlib.suppress(OSError, ValueError):
            serving = int(path.with_name(path.name + ".lock").read_text().split()[0])
        clis = descendant_pids(daemon.pid) | descendant_pids(serving)
        daemon.terminate()
        daemon.wait(30)
        with contextlib.suppress(ProcessLookupError):
            os.kill(serving, signal.SIGTERM)
        assert asyncio.run(wait_until_dead([serving, *sorted(clis)], timeout=30)) == [], (
            "the daemon or its CLIs outlived the test"
        )
        shutil.rmtree(path.parent, ignore_errors=True)


@pytest.fixture
def shared(start_shared: StartShared) -> Path:
    """A shared daemon's socket."""
    return start_shared()


def wait_for_socket(path: Path, daemon: subprocess.Popen[bytes]) -> None:
    """Wait until the daemon accepts connections on ``path``."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert daemon.poll() is None, f"the daemon exited with {daemon.returncode}"
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            return
        except OSError:
            # Polls: the daemon's readiness is not an event this process can await.
            time.sleep(0.05)
        finally:
            probe.close()
    raise AssertionError(f"no daemon served {path}")


def connect(path: Path) -> list[str]:
    return [sys.executable, "-m", "claude_sidecar", "connect", "--socket", str(path)]


def on_shared(start_editor: StartEditor, path: Path) -> Editor:
    """A Neovim whose daemon is the shared one; what it notifies is kept in _G.messages."""
    editor = start_editor({"daemon": "shared", "cmd": connect(path)})
    record_messages(editor)
    return editor


def record_messages(editor: Editor) -> None:
    editor.lua("_G.messages = {}; vim.notify = function(msg) table.insert(_G.messages, msg) end")


def messages(editor: Editor) -> list[str]:
    return editor.lua_as(list[str], "return _G.messages")


def answer_lines(editor: Editor, number: int = 1) -> list[str]:
    """The lines of chat ``number`` holding the held answer's text."""
    return [line for line in editor.chat_lines(number) if "x" * 10 in line or "z" * 10 in line]


def streaming(editor: Editor, number: int = 1) -> bool:
    return answer_lines(editor, number) == [HELD]


def release(editor: Editor, workspace: Path) -> None:
    """Let the held answer go on: "go on" reaches the model from another chat of ``editor``."""
    editor.lua(
        "local chat = require('claude_sidecar.chat'); chat.send(chat.new(...), 'go on')",
        str(workspace),
    )


def attach_with_picker(editor: Editor) -> dict[str, Any]:
    """:ClaudeAttach, choosing the first chat listed; returns the question asked."""
    editor.cmd("ClaudeAttach")
    question = editor.wait(lambda: editor.questions(), what="the list of running chats")[0]
    editor.answer(question["labels"][0])
    return question


def test_claude_attach_shows_a_chat_another_neovim_started_with_its_history_then_its_stream(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    first = on_shared(start_editor, shared)
    first.cmd("Claude")
    first.type_prompt("hello")
    first.wait_for_turn()
    first.type_prompt("long")
    first.wait(lambda: streaming(first), what="the held answer")

    second = on_shared(start_editor, shared)
    question = attach_with_picker(second)
    second.wait(lambda: streaming(second), what="the attached chat's answer so far")
    history = second.chat_lines()
    release(second, workspace)
    second.wait_for_turn(turns=2, number=1)
    first.wait_for_turn(turns=2, number=1)

    assert question["prompt"] == "Attach to a running Claude chat"
    model_name = first.chat("model", 1)
    assert question["labels"] == [
        f"ch-1 · {workspace} · running · {model_name} · 1 client: claude_sidecar.nvim"
    ]
    assert "> hello" in history and "Hello from the stand-in model!" in history
    assert "> long" in history and "═══ attached: the chat goes on from here ═══" in history[-2:]
    # The rest of the answer streamed in live, once, into both Neovims alike.
    assert answer_lines(second) == [HELD, REST]
    assert answer_lines(first) == [HELD, REST]
    assert [e for e in second.entries(1) if e["kind"] == "text"] == [
        e for e in first.entries(1) if e["kind"] == "text"
    ]
    assert second.chat("state", 1) == "idle"


def test_a_dropped_connection_is_made_again_and_the_chat_gets_exactly_what_it_missed(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor = on_shared(start_editor, shared)
    editor.cmd("Claude")
    editor.type_prompt("long")
    editor.wait(lambda: streaming(editor), what="the held answer")
    watcher = on_shared(start_editor, shared)
    attach_with_picker(watcher)
    watcher.wait(lambda: streaming(watcher), what="the watcher's copy of the answer")

    drop_until_the_turn_ended(editor, watcher, shared, workspace)
    editor.wait_for_turn(number=1)

    assert answer_lines(editor) == [HELD, REST], "nothing lost, nothing doubled"
    assert [e for e in editor.entries(1) if e["kind"] == "text"] == [
        e for e in watcher.entries(1) if e["kind"] == "text"
    ]
    assert editor.chat("state", 1) == "idle"
    assert "reconnecting" not in editor.winbar(1)
    dropped = [m for m in messages(editor) if "dropped" in m]
    assert dropped == [
        "claude-sidecar: the connection to the shared daemon dropped; connecting again"
    ]
    # Re-attached with afterSeq: replayed, not shown afresh.
    assert not [line for line in editor.chat_lines() if "shown afresh" in line]


def drop_until_the_turn_ended(editor: Editor, watcher: Editor, path: Path, workspace: Path) -> None:
    """Kill ``editor``'s bridge mid-stream and keep its connection down (the next command
    it runs never answers `initialize`) until ``watcher`` saw the held answer end; then let
    it connect again."""
    editor.lua("require('claude_sidecar.config').options.cmd = { 'sleep', '600' }")
    bridge = editor.daemon_pid()
    assert bridge is not None
    os.kill(bridge, signal.SIGKILL)
    stand_in = editor.wait(
        lambda: editor.daemon_pid() not in (None, bridge) and editor.daemon_pid(),
        what="a new connection",
    )
    assert "reconnecting" in editor.winbar(1)
    release(watcher, workspace)
    watcher.wait_for_turn(number=1)
    editor.lua("require('claude_sidecar.config').options.cmd = ...", connect(path))
    os.kill(stand_in, signal.SIGKILL)


def test_a_chat_whose_missed_updates_left_the_replay_window_is_shown_afresh(
    start_shared: StartShared, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    path = start_shared("--replay-window", "0.0001")  # about 100 bytes: less than one turn
    model.set_scenario(load_scenario(SCENARIO))
    editor = on_shared(start_editor, path)
    editor.cmd("Claude")
    editor.type_prompt("long")
    editor.wait(lambda: streaming(editor), what="the held answer")
    watcher = on_shared(start_editor, path)
    attach_with_picker(watcher)
    watcher.wait(lambda: streaming(watcher), what="the watcher's copy of the answer")

    drop_until_the_turn_ended(editor, watcher, path, workspace)
    editor.wait_for_turn(number=1)
    editor.wait(lambda: editor.chat("state", 1) == "idle", what="the state asked again")

    lines = editor.chat_lines(1)
    assert answer_lines(editor) == [HELD, REST]
    assert (
        "⚠ reconnected: the daemon no longer had all of what was missed; the chat is shown afresh"
        in lines
    )
    assert "reconnecting" not in editor.winbar(1)


def test_a_chat_of_a_killed_daemon_is_opened_again_from_its_session(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor = on_shared(start_editor, shared)
    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()
    session = editor.chat("session_id")
    daemon = int(shared.with_name(shared.name + ".lock").read_text().split()[0])

    os.kill(daemon, signal.SIGKILL)  # its CLI goes with it; `connect` starts a new daemon
    reopened = "═══ reopened from its session: the conversation goes on ═══"
    editor.wait(lambda: reopened in editor.chat_lines(), what="the chat reopened")
    editor.type_prompt("hello again")
    editor.wait_for_turn(turns=2)

    lines = editor.chat_lines()
    session_after = editor.chat("session_id")
    # The daemon `connect` started is a child of the bridge: stopped here, after Neovim,
    # for the editor fixture's check that nothing of Neovim's outlives it.
    editor.quit()
    stop_serving(shared)

    assert "> hello" in lines and "> hello again" in lines
    assert session_after == session
    assert "hello again" in repr(model.main_requests[-1]["messages"])
    assert "Hello from the stand-in model!" in repr(model.main_requests[-1]["messages"][:-1])


def stop_serving(path: Path) -> None:
    """SIGTERM the daemon serving ``path`` (its pid is in the lock beside the socket) and
    wait until it and its CLIs are gone."""
    serving = int(path.with_name(path.name + ".lock").read_text().split()[0])
    clis = descendant_pids(serving)
    os.kill(serving, signal.SIGTERM)
    assert asyncio.run(wait_until_dead([serving, *sorted(clis)], timeout=30)) == []


def test_a_restarted_neovim_finds_its_chat_still_running_through_claude_sessions(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    before = on_shared(start_editor, shared)
    before.cmd("Claude")
    before.type_prompt("hello")
    before.wait_for_turn()
    before.type_prompt("long")
    before.wait(lambda: streaming(before), what="the held answer")
    before.quit()  # the chat goes on in the daemon

    after = on_shared(start_editor, shared)
    after.cmd("ClaudeSessions")
    question = after.wait(lambda: after.questions(), what="the stored sessions")[0]
    after.answer(question["labels"][0])
    after.wait(lambda: streaming(after), what="the running chat shown")
    release(after, workspace)
    after.wait_for_turn(turns=2, number=1)

    lines = after.chat_lines(1)
    assert "> hello" in lines and "> long" in lines
    assert "═══ this session was still running in the daemon: attached to it ═══" in lines
    assert answer_lines(after) == [HELD, REST]
    assert after.chat("channel_id", 1) == "ch-1", "the running chat, not a second CLI"


def write_note_scenario(target: Path) -> dict[str, Any]:
    """ "write it": a Write of ``target`` (a permission ask), then "written"."""
    write = {"tool_use": {"name": "Write", "input": {"file_path": str(target), "content": "hi\n"}}}
    return {
        "rules": [{"match": "write it", "steps": [[write], [{"text": "written"}]]}],
        "default": [[{"text": "ok"}]],
    }


def test_a_permission_answered_in_another_neovim_leaves_the_prompt(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    target = workspace / "note.txt"
    model.set_scenario(load_scenario(write_note_scenario(target)))
    first = on_shared(start_editor, shared)
    first.cmd("Claude")
    first.type_prompt("write it")
    first.wait(lambda: first.questions(), what="the permission question")
    second = on_shared(start_editor, shared)
    attach_with_picker(second)
    asked = second.wait(lambda: second.questions(), what="the pending request asked here too")[0]
    second.answer("Allow")
    first.wait(
        lambda: "  ✓ answered in another editor" in first.chat_lines(), what="the answer seen"
    )
    first.wait_for_turn()
    # A picker plugin's window (the recorder) cannot be closed from here: its answer is not sent.
    assert any("the question still open here answers nothing" in m for m in messages(first))
    first.answer("Deny")

    assert asked["prompt"] == "Allow Write(note.txt)?"
    assert target.read_text() == "hi\n"
    assert "  ✓ allowed" in second.chat_lines()
    assert "  ✓ answered in another editor" in first.chat_lines()
    assert first.questions() == []


def test_neovims_own_picker_closes_when_another_neovim_answers_its_request(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    target = workspace / "note.txt"
    model.set_scenario(load_scenario(write_note_scenario(target)))
    first = on_shared(start_editor, shared)
    first.use_neovims_own_select()
    first.cmd("Claude")
    first.type_prompt("write it")
    first.wait(lambda: first.own_select_asks(), what="the permission picker waiting for a key")
    second = on_shared(start_editor, shared)
    attach_with_picker(second)
    second.wait(lambda: second.questions(), what="the pending request asked here too")
    second.answer("Allow")

    first.wait(lambda: not first.own_select_asks(), what="the picker closed")
    first.wait_for_turn()
    assert "  ✓ answered in another editor" in first.chat_lines()
    assert any(
        m.endswith("Write(note.txt) was answered in another editor; its question is closed")
        for m in messages(first)
    ), messages(first)
    assert target.read_text() == "hi\n"
    assert first.lua("return vim.api.nvim_get_mode().mode") != "c"
    assert first.lua("return #require('claude_sidecar.permissions').pending()") == 0


def test_claude_detach_closes_the_chat_here_and_leaves_it_running_in_the_daemon(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    first = on_shared(start_editor, shared)
    first.cmd("Claude")
    first.type_prompt("long")
    first.wait(lambda: streaming(first), what="the held answer")
    first.cmd("ClaudeDetach")
    first.wait(
        lambda: first.lua_as(int, "return #require('claude_sidecar.chat').chats") == 0,
        what="the chat closed here",
    )

    second = on_shared(start_editor, shared)
    question = attach_with_picker(second)
    second.wait(lambda: streaming(second), what="the detached chat, still running")
    release(second, workspace)
    second.wait_for_turn(number=1)

    assert question["labels"] == [
        f"ch-1 · {workspace} · running · {second.chat('model', 1)} · no client"
    ]
    assert answer_lines(second) == [HELD, REST], "the turn went on while nobody watched"


def test_private_mode_refuses_claude_detach(start_editor: StartEditor) -> None:
    editor = start_editor()
    record_messages(editor)
    editor.cmd("ClaudeDetach")

    said = editor.wait(lambda: messages(editor), what="a message")
    assert said[0].startswith("claude-sidecar: :ClaudeDetach needs the shared daemon")


def test_private_mode_refuses_claude_attach(start_editor: StartEditor) -> None:
    editor = start_editor()
    record_messages(editor)
    editor.cmd("ClaudeAttach")

    said = editor.wait(lambda: messages(editor), what="a message")
    assert said == [
        'claude-sidecar: :ClaudeAttach needs the shared daemon: setup({ daemon = "shared" })'
        " (:help claude_sidecar-shared)"
    ]
    assert editor.questions() == []
    assert editor.daemon_pid() is None, "no daemon started for nothing"


# ------------------------------------------------------------------ a long chat, by pages


def on_shared_paging(start_editor: StartEditor, path: Path) -> Editor:
    """A Neovim of the shared daemon reading long chats ``PAGE`` entries at a time."""
    editor = start_editor({"daemon": "shared", "cmd": connect(path), "page_entries": PAGE})
    record_messages(editor)
    return editor


def test_claude_attach_to_a_long_chat_shows_its_last_page_then_the_pages_before(
    shared: Path, start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    first = on_shared_paging(start_editor, shared)
    resume(first)

    second = on_shared_paging(start_editor, shared)
    record_transcript_requests(second)
    attach_with_picker(second)
    second.wait(
        lambda: "═══ attached: the chat goes on from here ═══" in second.chat_lines(),
        what="the attached chat",
    )
    everything = daemon_ids(second)
    last_page = shown_ids(second)
    focus_transcript(second)
    second.nvim.input("gg")
    second.wait(lambda: page_read(second, PAGE), what="the page before")

    assert last_page == everything[-PAGE:]
    assert reads(second)[0] == {
        "method": "claude/attach",
        "params": {"channelId": "ch-1", "limit": PAGE},
    }
    assert shown_ids(second) == everything[-2 * PAGE :]


def test_a_long_chat_still_running_in_the_daemon_opens_at_its_last_page(
    shared: Path, start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    before = on_shared_paging(start_editor, shared)
    resume(before)
    before.quit()  # the chat stays open in the daemon

    after = on_shared_paging(start_editor, shared)
    record_transcript_requests(after)
    after.cmd("ClaudeSessions")
    question = after.wait(lambda: after.questions(), what="the stored sessions")[0]
    after.answer(question["labels"][0])
    after.wait(
        lambda: "═══ this session was still running in the daemon: attached to it ═══"
        in after.chat_lines(),
        what="the running chat shown",
    )

    # newChannel's answer brought the page (its `limit`): no transcript read after it.
    assert [r["method"] for r in reads(after)] == ["claude/getHistory"]
    assert after.chat("channel_id", 1) == "ch-1"
    assert shown_ids(after) == daemon_ids(after)[-PAGE:]
    assert older_line(after) == "… earlier entries not shown: gg or [[ loads them"
