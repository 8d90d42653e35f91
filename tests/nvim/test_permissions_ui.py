"""Permission requests in Neovim: seen before answered, answered the way the user means."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.nvim.editor import Editor
from tests.nvim.scenarios import GREET, PLAN, WHICH_COLOR, scenario

# The tests marked cross_release: what the user answers reaches a daemon of the release before or
# after (allow, deny, later, a question, a plan).

BIG = "".join(f"line {i}\n" for i in range(80))

BIG_WRITE = {
    "match": "(?i)big",
    "steps": [
        [{"tool_use": {"name": "Write", "input": {"file_path": "{cwd}/big.txt", "content": BIG}}}],
        [{"text": "Written."}],
    ],
}
TOPPINGS = {
    "match": "(?i)toppings",
    "steps": [
        [
            {
                "tool_use": {
                    "name": "AskUserQuestion",
                    "input": {
                        "questions": [
                            {
                                "question": "Which toppings?",
                                "header": "Pizza",
                                "multiSelect": True,
                                "options": [
                                    {"label": "Cheese", "description": "always"},
                                    {"label": "Olives", "description": "salty"},
                                    {"label": "Basil", "description": "fresh"},
                                ],
                            }
                        ]
                    },
                }
            }
        ],
        [{"text": "Ordered."}],
    ],
}
SCENARIO = scenario(GREET, BIG_WRITE, WHICH_COLOR, TOPPINGS, PLAN)


def start(editor: Editor, model: ScriptedModel, workspace: Path) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    (workspace / "hello.py").write_text("print('hello')\n")
    editor.cmd("Claude")


def ask(editor: Editor, prompt: str) -> dict[str, Any]:
    """Send ``prompt`` and wait for the first picker it brings up."""
    editor.type_prompt(prompt)
    return editor.wait(lambda: editor.questions(), what="a picker")[0]


def visible(screen: list[dict[str, Any]], *, floats: bool | None = None) -> str:
    return "\n".join(
        line for win in screen if floats is None or win["float"] == floats for line in win["lines"]
    )


def test_the_diff_is_on_screen_when_the_picker_asks(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")

    shown = visible(editor.screen_at_question())

    assert "● Edit(hello.py)" in shown
    assert "    -print('hello')" in shown and "    +print('hello, world')" in shown
    assert "  ? waiting for your answer" in shown


def test_a_diff_too_long_for_the_chat_window_is_shown_in_a_float_while_asked(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "write something big")

    in_float = visible(editor.screen_at_question(), floats=True)
    editor.answer("Allow")
    editor.wait_for_turn()

    assert "+line 0" in in_float and "+++ big.txt" in in_float
    assert (
        editor.lua("""
        for _, win in ipairs(vim.api.nvim_list_wins()) do
          if vim.api.nvim_win_get_config(win).relative ~= "" then return false end
        end
        return true""")
        is True
    ), "the preview closes once answered"
    assert (workspace / "big.txt").read_text() == BIG


@pytest.mark.cross_release
def test_the_permission_sits_between_the_tool_call_and_its_result(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Allow")
    editor.wait_for_turn()

    lines = editor.chat_lines()
    tool = lines.index("● Edit(hello.py)")
    answer = lines.index("  ✓ allowed")
    result = next(i for i, line in enumerate(lines) if line.startswith("  ⎿ "))
    assert tool < answer < result


@pytest.mark.cross_release
def test_deny_with_a_reason_tells_the_model_why(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Deny with reason…")
    reason = editor.wait(lambda: editor.questions(), what="the reason prompt")[0]
    editor.answer("use a greet() function instead")
    editor.wait_for_turn()

    assert reason["input"] is True
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    assert "use a greet() function instead" in repr(model.main_requests[-1]["messages"])
    assert "  ✗ denied: use a greet() function instead" in editor.chat_lines()


def test_an_answered_diff_folds_away_and_the_answer_stays_in_sight(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Deny with reason…")
    editor.wait(lambda: editor.questions(), what="the reason prompt")
    editor.answer("not now")
    editor.wait_for_turn()

    folded = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        local out = {}
        for i, line in ipairs(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)) do
          out[line] = vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(i) ~= -1 end)
        end
        return out""")
    assert folded["    -print('hello')"] is True
    assert folded["  ✗ denied: not now"] is False
    assert folded["  ⎿ ✗ not now"] is False


@pytest.mark.cross_release
def test_later_leaves_the_request_pending_until_claude_permissions_answers_it(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Later")

    assert editor.questions() == []
    assert editor.chat("state") == "awaitingPermission"
    assert "  ? waiting for your answer (:ClaudePermissions)" in editor.chat_lines()
    editor.cmd("ClaudePermissions")
    listed = editor.wait(lambda: editor.questions(), what="the list of waiting requests")[0]
    editor.answer(listed["labels"][0])
    again = editor.wait(lambda: editor.questions(), what="the request asked again")[0]
    editor.answer("Allow")
    editor.wait_for_turn()

    assert listed["labels"] == [f"Claude #1 ({workspace.name}): Edit(hello.py)"]
    assert again["prompt"] == "Allow Edit(hello.py)?"
    assert (workspace / "hello.py").read_text() == "print('hello, world')\n"


def test_an_interrupted_request_leaves_the_waiting_list(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Later")
    editor.cmd("ClaudeInterrupt")
    editor.wait_for_turn()

    assert editor.lua("return #require('claude_sidecar.permissions').pending()") == 0
    assert any(line.startswith("  – withdrawn") for line in editor.chat_lines())


def test_a_request_left_for_later_is_withdrawn_when_the_daemon_dies(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "greet the world")
    editor.answer("Later")

    daemon = editor.daemon_pid()
    assert daemon is not None
    os.kill(daemon, signal.SIGKILL)  # no goodbye: nothing cancels the request
    editor.wait(
        lambda: "  – withdrawn (the daemon exited)" in editor.chat_lines(),
        what="the request withdrawn",
    )

    assert editor.lua("return #require('claude_sidecar.permissions').pending()") == 0


def test_the_picker_says_which_chat_asks_when_several_run(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    editor.cmd("ClaudeNew")

    question = ask(editor, "greet the world")

    assert question["prompt"] == f"Claude #2 ({workspace.name}): Allow Edit(hello.py)?"


@pytest.mark.cross_release
def test_a_question_shows_its_options_with_descriptions_and_takes_free_text(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    question = ask(editor, "which color do I like?")
    shown = visible(editor.screen_at_question())
    editor.answer("Other… — answer in your own words")
    editor.wait(lambda: editor.questions(), what="the free-text prompt")
    editor.answer("Green")
    editor.wait_for_turn()

    assert question["labels"] == ["Red — warm", "Blue — cold", "Other… — answer in your own words"]
    assert "  • Red — warm" in shown and "  • Blue — cold" in shown
    assert "Green" in repr(model.main_requests[-1]["messages"])
    assert "  ✓ answered: Green" in editor.chat_lines()


def test_a_multiple_choice_question_takes_several_options_until_done(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    ask(editor, "choose pizza toppings")
    editor.answer("Cheese — always")
    again = editor.wait(lambda: editor.questions(), what="the question again")[0]
    editor.answer("Basil — fresh")
    editor.wait(lambda: editor.questions(), what="the question again")
    editor.answer("Done — Cheese, Basil")
    editor.wait_for_turn()

    assert again["labels"][:2] == ["✓ Cheese — always", "Olives — salty"]
    assert "Cheese, Basil" in repr(model.main_requests[-1]["messages"])
    assert "  ✓ answered: Cheese, Basil" in editor.chat_lines()


@pytest.mark.cross_release
def test_the_plan_is_shown_as_markdown_before_it_is_approved(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    editor.cmd("ClaudeMode plan")
    editor.wait(lambda: editor.chat("mode") == "plan", what="plan mode")
    question = ask(editor, "make a plan")

    previews = [w for w in editor.screen_at_question() if w["float"]]
    editor.answer("Yes, and ask before each edit")
    editor.wait_for_turn()

    assert question["prompt"] == "Claude has a plan. Go ahead?"
    assert previews and previews[0]["filetype"] == "markdown"
    assert previews[0]["lines"][0] == "# Greeting plan"
    assert editor.chat("mode") == "default"


def test_a_permission_request_is_a_user_event(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    editor.lua("""
        _G.asked = {}
        vim.api.nvim_create_autocmd("User", { pattern = "ClaudePermissionRequest",
          callback = function(args) table.insert(_G.asked, args.data) end })""")
    start(editor, model, workspace)
    ask(editor, "greet the world")

    asked = editor.lua("return _G.asked")

    assert len(asked) == 1 and asked[0]["chat"] == 1 and asked[0]["tool"] == "Edit"
    assert asked[0]["request_id"]


def test_rewind_in_a_chat_whose_cli_exited_says_why(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    start(editor, model, workspace)
    editor.type_prompt("hello")
    editor.wait_for_turn()
    editor.lua("require('claude_sidecar.rpc').stop(3000)")
    editor.wait(lambda: editor.chat("state") == "exited", what="the chat to see its CLI gone")
    editor.lua("_G.said = {}; vim.notify = function(msg) table.insert(_G.said, msg) end")

    editor.lua("""
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_set_current_win(vim.fn.bufwinid(c.buf))
        vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(c.buf), 0 })""")
    editor.cmd("ClaudeRewind")

    said = editor.wait(lambda: editor.lua("return _G.said"), what="a message")
    assert any("cannot rewind: Claude #1's CLI is not running (exited)" in s for s in said), said


def test_while_neovims_own_picker_asks_the_winbar_shows_the_state_and_line_one_names_the_chat(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    # The inputlist() holds the screen: the winbar is still redrawn, the buffer's lines are not.
    editor.use_neovims_own_select()
    start(editor, model, workspace)
    heading = editor.chat_lines()[0]
    editor.type_prompt("greet the world")
    editor.wait(editor.own_select_asks, what="Neovim's own picker asking")

    title = editor.wait(
        lambda: "awaitingPermission" in editor.winbar() and editor.winbar(), what="the state"
    )
    assert title.startswith(f"Claude #1 · {workspace.name} · awaitingPermission")
    assert heading == editor.chat_lines()[0] == f"# Claude #1 · {workspace}"
    editor.nvim.input("1<CR>")  # Allow, typed as the user does
    editor.wait_for_turn()
    assert "  ✓ allowed" in editor.chat_lines()
    assert "idle" in editor.winbar() and editor.chat_lines()[0] == heading
