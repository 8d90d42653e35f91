"""What the prompt offers: the model picker, the context meter, completion, images."""

from __future__ import annotations

import re
from pathlib import Path

from claude_sidecar.scripted import ScriptedModel
from tests.nvim.editor import Editor


def open_chat(editor: Editor) -> None:
    """:Claude, then wait for its channel (and what its CLI offers)."""
    editor.cmd("Claude")
    editor.wait(lambda: editor.chat("channel_id"), what="the channel")


def test_model_picker_lists_the_clis_models_then_their_effort_levels(
        editor: Editor, model: ScriptedModel) -> None:
    open_chat(editor)
    models = editor.lua("return require('claude_sidecar.chat').current().info.models")
    sonnet = next(m for m in models if m["value"] == "sonnet")

    editor.cmd("ClaudeModel")
    question = editor.wait(lambda: editor.questions(), what="the model picker")[0]
    editor.answer(f"{sonnet['displayName']} — {sonnet['description']}")
    effort = editor.wait(lambda: editor.questions(), what="the effort picker")[0]
    editor.answer("high")
    editor.wait(lambda: editor.chat("model") == "sonnet", what="the model switched")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    assert question["prompt"].startswith("Model (now ")
    assert len(question["labels"]) == len(models)
    assert effort["labels"] == sonnet["supportedEffortLevels"]
    assert model.main_requests[-1]["output_config"]["effort"] == "high"
    assert "sonnet" in model.main_requests[-1]["model"]


def test_an_unknown_model_is_refused_with_the_known_ones(editor: Editor) -> None:
    open_chat(editor)
    editor.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")

    editor.cmd("ClaudeModel gpt-9")
    note = editor.wait(lambda: editor.lua("return _G.notes[1]"), what="a refusal")

    assert "unknown model \"gpt-9\"" in note and "sonnet" in note and "haiku" in note
    assert editor.chat("model") != "gpt-9"


def daemon_context_percentage(editor: Editor) -> float:
    """The current chat's claude/contextUsage percentage, asked of the daemon directly."""
    return editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local answer
        require("claude_sidecar.rpc").request("claude/contextUsage", { channelId = c.channel_id },
          function(err, usage) answer = usage or err end)
        vim.wait(30000, function() return answer ~= nil end)
        return answer.percentage
    """)


def chat_winbar(editor: Editor) -> str:
    return editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true }).str
    """)


def test_after_a_turn_the_statusline_and_winbar_show_context_use_and_cost(
        editor: Editor) -> None:
    open_chat(editor)
    editor.type_prompt("hello")
    editor.wait_for_turn()

    line = editor.wait(lambda: "ctx" in (s := editor.lua(
        "return require('claude_sidecar').statusline()")) and s, what="the meter in the statusline")
    meter = re.search(r"ctx (\d+)% · \$(\d+\.\d{4})$", line)
    cost = editor.lua("return require('claude_sidecar.chat').current().t.cost_usd")

    assert meter, line
    assert int(meter[1]) == round(daemon_context_percentage(editor))
    assert float(meter[2]) == round(cost, 4) and cost > 0
    assert chat_winbar(editor).endswith(meter[0])
