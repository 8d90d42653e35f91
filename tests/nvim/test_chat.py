"""A chat with Claude inside Neovim: the real daemon, the real CLI, the stand-in model."""

from __future__ import annotations

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.nvim.editor import Editor

# What the user sees of a chat holds against the daemon of the release before or after.
pytestmark = pytest.mark.cross_release

THINK_AND_ANSWER = {
    "rules": [
        {
            "match": "(?i)capital",
            "steps": [
                [
                    {"thinking": "The user asks for the capital of France.\nThat is Paris."},
                    {"text": "The capital of France is **Paris**."},
                ]
            ],
            "chunk": 4,
            "delay": 0.002,
        }
    ],
    "default": [[{"text": "A scripted answer."}]],
}


def test_claude_opens_a_chat_and_a_reply_streams_into_its_buffer(
    editor: Editor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(THINK_AND_ANSWER))

    editor.cmd("Claude")
    editor.type_prompt("What is the capital of France?")
    result = editor.wait_for_turn()

    lines = editor.chat_lines()
    assert lines[0].startswith("# Claude #1")
    assert "> What is the capital of France?" in lines
    assert "The capital of France is **Paris**." in lines
    assert "∴ Thinking" in lines and "  That is Paris." in lines
    assert lines[-1].startswith("─── done in ") and "$" in lines[-1]
    assert result["outcome"] == "success"


def test_thinking_is_folded_away(editor: Editor, model: ScriptedModel) -> None:
    model.set_scenario(load_scenario(THINK_AND_ANSWER))
    editor.cmd("Claude")
    editor.type_prompt("capital?")
    editor.wait_for_turn()

    folded = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
        for i, line in ipairs(lines) do
          if line == "  That is Paris." then
            return vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(i) end)
          end
        end
    """)

    assert folded > 0, "the thinking lines are not in a closed fold"
