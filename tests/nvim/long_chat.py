"""A long stored chat for the Neovim tests, and what they ask the plugin about its pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_sidecar.cli.paths import project_dir

from tests.nvim.editor import Editor
from tests.repeated_session import write_long_session

SESSION = "6b1e0c2d-3f4a-4b5c-8d6e-7f8091a2b3c4"
PAGE = 20
COPIES = 12  # 84 entries: the last page, then pages of 20, 20, 20 and 4


def store_long_session(home: Path, workspace: Path) -> int:
    """A session of the workspace with ``COPIES * 7`` entries; returns how many."""
    folder = project_dir(home, str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    return write_long_session(folder / f"{SESSION}.jsonl", COPIES, SESSION)


def record_transcript_requests(editor: Editor) -> None:
    """Keep the params of each claude/getTranscript, claude/getHistory and claude/attach the
    plugin sends in _G.reads."""
    editor.lua("""
        _G.reads = {}
        local rpc = require("claude_sidecar.rpc")
        local request = rpc.request
        rpc.request = function(method, params, callback)
          if method == "claude/getTranscript" or method == "claude/getHistory" or method == "claude/attach" then
            table.insert(_G.reads, { method = method, params = vim.deepcopy(params) })
          end
          return request(method, params, callback)
        end
    """)


def reads(editor: Editor) -> list[dict[str, Any]]:
    return editor.lua_as(list[dict[str, Any]], "return _G.reads")


def resume(editor: Editor) -> None:
    editor.cmd("ClaudeSessions")
    editor.wait(lambda: editor.questions(), what="the session list")
    editor.answer(editor.questions()[0]["labels"][0])
    editor.wait(
        lambda: editor.chat("channel_id")
        and editor.chat_lines()[-1] == "═══ resumed: the conversation goes on from here ═══",
        what="the resumed chat",
    )


def daemon_ids(editor: Editor) -> list[str]:
    """The ids of the chat's entries as the daemon has them (its whole getTranscript)."""
    editor.lua("""
        _G.full = nil
        local c = require("claude_sidecar.chat").current()
        require("claude_sidecar.rpc").request("claude/getTranscript", { channelId = c.channel_id },
          function(err, result) _G.full = result or err end)
    """)
    full = editor.wait(lambda: editor.lua("return _G.full"), what="the whole transcript")
    return [entry["id"] for entry in full["entries"]]


def shown_ids(editor: Editor) -> list[str]:
    """The ids of the daemon's entries the chat holds (not the plugin's own lines)."""
    return [e["id"] for e in editor.entries() if not e["id"].startswith("nvim:")]


def older_line(editor: Editor) -> str | None:
    """The virtual line under the chat's title that says older entries exist (None: none)."""
    line: Any = editor.lua(
        """
        local c = require("claude_sidecar.chat").current()
        local ns = vim.api.nvim_get_namespaces()["claude_sidecar.older"]
        local marks = vim.api.nvim_buf_get_extmarks(c.buf, ns, 0, -1, { details = true })
        return marks[1] and marks[1][4].virt_lines[1][1][1] or nil
    """
    )
    assert line is None or isinstance(line, str)
    return line


def loading(editor: Editor) -> bool:
    return bool(
        editor.lua("""
        local older = require("claude_sidecar.chat").current().older
        return older ~= nil and older.loading == true
    """)
    )


def page_read(editor: Editor, held: int) -> bool:
    """Whether the chat holds more than ``held`` entries and reads no page now."""
    return len(shown_ids(editor)) > held and not loading(editor)


def prompt_rows(editor: Editor) -> list[int]:
    return [row for row, line in enumerate(editor.chat_lines()) if line.startswith("> ")]


def highlighted_rows(editor: Editor, group: str) -> list[int]:
    """The rows of the chat buffer highlighted as ``group``."""
    return editor.lua_as(
        list[int],
        """
        local c = require("claude_sidecar.chat").current()
        local ns = vim.api.nvim_get_namespaces()["claude_sidecar.chat"]
        local rows = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(c.buf, ns, 0, -1, { details = true })) do
          if m[4].hl_group == ... then
            table.insert(rows, m[2])
          end
        end
        table.sort(rows)
        return rows
    """,
        group,
    )


def focus_transcript(editor: Editor) -> None:
    editor.lua("""
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_set_current_win(vim.fn.bufwinid(c.buf))
    """)
