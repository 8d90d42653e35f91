"""Neovim and the version handshake: the plugin states the protocol the schema says, a daemon
that does not fit is one error with the fix (not a failing chat), and a command the daemon does
not serve says so instead of failing at its request. The real daemon of this checkout."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar import __version__

from tests.nvim.editor import Editor, StartEditor

CHECKOUT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((CHECKOUT / "docs" / "protocol.schema.json").read_text(encoding="utf-8"))
ERROR = 4  # vim.log.levels.ERROR


def record_messages(editor: Editor) -> None:
    editor.lua(
        "_G.messages = {}; vim.notify = function(msg, level)"
        " table.insert(_G.messages, { text = msg, level = level }) end"
    )


def messages(editor: Editor) -> list[dict[str, Any]]:
    return editor.lua_as(list[dict[str, Any]], "return _G.messages")


def test_the_plugin_speaks_the_protocol_of_the_schema(editor: Editor) -> None:
    protocol = editor.lua("return require('claude_sidecar.protocol').options()")

    assert protocol["version"] == SCHEMA["x-protocolVersion"]
    assert SCHEMA["x-oldestClientProtocol"] <= protocol["version"]
    assert protocol["oldest"] <= SCHEMA["x-protocolVersion"]
    assert protocol["client"] == {"name": "claude_sidecar.nvim", "version": __version__}


def test_a_daemon_older_than_the_plugin_needs_is_one_error_with_the_upgrade_command(
    editor: Editor,
) -> None:
    record_messages(editor)
    # As a plugin of a later release would be: it needs a daemon of protocol 2.
    editor.lua("require('claude_sidecar.protocol').OLDEST = 2")

    editor.cmd("Claude")
    editor.wait(lambda: any("could not start" in line for line in editor.chat_lines()))

    fix = f"git -C {shlex.quote(str(CHECKOUT))} pull && "
    [said] = messages(editor)
    assert said["level"] == ERROR
    assert said["text"].startswith(
        "claude-sidecar: claude_sidecar.nvim needs a claude-sidecar daemon of protocol 2 or "
        "newer; this daemon ("
    )
    assert fix in said["text"] and said["text"].endswith(" doctor, then restart the editor")
    notice = next(line for line in editor.chat_lines() if "could not start" in line)
    assert "needs a claude-sidecar daemon of protocol 2" in notice


def test_an_old_daemons_refusal_of_the_protocol_option_reads_as_upgrade_the_daemon(
    editor: Editor,
) -> None:
    # What a daemon from before the handshake answers (docs/protocol.md, initialize).
    refusal = {
        "code": -32602,
        "message": "invalid params: `initializationOptions.protocol` is not a known parameter; "
        "remove it or check its spelling; see initialize in docs/protocol.md",
        "data": {"name": "invalidParams", "field": "initializationOptions.protocol"},
    }
    other = {**refusal, "data": {"name": "invalidParams", "field": "initializationOptions.cliPath"}}

    said = editor.lua("return require('claude_sidecar.protocol').mismatch(...)", refusal)
    not_said = editor.lua("return require('claude_sidecar.protocol').mismatch(...)", other)

    assert said.startswith("this claude-sidecar daemon is older than the plugin")
    assert "`uv tool upgrade claude-sidecar`" in said and "restart Neovim" in said
    assert not_said is None


@pytest.mark.cross_release
def test_claude_attach_on_a_daemon_without_attach_says_so_instead_of_failing(
    start_editor: StartEditor,
) -> None:
    # The shared mode's commands, but the daemon command runs a private daemon (--stdio),
    # which lists no "attach" feature.
    editor = start_editor({"daemon": "shared"})
    record_messages(editor)

    editor.cmd("ClaudeAttach")

    said = editor.wait(lambda: messages(editor), what="a message")
    server = editor.lua("return require('claude_sidecar.rpc').server()")
    assert "attach" not in server["features"]
    assert said == [
        {
            "text": f"claude-sidecar: :ClaudeAttach is not available: this claude-sidecar daemon "
            f'({server["version"]}) does not serve "attach" (a private daemon serves one '
            "editor; `claude-sidecar connect` reaches the shared one)",
            "level": 3,
        }
    ]
    assert editor.questions() == [], "no picker of chats it cannot attach to"
