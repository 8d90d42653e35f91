"""Neovim without credentials: the first message's turn shows one error, with the command
that signs the user in, as a notification and as the chat's notice (not the CLI's "Please
run /login"). The real daemon and CLI, a temp HOME, no key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.env import isolated_env
from tests.nvim.editor import Editor


@pytest.fixture
def daemon_env(home: Path) -> dict[str, str]:
    # No model URL and no key: the CLI has no credentials.
    return isolated_env(home)


def test_a_chat_without_credentials_shows_the_sign_in_fix_once(editor: Editor) -> None:
    editor.lua("_G.messages = {}; vim.notify = function(msg) table.insert(_G.messages, msg) end")

    editor.cmd("Claude")
    editor.type_prompt("hello")
    turn = editor.wait_for_turn()

    assert turn["outcome"] == "error"
    said = [m for m in editor.lua_as(list[str], "return _G.messages") if "credentials" in m]
    assert len(said) == 1, said
    assert said[0].startswith("claude-sidecar: Claude Code has no credentials; sign in")
    assert "\nSign in from a terminal: " in said[0] and " login" in said[0]
    lines = "\n".join(editor.chat_lines())
    assert "Claude Code has no credentials" in lines and "ANTHROPIC_API_KEY" in lines
    assert "Please run /login" not in lines
