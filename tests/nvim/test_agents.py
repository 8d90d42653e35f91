""":ClaudeAgents: every chat of the daemon in one list kept current by claude/watchChannels
(the chats waiting for the user first), <CR> opens one; a chat of another editor that starts
waiting for a permission is told of once."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.nvim import test_shared_daemon
from tests.nvim.editor import Editor, StartEditor
from tests.nvim.scenarios import GREET, scenario
from tests.nvim.test_shared_daemon import messages, on_shared, record_messages

# The shared daemon's fixtures (one `claude-sidecar serve` per test).
start_shared = test_shared_daemon.start_shared
shared = test_shared_daemon.shared

SCENARIO = scenario(GREET)


def open_list(editor: Editor) -> None:
    """:ClaudeAgents in a window wide enough for the whole folders (the tests' are long)."""
    editor.lua("vim.o.columns = 250")
    editor.cmd("ClaudeAgents")


def header(editor: Editor) -> str:
    """The first line of the :ClaudeAgents buffer ("" when it is not open)."""
    return next(iter(agents_lines(editor)), "")


def agents_lines(editor: Editor) -> list[str]:
    """The lines of the :ClaudeAgents buffer ([] when it is not open)."""
    return editor.lua_as(
        list[str],
        """
        for _, buf in ipairs(vim.api.nvim_list_bufs()) do
          if vim.bo[buf].filetype == "claude_sidecar_agents" then
            return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
          end
        end
        return {}
        """,
    )


def chat_line(state: str, workspace: Path, about: str, here: int | None = None) -> re.Pattern[str]:
    """A chat's line: state, folder (and the chat's number when it is open here), model, time
    since its last event, what it is about."""
    folder = re.escape(str(workspace)) + (f" #{here}" if here else "")
    return re.compile(rf"^{state} +{folder} +\S+ +\d+ s ago  {re.escape(about)}$")


def wait_for_list(editor: Editor, *patterns: re.Pattern[str]) -> list[str]:
    """Wait until the list's chat lines match ``patterns``, in order; return all its lines."""

    def matching() -> list[str] | None:
        lines = agents_lines(editor)
        chats = lines[1:]
        if len(chats) == len(patterns) and all(
            p.match(c) for p, c in zip(patterns, chats, strict=True)
        ):
            return lines
        return None

    return editor.wait(matching, what=f"the list of chats {[p.pattern for p in patterns]}")


def start_waiting_chat(editor: Editor, model: ScriptedModel, workspace: Path) -> None:
    """A chat of ``editor`` that waits for the user's answer on an Edit of hello.py."""
    model.set_scenario(load_scenario(SCENARIO))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor.cmd("ClaudeNew")
    editor.type_prompt("greet the world")
    editor.wait(lambda: editor.questions(), what="the permission question")


def test_the_list_shows_every_chat_the_one_waiting_for_you_first(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()
    start_waiting_chat(editor, model, workspace)

    open_list(editor)
    lines = wait_for_list(
        editor,
        chat_line("waiting", workspace, "asks Edit(hello.py) · > greet the world", here=2),
        chat_line("idle   ", workspace, "> hello", here=1),
    )

    assert (
        lines[0]
        == "Claude chats: 1 waiting, 1 idle    <CR> open · d review · m merge · x discard · R refresh · q close"
    )
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 2, "on the waiting chat"
    assert editor.lua("return vim.bo.filetype") == "claude_sidecar_agents"


def test_a_chat_changing_state_changes_its_line_in_the_open_list_and_the_cursor_follows_it(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()
    start_waiting_chat(editor, model, workspace)
    open_list(editor)
    wait_for_list(
        editor,
        chat_line("waiting", workspace, "asks Edit(hello.py) · > greet the world", here=2),
        chat_line("idle   ", workspace, "> hello", here=1),
    )
    editor.lua("vim.api.nvim_win_set_cursor(0, { 2, 9 })")  # on the waiting chat's folder

    editor.answer("Allow")

    wait_for_list(
        editor,
        chat_line("idle", workspace, "> hello", here=1),
        chat_line("idle", workspace, "> greet the world", here=2),
    )
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)") == [3, 9]
    editor.wait_for_turn(number=2)


def test_enter_shows_the_chat_of_the_line(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start_waiting_chat(editor, model, workspace)
    # The chat's windows closed (q): hidden, running on.
    editor.lua("local chat = require('claude_sidecar.chat'); chat.hide(chat.chats[1])")
    open_list(editor)
    wait_for_list(
        editor, chat_line("waiting", workspace, "asks Edit(hello.py) · > greet the world", here=1)
    )

    editor.nvim.input("<CR>")

    editor.wait(
        lambda: editor.lua("return vim.fn.bufwinid(require('claude_sidecar.chat').chats[1].buf)")
        != -1,
        what="the chat shown",
    )
    assert agents_lines(editor) == [], "the list closed"


def test_enter_attaches_to_a_chat_another_neovim_runs(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    first = on_shared(start_editor, shared)
    start_waiting_chat(first, model, workspace)
    second = on_shared(start_editor, shared)
    open_list(second)
    wait_for_list(
        second, chat_line("waiting", workspace, "asks Edit(hello.py) · > greet the world")
    )

    second.nvim.input("<CR>")
    asked = second.wait(lambda: second.questions(), what="the waiting request asked here")[0]

    assert asked["prompt"] == "Allow Edit(hello.py)?"
    assert second.chat("channel_id", 1) == first.chat("channel_id", 1)
    assert waiting_messages(second) == [], "the list it was opening showed it: no message"
    second.answer("Allow")
    first.wait(lambda: "  ✓ answered in another editor" in first.chat_lines(), what="the answer")


def waiting_messages(editor: Editor) -> list[str]:
    return [m for m in messages(editor) if "waits for your answer" in m]


def test_a_chat_of_another_neovim_waiting_for_you_is_told_once(
    shared: Path, start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    first = on_shared(start_editor, shared)
    second = on_shared(start_editor, shared)
    open_list(second)  # connects; the list then closes, the alerts go on
    second.wait(lambda: header(second).startswith("No Claude chat"), what="the list")
    second.nvim.input("q")

    start_waiting_chat(first, model, workspace)
    said = second.wait(lambda: waiting_messages(second), what="the message")
    # Listed again (the whole list, the request still pending): not told again.
    open_list(second)
    second.nvim.input("R")
    wait_for_list(
        second, chat_line("waiting", workspace, "asks Edit(hello.py) · > greet the world")
    )
    second.nvim.input("q")
    first.answer("Allow")
    first.wait_for_turn()

    assert said == [
        f"claude-sidecar: Claude in {workspace} waits for your answer: Edit(hello.py)"
        " (:ClaudeAgents goes there)"
    ]
    assert waiting_messages(second) == said
    assert waiting_messages(first) == [], "its own picker asked in the first"


def test_closing_the_list_stops_the_watch(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    open_list(editor)
    editor.wait(lambda: header(editor).startswith("No Claude chat"), what="the list")
    editor.nvim.input("q")
    # What the daemon sends from now on is recorded instead of listed.
    editor.lua("""
        _G.changes = {}
        require("claude_sidecar.rpc").on_notification("claude/channelsChanged", function(params)
          table.insert(_G.changes, params)
        end)
    """)

    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn()
    channel = editor.chat("channel_id")
    # Watched again by hand: the first change told is the chat closing, none of its turn.
    editor.lua(
        """
        local rpc, channel = require("claude_sidecar.rpc"), ...
        rpc.request("claude/watchChannels", vim.empty_dict(), function()
          rpc.request("claude/closeChannel", { channelId = channel }, function() end)
        end)
    """,
        channel,
    )
    changes: list[dict[str, Any]] = editor.wait(
        lambda: editor.lua_as(list[dict[str, Any]], "return _G.changes"), what="a change"
    )

    assert agents_lines(editor) == []
    assert changes[0] == {"channels": [], "closed": [channel]}
    assert editor.lua("return require('claude_sidecar.roster').watching()") is False


def test_a_daemon_without_watch_channels_says_so(editor: Editor) -> None:
    record_messages(editor)
    editor.lua("""
        local rpc = require("claude_sidecar.rpc")
        rpc.request("claude/listChannels", vim.empty_dict(), function()
          rpc.server().features = {}  -- as a daemon from before the overview answers
        end)
    """)
    editor.wait(
        lambda: editor.lua(
            "local s = require('claude_sidecar.rpc').server(); return s ~= nil and #s.features == 0"
        ),
        what="the daemon connected",
    )

    open_list(editor)

    said = editor.wait(lambda: messages(editor), what="a message")
    assert re.fullmatch(
        r"claude-sidecar: :ClaudeAgents is not available: this claude-sidecar daemon \(\S+\)"
        r' does not serve "watchChannels"',
        said[0],
    ), said
    assert agents_lines(editor) == []


def window_heights(editor: Editor) -> list[int]:
    return editor.lua_as(
        list[int],
        "return vim.tbl_map(vim.api.nvim_win_get_height, vim.api.nvim_tabpage_list_wins(0))",
    )


def test_closing_the_list_gives_the_windows_their_sizes_back(
    editor: Editor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor.cmd("Claude")
    before = window_heights(editor)
    open_list(editor)
    editor.wait(lambda: header(editor).startswith("Claude chats"), what="the list")
    during = window_heights(editor)

    editor.nvim.input("q")
    editor.wait(lambda: agents_lines(editor) == [], what="the list closed")

    assert len(during) == len(before) + 1
    assert window_heights(editor) == before


def test_the_list_says_when_the_daemon_exited_and_r_starts_it_again(editor: Editor) -> None:
    open_list(editor)
    editor.wait(lambda: header(editor).startswith("No Claude chat"), what="the list")
    pid = editor.daemon_pid()
    assert pid

    os.kill(pid, signal.SIGKILL)
    gone = editor.wait(lambda: header(editor).startswith("No daemon") and header(editor))
    editor.nvim.input("R")

    editor.wait(lambda: header(editor).startswith("No Claude chat"), what="the list again")
    assert gone == "No daemon: it exited (R starts it again and lists its chats)    q close"
    assert editor.daemon_pid() not in (None, pid)
