"""The agent acts in Neovim: permissions, changed files, interrupt, fork, rewind, resume."""

from __future__ import annotations

import uuid
from pathlib import Path

from claude_sidecar.cli.paths import project_dir
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.nvim.editor import Editor, StartEditor
from tests.nvim.scenarios import GREET, HELD_LONG, PLAN, WHICH_COLOR, scenario
from tests.repeated_session import write_long_session

SHOUT = {
    "match": "(?i)shout",
    "steps": [
        [
            {
                "tool_use": {
                    "name": "Edit",
                    "input": {
                        "file_path": "{cwd}/hello.py",
                        "old_string": "hello, world",
                        "new_string": "HELLO, WORLD",
                    },
                }
            }
        ],
        [{"text": "Louder now."}],
    ],
}
EDITS = scenario(GREET, SHOUT, HELD_LONG, PLAN, WHICH_COLOR)


def open_file(editor: Editor, path: Path) -> int:
    """Edit ``path`` in a window of its own; returns its buffer."""
    editor.cmd(f"edit {path}")
    return editor.lua_as(int, "return vim.api.nvim_get_current_buf()")


def buffer_lines(editor: Editor, buf: int) -> list[str]:
    return editor.lua_as(list[str], "return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


def greet_then_shout(editor: Editor) -> None:
    """Two turns in a new chat, each editing hello.py."""
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn(1)
    editor.type_prompt("now shout")
    editor.wait_for_turn(2)


def cursor_to(editor: Editor, line: str, below: int = 0) -> None:
    """Put the cursor in the chat window on ``line`` (or ``below`` lines under it)."""
    editor.lua(
        """
        local text, below = ...
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        vim.api.nvim_set_current_win(win)
        for i, line in ipairs(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)) do
          if line == text then vim.api.nvim_win_set_cursor(win, { i + below, 0 }) end
        end
    """,
        line,
        below,
    )


def test_a_permission_request_is_answered_from_a_picker_with_the_diff_shown(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")

    question = editor.wait(lambda: editor.questions(), what="a permission question")[0]
    chat = "\n".join(editor.chat_lines())
    editor.answer("Allow")
    editor.wait_for_turn()

    assert question["prompt"] == "Allow Edit(hello.py)?"
    assert question["labels"] == ["Allow", "Always allow", "Deny", "Deny with reason…", "Later"]
    assert "-print('hello')" in chat and "+print('hello, world')" in chat, "no diff preview"
    assert (workspace / "hello.py").read_text() == "print('hello, world')\n"
    assert "  ✓ allowed" in editor.chat_lines()


def test_a_denied_edit_leaves_the_file_alone(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")

    editor.wait(lambda: editor.questions(), what="a permission question")
    editor.answer("Deny")
    editor.wait_for_turn()

    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    assert "  ✗ denied" in editor.chat_lines()


def test_a_file_claude_changes_is_reloaded_in_its_buffer_and_diffable(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    buf = open_file(editor, workspace / "hello.py")
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn()

    editor.wait(
        lambda: buffer_lines(editor, buf) == ["print('hello, world')"],
        what="the buffer to be reloaded",
    )
    assert "  ✎ hello.py (+1 −1)" in editor.chat_lines()
    editor.cmd(f"ClaudeDiff {workspace / 'hello.py'}")
    diff = editor.lua("""
        local out = {}
        for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
          local buf = vim.api.nvim_win_get_buf(win)
          table.insert(out, { vim.wo[win].diff, vim.api.nvim_buf_get_lines(buf, 0, -1, false) })
        end
        return out
    """)
    assert diff == [[True, ["print('hello')"]], [True, ["print('hello, world')"]]]


def test_a_buffer_with_unsaved_changes_is_not_reloaded(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    buf = open_file(editor, workspace / "hello.py")
    editor.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, {'my own change'})", buf)
    editor.cmd("Claude")
    editor.type_prompt("greet the world")
    editor.wait_for_turn()

    assert buffer_lines(editor, buf) == ["my own change"]
    assert (workspace / "hello.py").read_text() == "print('hello, world')\n"


def test_interrupt_stops_the_turn_and_the_chat_goes_on(
    editor: Editor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(EDITS))
    editor.cmd("Claude")
    editor.type_prompt("a long answer please")
    editor.wait(
        lambda: any(line.startswith("word word") for line in editor.chat_lines()),
        what="the answer to start streaming",
    )

    editor.cmd("ClaudeInterrupt")
    editor.wait(lambda: editor.chat("state") == "idle", what="the chat to be idle")
    editor.type_prompt("hello again")
    editor.wait(lambda: "Plain answer." in editor.chat_lines(), what="the next answer")

    assert "word " * 400 not in "\n".join(editor.chat_lines()), "the turn was not cut short"


def test_fork_at_a_prompt_continues_in_a_new_chat_with_the_history_up_to_there(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    greet_then_shout(editor)

    cursor_to(editor, "> greet the world")
    editor.cmd("ClaudeFork")
    editor.wait(
        lambda: editor.chat("channel_id") and editor.chat("number") == 2, what="the fork's channel"
    )
    fork_lines = editor.chat_lines()
    editor.type_prompt("what did you do?")
    editor.wait_for_turn(2)

    assert "> greet the world" in fork_lines and "> now shout" not in fork_lines
    sent = model.main_requests[-1]["messages"]
    said = repr(sent)
    assert "greet the world" in said and "now shout" not in said, (
        "the fork's model saw the cut history"
    )
    assert editor.chat("session_id", 2) != editor.chat("session_id", 1)


def test_rewind_previews_the_files_then_restores_them(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(EDITS))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    buf = open_file(editor, workspace / "hello.py")
    greet_then_shout(editor)
    cursor_to(editor, "> now shout", below=2)

    editor.cmd("ClaudeRewind")
    question = editor.wait(lambda: editor.questions(), what="the rewind question")[0]
    preview = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    editor.answer("Rewind")
    editor.wait(
        lambda: (workspace / "hello.py").read_text() == "print('hello, world')\n",
        what="the file to be rewound",
    )

    assert question["labels"] == ["Rewind", "Cancel"]
    assert preview[0].startswith("Rewind 1 file(s)")
    assert "-print('HELLO, WORLD')" in preview and "+print('hello, world')" in preview
    editor.wait(
        lambda: buffer_lines(editor, buf) == ["print('hello, world')"],
        what="the buffer to follow the rewind",
    )


def test_a_stored_session_is_resumed_from_the_list_with_its_history(
    start_editor: StartEditor, model: ScriptedModel
) -> None:
    first = start_editor()
    first.cmd("Claude")
    first.type_prompt("remember the word BANANA")
    first.wait_for_turn()
    first.quit()

    editor = start_editor()
    editor.cmd("ClaudeSessions")
    question = editor.wait(lambda: editor.questions(), what="the session list")[0]
    editor.answer(question["labels"][0])
    editor.wait(lambda: editor.chat("channel_id"), what="the resumed channel")
    history = editor.chat_lines()
    editor.type_prompt("which word?")
    editor.wait_for_turn(1)

    assert "remember the word BANANA" in question["labels"][0]
    assert "> remember the word BANANA" in history and "A scripted answer." in history
    assert "BANANA" in repr(model.main_requests[-1]["messages"]), "the model saw the history"


def test_plan_approval_and_agent_questions_are_pickers(
    editor: Editor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(EDITS))
    editor.cmd("Claude")
    editor.cmd("ClaudeMode plan")
    editor.wait(lambda: editor.chat("mode") == "plan", what="plan mode")

    editor.type_prompt("make a plan")
    plan = editor.wait(lambda: editor.questions(), what="the plan question")[0]
    editor.answer("Yes, and auto-accept edits")
    editor.wait_for_turn(1)
    editor.type_prompt("which color do I like?")
    color = editor.wait(lambda: editor.questions(), what="the agent's question")[0]
    editor.answer("Blue — cold")
    editor.wait_for_turn(2)

    assert plan["prompt"] == "Claude has a plan. Go ahead?"
    assert editor.chat("mode") == "acceptEdits"
    assert color == {
        "prompt": "Which color?",
        "input": False,
        "labels": ["Red — warm", "Blue — cold", "Other… — answer in your own words"],
        "default": "",
    }
    assert "Blue" in repr(model.main_requests[-1]["messages"])


def test_claude_sessions_on_a_session_a_chat_here_has_open_shows_that_chat(
    editor: Editor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(EDITS))
    editor.cmd("Claude")
    editor.type_prompt("hello")
    editor.wait_for_turn(1)
    editor.cmd("ClaudeNew")
    editor.wait(lambda: editor.chat("channel_id", 2), what="the second chat's channel")

    editor.cmd("ClaudeSessions")
    question = editor.wait(lambda: editor.questions(), what="the session list")[0]
    editor.answer(question["labels"][0])

    assert editor.lua("return #require('claude_sidecar.chat').chats") == 2, "no third chat"
    assert editor.chat("number") == 1
    editor.type_prompt("again")
    editor.wait_for_turn(2, number=1)


def test_the_session_list_shows_a_long_session_not_read_yet_without_a_count(
    editor: Editor, home: Path, workspace: Path
) -> None:
    """A session larger than a listing reads (feature partialListing) is listed at once,
    from its head and tail, and says its count is to come."""
    session_id = str(uuid.uuid4())
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    write_long_session(folder / f"{session_id}.jsonl", 500, session_id)  # ~6 MB

    editor.cmd("ClaudeSessions")
    question = editor.wait(lambda: editor.questions(), what="the session list")[0]

    assert question["labels"] == ["2026-11-21 16:42  hello there  (not counted yet)"]
