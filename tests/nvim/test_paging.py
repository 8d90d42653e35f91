"""A long chat in Neovim: opened at its last page, older pages read as the user goes up
(real daemon, real CLI, a stored session grown by tests/repeated_session.py)."""

from __future__ import annotations

import os
import signal
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import held_cli_env
from tests.nvim.editor import Editor, StartEditor
from tests.nvim.long_chat import (
    PAGE,
    daemon_ids,
    focus_transcript,
    highlighted_rows,
    loading,
    older_line,
    page_read,
    prompt_rows,
    reads,
    record_transcript_requests,
    resume,
    shown_ids,
    store_long_session,
)
from tests.nvim.scenarios import HELD_LONG, PONDER, RELEASE, scenario


def test_a_resumed_long_chat_shows_its_last_page_and_says_earlier_entries_exist(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    count = store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    record_transcript_requests(editor)

    resume(editor)

    everything = daemon_ids(editor)
    assert len(everything) == count
    assert shown_ids(editor) == everything[-PAGE:]
    assert older_line(editor) == "… earlier entries not shown: gg or [[ loads them"
    assert reads(editor)[0]["params"]["limit"] == PAGE
    assert "> hello there" in editor.chat_lines()
    assert len(editor.chat_lines()) < 100, "only the last page is drawn"


def test_gg_again_and_again_reads_every_page_once_up_to_the_first_prompt(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    count = store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    record_transcript_requests(editor)
    resume(editor)
    focus_transcript(editor)

    for _ in range(count // PAGE + 1):
        if older_line(editor) is None:
            break
        held = len(shown_ids(editor))
        editor.nvim.input("gg")
        editor.wait(partial(page_read, editor, held), what="the page before")

    assert older_line(editor) is None
    assert shown_ids(editor) == daemon_ids(editor), "every entry once, in order"
    assert editor.chat_lines()[1:3] == ["", "> hello there"]
    assert prompt_rows(editor) == highlighted_rows(editor, "ClaudeSidecarPrompt")
    pages = [r["params"] for r in reads(editor) if r["params"].get("before")]
    assert len(pages) == 4
    assert len({p["before"] for p in pages}) == 4, "each page read once"
    assert all(p["limit"] == PAGE for p in pages)


def older_marks(editor: Editor) -> list[tuple[int, str]]:
    """Every mark of the chat's "earlier entries" namespace: its row and its virtual line."""
    return editor.lua_as(
        list[tuple[int, str]],
        """
        local c = require("claude_sidecar.chat").current()
        local ns = vim.api.nvim_get_namespaces()["claude_sidecar.older"]
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(c.buf, ns, 0, -1, { details = true })) do
          table.insert(out, { m[2], m[4].virt_lines[1][1][1] })
        end
        return out
        """,
    )


def test_pages_read_above_leave_one_earlier_entries_line_under_the_title(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    resume(editor)
    focus_transcript(editor)

    for _ in range(2):
        held = len(shown_ids(editor))
        editor.nvim.input("gg")
        editor.wait(partial(page_read, editor, held), what="the page before")

        assert older_marks(editor) == [(0, "… earlier entries not shown: gg or [[ loads them")]


def cursor(editor: Editor) -> tuple[int, int, str]:
    """The current window's cursor line, its top line, and the text under the cursor."""
    return editor.lua_as(
        tuple[int, int, str],
        'return { vim.fn.line("."), vim.fn.line("w0"), vim.api.nvim_get_current_line() }',
    )


def moved_or_read(editor: Editor, was: tuple[int, int, str]) -> bool:
    """Whether the cursor or the view moved from ``was``, or a page is being read or was."""
    return cursor(editor)[:2] != was[:2] or loading(editor) or len(shown_ids(editor)) > PAGE


def entry_at_cursor(editor: Editor) -> str | None:
    """The id of the entry the chat window's cursor is in (None: on the title)."""
    found: Any = editor.lua("""
        local chat = require("claude_sidecar.chat")
        local c = chat.current()
        local index = chat.entry_at(c, vim.fn.line("."))
        return index and c.t.entries[index].id or nil
    """)
    assert found is None or isinstance(found, str)
    return found


def where_brackets_left(editor: Editor) -> tuple[str | None, bool, int]:
    """In one look (a page arriving between two looks moves the lines): the id of the entry
    the cursor is in (None: on the title), whether a page is being read, and how many of the
    daemon's entries the chat holds."""
    found = editor.lua_as(
        tuple[str | None, bool, int],
        """
        local chat = require("claude_sidecar.chat")
        local c = chat.current()
        local index = chat.entry_at(c, vim.fn.line("."))
        local held = 0
        for _, e in ipairs(c.t.entries) do
          if not vim.startswith(e.id, "nvim:") then held = held + 1 end
        end
        local reading = c.older ~= nil and c.older.loading == true
        return { index and c.t.entries[index].id or vim.NIL, reading, held }
        """,
    )
    return found


def test_brackets_go_from_prompt_to_prompt_and_past_the_first_shown_read_the_page_before(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    resume(editor)
    focus_transcript(editor)
    prompts = [e["id"] for e in editor.entries() if e["kind"] == "prompt"]

    visited = []
    while True:
        was = cursor(editor)
        editor.nvim.input("[[")
        editor.wait(partial(moved_or_read, editor, was), what="the cursor to move")
        at, reading, held = where_brackets_left(editor)
        if at is not None:
            visited.append(at)
            assert cursor(editor)[2].startswith("> "), "on the prompt's first line"
        # Past the first prompt shown (the top), or a page on its way: no more [[ (one
        # pressed while the page arrives would go on into it).
        if at is None or reading or held > PAGE:
            break
    editor.wait(partial(page_read, editor, PAGE), what="the page before")

    assert visited == prompts[::-1], "every prompt shown, last to first"
    first_prompt = entry_at_cursor(editor)
    editor.nvim.input("]]")
    editor.wait(
        lambda: entry_at_cursor(editor) in prompts and entry_at_cursor(editor) != first_prompt,
        what="the next prompt",
    )
    assert cursor(editor)[2].startswith("> ")


def test_ctrl_b_up_to_the_top_reads_the_page_before(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    resume(editor)
    everything = daemon_ids(editor)
    focus_transcript(editor)

    while len(shown_ids(editor)) == PAGE and not loading(editor):
        was = cursor(editor)
        editor.nvim.input("<C-b>")
        editor.wait(partial(moved_or_read, editor, was), what="the view to scroll")
    editor.wait(partial(page_read, editor, PAGE), what="the page before")

    assert shown_ids(editor) == everything[-2 * PAGE :]
    assert cursor(editor)[1] > 1, "the page is above the view"


def test_a_page_drawn_above_leaves_the_line_under_the_cursor_where_it_was(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    resume(editor)

    # The cursor in the third entry shown, its window's top showing the title; the page is
    # read then (as going up there reads it), before Neovim takes another key.
    before = editor.lua("""
        local chat = require("claude_sidecar.chat")
        local c = chat.current()
        local win = vim.fn.bufwinid(c.buf)
        vim.api.nvim_set_current_win(win)
        local lnum = c.starts[3] + 2
        vim.fn.winrestview({ lnum = lnum, col = 0, topline = 1 })
        local seen = { id = c.t.entries[chat.entry_at(c, lnum)].id, row = vim.fn.winline(),
          line = vim.api.nvim_get_current_line() }
        chat.load_older(c)
        return seen
    """)
    editor.wait(lambda: page_read(editor, PAGE), what="the page")

    after = editor.lua("""
        local chat = require("claude_sidecar.chat")
        local c = chat.current()
        local lnum = vim.api.nvim_win_get_cursor(0)[1]
        return { id = c.t.entries[chat.entry_at(c, lnum)].id, row = vim.fn.winline(),
          line = vim.api.nvim_get_current_line(), top = vim.fn.line("w0") }
    """)
    assert after["id"] == before["id"]
    assert after["line"] == before["line"]
    assert after["row"] == before["row"], "the view did not move"
    assert after["top"] > 1


def test_a_turn_running_while_a_page_is_read_goes_on_below_it(
    start_editor: StartEditor, home: Path, workspace: Path, model: ScriptedModel
) -> None:
    store_long_session(home, workspace)
    model.set_scenario(load_scenario(scenario(HELD_LONG)))
    editor = start_editor({"page_entries": PAGE})
    resume(editor)
    editor.type_prompt("a long answer please")
    editor.wait(
        lambda: any(line.startswith("word word") for line in editor.chat_lines()),
        what="the answer to start streaming",
    )
    focus_transcript(editor)

    editor.nvim.input("gg")
    editor.wait(lambda: page_read(editor, PAGE + 1), what="a page")
    model.release(RELEASE)

    def answered() -> bool:
        ids = shown_ids(editor)
        entries = editor.entries()
        asked = ids.index(next(e["id"] for e in entries if e.get("text") == "a long answer please"))
        return any(e["kind"] == "turn" for e in entries if e["id"] in ids[asked:])

    editor.wait(answered, what="the end of the turn")
    lines = editor.chat_lines()
    assert shown_ids(editor) == daemon_ids(editor)[-len(shown_ids(editor)) :]
    assert lines.count("> a long answer please") == 1
    answer = [line for line in lines if line.startswith("word word")]  # two text entries
    assert sum(a.count("word") for a in answer) == 400, "the whole answer, below the page"


@pytest.mark.cross_release
def test_a_daemon_without_paging_sends_the_whole_chat(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    count = store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    record_transcript_requests(editor)
    # As a daemon from before transcriptPaging answers initialize.
    editor.lua("""
        local protocol = require("claude_sidecar.protocol")
        local has = protocol.has
        protocol.has = function(feature, server)
          return feature ~= "transcriptPaging" and has(feature, server)
        end
    """)

    resume(editor)

    assert len(shown_ids(editor)) == count
    assert older_line(editor) is None
    assert "limit" not in reads(editor)[0]["params"]
    assert editor.chat_lines()[1:3] == ["", "> hello there"]


def thinking_folds(editor: Editor) -> list[list[int]]:
    """For each thinking block of the chat: its header's line and the closed fold it is in
    in the chat window ([line, first, last]; first -1: not folded)."""
    return editor.lua_as(
        list[list[int]],
        """
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        local out = {}
        for i, line in ipairs(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)) do
          if line == "∴ Thinking" then
            vim.api.nvim_win_call(win, function()
              table.insert(out, { i, vim.fn.foldclosed(i), vim.fn.foldclosedend(i) })
            end)
          end
        end
        return out
    """,
    )


def test_the_thinking_of_a_page_read_above_is_folded_as_the_rest(
    start_editor: StartEditor, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(scenario(PONDER)))
    first = start_editor()
    first.cmd("Claude")
    for turn in range(1, 4):
        first.type_prompt("ponder this")
        first.wait_for_turn(turn)
    first.quit()
    editor = start_editor({"page_entries": 3})
    resume(editor)
    focus_transcript(editor)

    pages = 0
    while older_line(editor) is not None:
        held = len(shown_ids(editor))
        editor.nvim.input("gg")
        editor.wait(partial(page_read, editor, held), what="the page before")
        pages += 1

    assert pages >= 2
    folds = thinking_folds(editor)
    assert len(folds) == 3
    # Each closed from its header to its last step, the page's made and the others moved.
    lines = editor.chat_lines()
    for line, first_line, last_line in folds:
        assert first_line == line
        assert lines[last_line - 1] == "  step 39 of my reasoning"


def test_a_paged_chat_whose_daemon_died_goes_on_and_still_reads_its_older_pages(
    start_editor: StartEditor, home: Path, workspace: Path
) -> None:
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE})
    resume(editor)
    first_daemon = editor.daemon_pid()
    assert first_daemon is not None
    os.kill(first_daemon, signal.SIGKILL)
    editor.wait(lambda: editor.chat("state") == "exited", what="the chat to notice")

    editor.type_prompt("hello again")
    editor.wait_for_turn(1)
    focus_transcript(editor)
    held = len(shown_ids(editor))
    editor.nvim.input("gg")
    editor.wait(partial(page_read, editor, held), what="the page before, from the new daemon")

    assert editor.daemon_pid() not in (None, first_daemon)
    assert shown_ids(editor) == daemon_ids(editor)[-len(shown_ids(editor)) :]


def resume_held(start_editor: StartEditor, home: Path, workspace: Path, go: Path) -> Editor:
    """A Neovim resuming the long session from :ClaudeSessions with its CLI held (until
    ``go`` exists): returned once the chat draws its last page, the channel not open."""
    store_long_session(home, workspace)
    editor = start_editor({"page_entries": PAGE}, **held_cli_env(go))
    record_transcript_requests(editor)
    editor.cmd("ClaudeSessions")
    editor.wait(lambda: editor.questions(), what="the session list")
    editor.answer(editor.questions()[0]["labels"][0])
    editor.wait(lambda: len(shown_ids(editor)) >= PAGE, what="the last page while the CLI starts")
    return editor


def record_changed_rows(editor: Editor) -> None:
    """Keep in _G.changed the first row of each change to the chat buffer from now on."""
    editor.lua("""
        _G.changed = {}
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_buf_attach(c.buf, false, {
          on_lines = function(_, _, _, first) table.insert(_G.changed, first) end,
        })
    """)


def test_a_resumed_chat_shows_its_last_page_while_its_cli_starts(
    start_editor: StartEditor, home: Path, workspace: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    editor = resume_held(start_editor, home, workspace, go)

    shown = shown_ids(editor)
    channel, state = editor.chat("channel_id"), editor.chat("state")
    older = older_line(editor)
    go.touch()
    editor.wait(lambda: editor.chat("channel_id"), what="the channel")

    assert (channel, state) == (None, "starting"), "drawn before the CLI answered"
    assert shown == daemon_ids(editor)[-PAGE:]
    assert older == "… earlier entries not shown: gg or [[ loads them"


def test_a_resumed_chat_whose_channel_page_is_the_preview_is_not_drawn_again(
    start_editor: StartEditor, home: Path, workspace: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    editor = resume_held(start_editor, home, workspace, go)
    drawn = editor.chat_lines()
    record_changed_rows(editor)

    go.touch()
    editor.wait(
        lambda: editor.chat_lines()[-1] == "═══ resumed: the conversation goes on from here ═══",
        what="the resumed chat",
    )

    assert editor.chat_lines()[: len(drawn)] == drawn
    changed = editor.lua_as(list[int], "return _G.changed")
    assert changed and min(changed) >= len(drawn) - 1, "only the marker's lines were written"


def test_a_prompt_sent_while_a_resumed_chat_starts_waits_in_view_and_is_sent_once(
    start_editor: StartEditor, home: Path, workspace: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    editor = resume_held(start_editor, home, workspace, go)

    editor.type_prompt("one more thing")
    editor.wait(
        lambda: "  ⧗ waiting: sent once Claude has started" in editor.chat_lines(),
        what="the waiting prompt",
    )
    waiting = editor.chat_lines()[-3:]
    go.touch()
    editor.wait(lambda: "A scripted answer." in editor.chat_lines(), what="the answer")

    assert waiting == ["", "> one more thing", "  ⧗ waiting: sent once Claude has started"]
    assert editor.chat_lines().count("> one more thing") == 1
    assert "  ⧗ waiting: sent once Claude has started" not in editor.chat_lines()


def test_gg_while_a_resumed_chat_starts_reads_its_stored_pages_and_none_twice(
    start_editor: StartEditor, home: Path, workspace: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    editor = resume_held(start_editor, home, workspace, go)
    focus_transcript(editor)

    editor.nvim.input("gg")
    editor.wait(partial(page_read, editor, PAGE), what="the page before, from the session")
    opened_with = len(shown_ids(editor))
    go.touch()
    editor.wait(lambda: editor.chat("channel_id"), what="the channel")
    while older_line(editor) is not None:
        held = len(shown_ids(editor))
        editor.nvim.input("gg")
        editor.wait(partial(page_read, editor, held), what="the page before")

    assert opened_with == 2 * PAGE
    assert shown_ids(editor) == daemon_ids(editor), "every entry once, in order"
