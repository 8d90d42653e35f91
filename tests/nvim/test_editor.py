"""The plugin as part of Neovim: its daemon, selections, editor tools, health, statusline."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from pathlib import Path

from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import wait_until_dead
from tests.nvim.editor import Editor

ASK_DIAGNOSTICS = {
    "rules": [
        {
            "match": "(?i)problems",
            "steps": [
                [{"tool_use": {"name": "mcp__editor__getDiagnostics", "input": {}}}],
                [{"text": "I looked at the diagnostics."}],
            ],
        },
    ],
    "default": [[{"text": "A scripted answer."}]],
}


def test_a_daemon_that_dies_is_started_again_and_the_chat_resumes_its_session(
    editor: Editor, model: ScriptedModel
) -> None:
    editor.cmd("Claude")
    editor.type_prompt("remember the word BANANA")
    editor.wait_for_turn(1)
    session_id = editor.chat("session_id")
    first_daemon = editor.daemon_pid()
    assert first_daemon is not None

    os.kill(first_daemon, signal.SIGKILL)
    editor.wait(lambda: editor.chat("state") == "exited", what="the chat to notice")
    editor.type_prompt("which word?")
    editor.wait_for_turn(2)

    assert editor.daemon_pid() not in (None, first_daemon)
    assert editor.chat("session_id") == session_id
    assert any("daemon exited" in line for line in editor.chat_lines())
    assert "BANANA" in repr(model.main_requests[-1]["messages"]), "the history was not resumed"
    assert asyncio.run(wait_until_dead([first_daemon])) == []


def test_claude_send_with_a_range_sends_the_lines_as_context(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n\nprint(add(1, 2))\n")
    editor.cmd(f"edit {workspace / 'calc.py'}")

    editor.cmd("1,2ClaudeSend why is this wrong?")
    editor.wait_for_turn()

    prompt = next(e for e in editor.entries() if e["kind"] == "prompt")["text"]
    assert prompt.startswith("calc.py lines 1-2:\n```python\ndef add(a, b):\n    return a - b\n```")
    assert prompt.endswith("why is this wrong?")
    assert "return a - b" in repr(model.main_requests[-1]["messages"])


def test_the_agent_reads_neovims_diagnostics_through_the_editor_tools(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(ASK_DIAGNOSTICS))
    (workspace / "app.py").write_text("x = undefined_name\n")
    editor.cmd(f"edit {workspace / 'app.py'}")
    editor.lua("""
        local ns = vim.api.nvim_create_namespace("test-linter")
        vim.diagnostic.set(ns, 0, { { lnum = 0, col = 4, severity = vim.diagnostic.severity.ERROR,
          source = "pyflakes", message = "undefined name 'undefined_name'" } })
    """)

    editor.cmd("Claude")
    editor.type_prompt("any problems in my code?")
    editor.wait_for_turn()

    results = [
        block
        for m in model.main_requests[-1]["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]
    answer = json.loads(results[-1]["content"][0]["text"])
    assert answer == {
        "diagnostics": [
            {
                "file": str(workspace / "app.py"),
                "line": 1,
                "column": 5,
                "severity": "error",
                "source": "pyflakes",
                "message": "undefined name 'undefined_name'",
            }
        ]
    }
    assert any(line.startswith("● mcp__editor__getDiagnostics") for line in editor.chat_lines())


def test_several_chats_run_at_once_and_a_picker_switches_between_them(
    editor: Editor, model: ScriptedModel
) -> None:
    editor.cmd("Claude")
    editor.type_prompt("first chat")
    editor.cmd("ClaudeNew")
    editor.type_prompt("second chat")
    editor.wait_for_turn(1, number=1)
    editor.wait_for_turn(1, number=2)

    editor.cmd("ClaudeChats")
    question = editor.wait(lambda: editor.questions(), what="the chat picker")[0]
    editor.answer(question["labels"][0])

    assert len(question["labels"]) == 2 and "first chat" in question["labels"][0]
    assert editor.chat("number") == 1
    shown = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        return vim.fn.bufwinid(c.buf) ~= -1 and vim.fn.bufwinid(c.prompt_buf) ~= -1
    """)
    assert shown
    assert editor.chat("channel_id", 1) != editor.chat("channel_id", 2)


def test_the_statusline_shows_state_mode_and_cost(editor: Editor) -> None:
    assert editor.lua("return require('claude_sidecar').statusline()") == ""
    editor.cmd("Claude")
    editor.cmd("ClaudeMode acceptEdits")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    line = editor.wait(
        lambda: "acceptEdits"
        in (s := editor.lua_as(str, "return require('claude_sidecar').statusline()"))
        and s,
        what="the mode in the statusline",
    )

    assert re.fullmatch(r"Claude: idle · acceptEdits( · ctx \d+%)? · \$\d+\.\d{4}", line), line
