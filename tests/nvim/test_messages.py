"""What the plugin and the daemon log, shown in a Neovim with a UI attached (as a user's is):
one line that fits the command line, never a hit-enter prompt, which stops Neovim (no chat
drawn, no UI's request answered) until a key is pressed."""

from __future__ import annotations

import time
from typing import Any

from tests.nvim.editor import Editor
from tests.nvim.test_install_and_health import checkhealth

COLUMNS = 80
SECOND = (
    "daemon: claude_sidecar.hub: a second warning, longer than the command line is wide, "
    "to be cut\n  with a second line"
)


def attach_ui(editor: Editor) -> None:
    """A UI of ``COLUMNS`` columns: without one, Neovim never waits at a prompt."""
    editor.nvim.request("nvim_ui_attach", COLUMNS, 24, {"ext_linegrid": True})


def mode_once_idle(editor: Editor) -> dict[str, Any]:
    """Neovim's mode (``nvim_get_mode``, answered even at a prompt) once it is in insert mode
    (the test's last scheduled callback ran) or waits at a prompt, which is then answered
    (<CR>, until none is left) so that the test can go on and fail."""
    deadline = time.monotonic() + 60
    while True:
        mode: dict[str, Any] = editor.nvim.request("nvim_get_mode")
        if mode["blocking"]:
            while editor.nvim.request("nvim_get_mode")["blocking"]:
                editor.nvim.request("nvim_input", "<CR>")
                time.sleep(0.05)
            return mode
        if mode["mode"] == "i":
            return mode
        assert time.monotonic() < deadline, f"Neovim stayed in mode {mode}"
        time.sleep(0.05)


def test_daemon_warnings_logged_at_once_are_one_line_that_fits_and_no_prompt(
    editor: Editor,
) -> None:
    attach_ui(editor)
    long_path = "/tmp/pytest-of-someone/pytest-1234/a-test-with-a-long-name0/home/.cache"
    editor.lua(
        """
        local long_path = ...
        local read = require("claude_sidecar.log").daemon_reader()
        read("2026-11-29 23:05:44,111 WARNING claude_sidecar.sessions.quick_listing: listing index "
          .. long_path .. "/claude-sidecar/listing-v1.sqlite not used: database is locked")
        read("2026-11-29 23:05:44,112 WARNING claude_sidecar.hub: a second warning, longer than the"
          .. " command line is wide, to be cut")
        read("  with a second line")
        read(nil) -- the daemon exited: its last record is logged now
        -- Runs after the plugin has shown what was logged: insert mode says it did.
        vim.schedule(function() vim.cmd.startinsert() end)
        """,
        long_path,
    )

    mode = mode_once_idle(editor)

    assert not mode["blocking"], f"a hit-enter prompt: {mode}"
    shown = editor.nvim.request("nvim_exec2", "messages", {"output": True})["output"]
    head, cut = "claude-sidecar: (+1 more) ", "…"
    assert shown.startswith(head) and shown.endswith(cut), shown
    assert len(shown) > len(head) + len("daemon: ")
    assert SECOND.startswith(shown[len(head) : -1])
    assert len(shown) <= editor.lua("return vim.v.echospace"), "it fits the command line"
    assert editor.lua("return require('claude_sidecar.log').recent()") == [
        "daemon: claude_sidecar.sessions.quick_listing: listing index "
        f"{long_path}/claude-sidecar/listing-v1.sqlite not used: database is locked",
        SECOND,
    ]


def test_checkhealth_lists_the_warnings_shown_cut_whole(editor: Editor) -> None:
    attach_ui(editor)
    editor.lua(
        """
        require("claude_sidecar.log").warn("a warning of the plugin, %s", string.rep("long ", 30))
        vim.schedule(function() vim.cmd.startinsert() end)
        """
    )
    assert not mode_once_idle(editor)["blocking"]
    editor.cmd("stopinsert")

    report = checkhealth(editor)

    assert "the last of them, whole:" in report
    assert "a warning of the plugin, " + "long " * 29 + "long" in report
