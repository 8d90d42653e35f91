"""How a chat looks and behaves: turn ends, retries, folds, order, keys, windows, filetypes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.nvim.editor import Editor, StartEditor
from tests.nvim.scenarios import BUSY, COUNT, GREET, HELD_LONG, PONDER, RELEASE, scenario

SCENARIO = scenario(HELD_LONG, PONDER, GREET, COUNT, BUSY)


def start(editor: Editor, model: ScriptedModel) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    editor.cmd("Claude")


def chat_text(editor: Editor) -> str:
    return "\n".join(editor.chat_lines())


def turn_lines(editor: Editor) -> list[str]:
    return [line for line in editor.chat_lines() if line.startswith("─── ")]


def wait_streaming(editor: Editor) -> None:
    editor.wait(
        lambda: any(line.startswith("word word") for line in editor.chat_lines()),
        what="the answer to start streaming",
    )


def record_events(editor: Editor, *names: str) -> None:
    """Keep the data of each User event ``names`` in _G.events (a list of {name, data})."""
    editor.lua(
        """
        _G.events = {}
        for _, name in ipairs({ ... }) do
          vim.api.nvim_create_autocmd("User", { pattern = name, callback = function(args)
            table.insert(_G.events, { name = name, data = args.data })
          end })
        end
    """,
        *names,
    )


def events(editor: Editor) -> list[dict[str, Any]]:
    return editor.lua_as(list[dict[str, Any]], "return _G.events")


def chat_window(editor: Editor) -> int:
    return editor.lua_as(
        int, "return vim.fn.bufwinid(require('claude_sidecar.chat').current().buf)"
    )


# ------------------------------------------------------------------ turn ends


def test_an_interrupted_turn_says_interrupted(editor: Editor, model: ScriptedModel) -> None:
    start(editor, model)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)

    editor.cmd("ClaudeInterrupt")
    result = editor.wait_for_turn()

    assert result["outcome"] == "interrupted"
    assert re.fullmatch(
        r"─── interrupted after \d+\.\d s( · \$\d\.\d{4})? ───", turn_lines(editor)[-1]
    )
    assert "ede_diagnostic" not in chat_text(editor)
    # Said once, by the footer: the CLI's "[Request interrupted by user]" notice is not drawn.
    assert "interrupted" in [e.get("subtype") for e in editor.entries()]
    assert "⏹ interrupted" not in editor.chat_lines()


def test_the_turn_line_shows_the_time_spent_waiting_for_permission(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "hello.py").write_text("print('hello')\n")
    start(editor, model)
    editor.type_prompt("greet the world")
    editor.wait(lambda: editor.questions(), what="the permission question")
    editor.answer("Allow")
    editor.wait_for_turn()

    assert re.fullmatch(
        r"─── done in \d+\.\d s \(\d+\.\d s waiting for permission\) · \$\d\.\d{4} ───",
        turn_lines(editor)[-1],
    ), turn_lines(editor)


def test_turn_ended_is_a_user_event_with_the_outcome(editor: Editor, model: ScriptedModel) -> None:
    record_events(editor, "ClaudeTurnEnded")
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn()

    ended = editor.wait(lambda: events(editor), what="the ClaudeTurnEnded event")
    data = ended[0]["data"]
    assert data["chat"] == 1 and data["outcome"] == "success"
    assert data["duration_ms"] >= 0 and data["permission_wait_ms"] == 0 and data["cost_usd"] > 0


def count_interrupts(editor: Editor) -> None:
    """From now on count the claude/interrupt requests the plugin sends (``_G.interrupts``) and
    the Ctrl-Cs that reach Neovim's key handling unmapped (``_G.unmapped_ctrl_c``): those Neovim
    took as an interrupt of its own work."""
    editor.lua("""
        _G.interrupts, _G.unmapped_ctrl_c = 0, 0
        local rpc = require("claude_sidecar.rpc")
        local request = rpc.request
        rpc.request = function(method, ...)
          if method == "claude/interrupt" then
            _G.interrupts = _G.interrupts + 1
          end
          return request(method, ...)
        end
        vim.on_key(function(key)
          if key == "\\3" then
            _G.unmapped_ctrl_c = _G.unmapped_ctrl_c + 1
          end
        end)
    """)


def counted(editor: Editor, name: str) -> int:
    return editor.lua_as(int, f"return _G.{name}")


def input_while_busy(editor: Editor, tmp_path: Path, keys: str) -> None:
    """Type ``keys`` while Neovim is busy: with work that polls its event loop for input (a
    breakcheck, as its own drawing does), right after it has waited for a key. Neovim takes a
    Ctrl-C read then as an interrupt of that work (got_int): the keys typed before it are
    dropped and it reaches the key handling unmapped. (When it is about to wait for keys, a
    mapped Ctrl-C is a key again, until it has waited: hence the key read first.)

    A function scheduled in Neovim reads one key (getcharstr(), which handles requests while it
    waits), then polls Neovim's event loop until ``keys`` have been read."""
    busy, done = tmp_path / "busy", tmp_path / "done"
    editor.lua(
        """
        local busy, done = ...
        vim.schedule(function()
          _G.reading_a_key = true
          vim.fn.getcharstr()
          assert(io.open(busy, "w")):close()
          local give_up = vim.uv.hrtime() + 120e9 -- a failed test must not leave Neovim in here
          while not vim.uv.fs_stat(done) and vim.uv.hrtime() < give_up do
            vim.uv.run("nowait")
            vim.uv.sleep(1)
          end
        end)
    """,
        str(busy),
        str(done),
    )
    try:
        # Answered from inside getcharstr(): nothing else runs between the flag and the call.
        editor.wait(lambda: editor.lua("return _G.reading_a_key"), what="Neovim in getcharstr()")
        editor.nvim.input("x")
        editor.wait(busy.exists, what="Neovim to run the busy loop")
        # nvim_input is answered at once when Neovim reads it, here inside the loop, which runs
        # on until `done` is there.
        editor.nvim.input(keys)
    finally:
        done.touch()


def type_in_the_prompt(editor: Editor, text: str) -> None:
    """Start insert mode in the prompt and type ``text``; return once Neovim has."""
    editor.nvim.input("i" + text)
    editor.wait(
        lambda: editor.lua("return vim.api.nvim_get_current_line()") == text,
        what=f"{text!r} in the prompt",
    )


def test_ctrl_c_in_the_prompt_in_insert_mode_interrupts(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    count_interrupts(editor)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)
    type_in_the_prompt(editor, "while I type")

    editor.nvim.input("<C-c>")
    result = editor.wait_for_turn()

    assert result["outcome"] == "interrupted"
    assert counted(editor, "interrupts") == 1
    assert editor.lua("return vim.api.nvim_get_mode().mode") == "i", "<C-c> left insert mode"
    assert editor.lua("return vim.api.nvim_get_current_line()") == "while I type"


@pytest.mark.parametrize("where", ["prompt-insert", "prompt-normal", "chat-normal"])
def test_ctrl_c_that_comes_while_neovim_is_busy_interrupts(
    editor: Editor, model: ScriptedModel, tmp_path: Path, where: str
) -> None:
    start(editor, model)
    count_interrupts(editor)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)
    if where == "prompt-insert":
        type_in_the_prompt(editor, "while I type")
    elif where == "chat-normal":
        editor.lua("vim.api.nvim_set_current_win(...)", chat_window(editor))

    input_while_busy(editor, tmp_path, "<C-c>")
    result = editor.wait_for_turn()

    assert counted(editor, "unmapped_ctrl_c") >= 1, "Neovim ran the mapping: not the case tested"
    assert result["outcome"] == "interrupted"
    assert counted(editor, "interrupts") == 1
    if where == "prompt-insert":
        # Ctrl-C left insert mode (Neovim's own handling); the plugin took the user back.
        assert editor.lua("return vim.api.nvim_get_mode().mode") == "i"
        editor.nvim.input(" on")
        editor.wait(
            lambda: editor.lua("return vim.api.nvim_get_current_line()") == "while I type on",
            what="typing to go on where it was",
        )
    else:
        assert editor.lua("return vim.api.nvim_get_mode().mode") == "n"


def test_ctrl_c_in_another_window_while_neovim_is_busy_leaves_the_turn_alone(
    editor: Editor, model: ScriptedModel, tmp_path: Path
) -> None:
    start(editor, model)
    count_interrupts(editor)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)
    editor.cmd("wincmd t")  # the window Neovim started with

    input_while_busy(editor, tmp_path, "<C-c>")
    editor.wait(lambda: counted(editor, "unmapped_ctrl_c") > 0, what="Neovim to take the Ctrl-C")
    # One more request: whatever the key scheduled has run before it.
    sent = counted(editor, "interrupts")
    model.release(RELEASE)
    result = editor.wait_for_turn()

    assert sent == 0
    assert result["outcome"] == "success"


def test_a_remapped_interrupt_key_leaves_ctrl_c_to_neovim(
    start_editor: StartEditor, model: ScriptedModel, tmp_path: Path
) -> None:
    editor = start_editor({"keymaps": {"interrupt": "<C-x>"}})
    start(editor, model)
    count_interrupts(editor)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)

    input_while_busy(editor, tmp_path, "<C-c>")
    editor.wait(lambda: counted(editor, "unmapped_ctrl_c") > 0, what="Neovim to take the Ctrl-C")
    sent_for_ctrl_c = counted(editor, "interrupts")
    editor.nvim.input("<C-x>")
    result = editor.wait_for_turn()

    assert sent_for_ctrl_c == 0
    assert result["outcome"] == "interrupted"
    assert counted(editor, "interrupts") == 1


def test_a_second_interrupt_before_the_turn_ends_is_not_sent(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    count_interrupts(editor)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)
    editor.type_prompt("and then this")
    editor.wait(lambda: editor.chat("sending") == 0, what="the daemon to queue the prompt")

    # Twice in a row, as a Ctrl-C pressed again (or handed over twice by Neovim) would: the
    # second must not stop the queued prompt's turn.
    editor.lua("""
        local chat = require("claude_sidecar.chat")
        chat.interrupt(chat.current())
        chat.interrupt(chat.current())
    """)
    editor.wait_for_turn(2)

    assert [r["outcome"] for r in editor.results()] == ["interrupted", "success"]
    assert counted(editor, "interrupts") == 1


@pytest.mark.parametrize(
    "keys",
    ["<C-o>:ClaudeInterrupt<CR>", "<F5>"],
    ids=["ctrl-o-command", "cmd-mapping"],
)
def test_claude_interrupt_typed_in_insert_mode_in_the_prompt_interrupts(
    editor: Editor, model: ScriptedModel, keys: str
) -> None:
    start(editor, model)
    editor.cmd("inoremap <F5> <Cmd>ClaudeInterrupt<CR>")
    editor.type_prompt("a long answer please")
    wait_streaming(editor)

    editor.nvim.input("iwhile I type" + keys)
    result = editor.wait_for_turn()

    assert result["outcome"] == "interrupted"
    assert editor.lua("return vim.api.nvim_get_mode().mode") == "i"
    assert editor.lua_as(list[str], "return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == [
        "while I type"
    ]


def test_retries_show_in_the_chat_and_its_title_until_the_model_answers(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    editor.type_prompt("are you busy?")

    title = editor.wait(
        lambda: "retry" in editor.winbar() and editor.winbar(), what="the retry in the title"
    )
    notice = next(line for line in editor.chat_lines() if line.startswith("⚠ "))
    editor.wait_for_turn()
    lines = editor.chat_lines()

    assert re.search(r"· running · retry \d+/10", title), title
    assert re.fullmatch(r"⚠ API overloaded \(529\), retry \d+/10 in \d+(\.\d)? s", notice), notice
    assert "⚠ API overloaded (529): retried 3 time(s)" in lines
    assert "retry" not in editor.winbar() and editor.chat("retry") is None
    assert "Answered after the retries." in lines


# ------------------------------------------------------------------ folds and tool output


def test_thinking_is_folded_while_it_streams(editor: Editor, model: ScriptedModel) -> None:
    start(editor, model)
    editor.type_prompt("ponder this")
    editor.nvim.input("i")  # typing the next prompt: Neovim does not update folds in insert mode
    editor.wait(
        lambda: "  step 5 of my reasoning" in editor.chat_lines(), what="thinking to stream"
    )

    folded = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
        for i, line in ipairs(lines) do
          if line == "  step 3 of my reasoning" then
            return vim.api.nvim_win_call(vim.fn.bufwinid(c.buf), function() return vim.fn.foldclosed(i) end)
          end
        end
    """)
    still_thinking = "Pondered." not in editor.chat_lines()

    assert still_thinking, "the thinking ended before it was looked at"
    assert folded > 0, "the thinking streaming in is not in a closed fold"


def test_tab_shows_all_of_a_tool_output_and_cuts_it_again(
    start_editor: StartEditor, model: ScriptedModel
) -> None:
    editor = start_editor({"auto_allow_tools": ["Bash"]})
    start(editor, model)
    editor.type_prompt("count to twenty")
    editor.wait_for_turn()
    cut = editor.chat_lines()

    cursor_on(editor, "● Bash(seq 1 20)")
    editor.nvim.input("<Tab>")
    full = editor.wait(
        lambda: "    20" in editor.chat_lines() and editor.chat_lines(), what="the full output"
    )
    editor.nvim.input("<Tab>")
    editor.wait(lambda: "    20" not in editor.chat_lines(), what="the output cut again")

    assert "    … +12 lines (<Tab> shows them)" in cut and "    20" not in cut
    assert [f"    {n}" for n in range(9, 21)] == full[
        full.index("    8") + 1 : full.index("    20") + 1
    ]


def cursor_on(editor: Editor, text: str) -> None:
    editor.lua(
        """
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        vim.api.nvim_set_current_win(win)
        for i, line in ipairs(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)) do
          if line == ... then vim.api.nvim_win_set_cursor(win, { i, 0 }) end
        end
    """,
        text,
    )


def wrap_indents(editor: Editor, prefix: str) -> list[int]:
    """The screen column (0 = the window's first) where each row of the chat line starting
    with ``prefix`` begins, the chat window made 40 columns wide."""
    return editor.lua_as(
        list[int],
        """
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        vim.api.nvim_win_set_width(win, 40)
        vim.cmd("redraw")
        local left = vim.fn.win_screenpos(win)[2]
        for lnum, line in ipairs(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)) do
          if vim.startswith(line, ...) then
            vim.api.nvim_win_set_cursor(win, { lnum, 0 })
            vim.cmd("redraw")
            local starts, row = {}, nil
            for col = 1, #line do
              local pos = vim.fn.screenpos(win, lnum, col)
              if pos.row ~= row and pos.row > 0 then
                row = pos.row
                table.insert(starts, pos.col - left)
              end
            end
            return starts
          end
        end
    """,
        prefix,
    )


def test_a_wrapped_tool_result_continues_under_its_text_and_prose_at_the_margin(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "hello.py").write_text("print('hello')\n")
    editor = start_editor({"permission_mode": "acceptEdits"})
    start(editor, model)
    editor.type_prompt("greet the world")
    editor.wait_for_turn()
    model.release(RELEASE)
    editor.type_prompt("a long answer")
    editor.wait_for_turn(2)

    result = wrap_indents(editor, "  ⎿ The file ")
    prose = wrap_indents(editor, "word word")

    assert len(result) >= 2 and result[0] == 0 and set(result[1:]) == {len("  ⎿ ")}, result
    assert len(prose) >= 2 and set(prose) == {0}, prose


# ------------------------------------------------------------------ order


def test_a_prompt_sent_mid_turn_waits_below_the_answer_and_follows_it(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    editor.type_prompt("a long answer please")
    wait_streaming(editor)

    editor.type_prompt("and then this")
    queued = editor.chat_lines()
    model.release(RELEASE)  # the answer streams on once the prompt waits below it
    editor.wait_for_turn(2)
    lines = editor.chat_lines()

    assert queued[-2:] == [
        "> and then this",
        "  ⧗ queued: Claude reads it when the current step is done",
    ]
    first_end = next(i for i, line in enumerate(lines) if line.startswith("─── done"))
    answer = next(i for i, line in enumerate(lines) if line.startswith("word word"))
    assert answer < first_end < lines.index("> and then this") < lines.index("Plain answer.")
    assert not any("queued" in line for line in lines)


# ------------------------------------------------------------------ fork, resume, /clear


def test_a_fork_window_follows_new_output(editor: Editor, model: ScriptedModel) -> None:
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn(1)
    editor.type_prompt("hello again")
    editor.wait_for_turn(2)
    cursor_on(editor, "> hello")

    editor.cmd("ClaudeFork")
    editor.wait(
        lambda: editor.chat("channel_id") and editor.chat("number") == 2, what="the fork's channel"
    )
    editor.type_prompt("a long answer please")
    wait_streaming(editor)
    model.release(RELEASE)
    editor.wait_for_turn(2)

    shown = editor.lua(
        """
        local win = ...
        return { vim.api.nvim_win_get_cursor(win)[1], vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win)) }
    """,
        chat_window(editor),
    )
    assert shown[0] == shown[1], "the fork's window stayed behind the output"
    assert any(line.startswith("═══ forked from Claude #1") for line in editor.chat_lines())


def test_a_resumed_chat_shows_its_edits_and_a_resumed_marker(
    start_editor: StartEditor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "hello.py").write_text("print('hello')\n")
    first = start_editor({"permission_mode": "acceptEdits"})
    start(first, model)
    first.type_prompt("greet the world")
    first.wait_for_turn()
    first.type_prompt("hello")
    first.wait_for_turn(2)
    first.quit()

    editor = start_editor()
    editor.cmd("ClaudeSessions")
    editor.wait(lambda: editor.questions(), what="the session list")
    editor.answer(editor.questions()[0]["labels"][0])
    editor.wait(lambda: editor.chat("channel_id"), what="the resumed channel")
    lines = editor.chat_lines()

    assert "  ✎ hello.py (+1 −1)" in lines
    assert (
        lines.index("> greet the world")
        < lines.index("  ✎ hello.py (+1 −1)")
        < lines.index("> hello")
    )
    assert lines[-1] == "═══ resumed: the conversation goes on from here ═══"


@pytest.mark.pinned_cli(
    "CLI 2.1.233 prints no conversation_reset line for /clear (it clears "
    "the conversation silently; the new session id comes with the next "
    "turn), so the chat has nothing to draw its marker from"
)
def test_clear_leaves_a_marker(editor: Editor, model: ScriptedModel) -> None:
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn(1)
    editor.type_prompt("/clear")
    editor.wait_for_turn(2)

    lines = editor.chat_lines()
    assert lines.index("> /clear") < lines.index(
        "═══ conversation cleared: Claude starts afresh from here ═══"
    )


# ------------------------------------------------------------------ keys and commands


def test_a_range_of_the_transcript_is_sent_as_a_quote(editor: Editor, model: ScriptedModel) -> None:
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn(1)
    cursor_on(editor, "Plain answer.")

    editor.cmd(".ClaudeSend what did you mean?")
    editor.wait_for_turn(2)

    # The prompt is the last user message (CLI 2.1.233 sends a system note after it).
    sent = repr([m for m in model.main_requests[-1]["messages"] if m["role"] == "user"][-1])
    assert (
        "About this part of our conversation:\\n> Plain answer.\\n\\nwhat did you mean?" in sent
    ), sent


def test_typing_keys_in_the_transcript_go_to_the_prompt_in_insert_mode(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    where = []
    for key in ("i", "a", "o", "<CR>"):
        cursor_on(editor, "# Claude #1 · " + editor.chat_lines()[0].split(" · ", 1)[1])
        editor.nvim.input(key)
        where.append(
            editor.lua("""
            local c = require("claude_sidecar.chat").current()
            return { vim.api.nvim_get_current_buf() == c.prompt_buf, vim.api.nvim_get_mode().mode }
        """)
        )
        editor.nvim.input("<Esc>")

    assert where == [[True, "i"]] * 4


def test_claude_close_ends_the_chat_its_cli_and_its_buffers(
    editor: Editor, model: ScriptedModel
) -> None:
    record_events(editor, "ClaudeChatOpened", "ClaudeChatClosed")
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn()
    bufs = editor.lua(
        "local c = require('claude_sidecar.chat').current() return { c.buf, c.prompt_buf }"
    )

    editor.cmd("ClaudeClose")
    editor.lua("""
        _G.listed = nil
        require("claude_sidecar.rpc").request("claude/listChannels", vim.empty_dict(), function(err, r)
          _G.listed = r or { error = err }
        end)
    """)
    listed = editor.wait(lambda: editor.lua("return _G.listed"), what="the channel list")

    assert listed["channels"] == []
    assert editor.lua("return vim.tbl_map(vim.api.nvim_buf_is_valid, ...)", bufs) == [False, False]
    assert editor.lua("return #require('claude_sidecar.chat').chats") == 0
    assert [(e["name"], e["data"]["chat"]) for e in events(editor)] == [
        ("ClaudeChatOpened", 1),
        ("ClaudeChatClosed", 1),
    ]


def test_tab_layout_q_closes_the_tab_it_opened(
    start_editor: StartEditor, model: ScriptedModel
) -> None:
    editor = start_editor({"layout": "tab"})
    start(editor, model)
    opened = editor.lua("return #vim.api.nvim_list_tabpages()")
    names = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        return { vim.fn.bufname(c.buf), vim.fn.bufname(c.prompt_buf) }
    """)

    cursor_on(editor, editor.chat_lines()[0])
    editor.nvim.input("q")

    assert opened == 2
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1
    assert names == ["[Claude #1] workspace", "[Claude #1 prompt] workspace"]


def test_chat_buffers_have_their_filetypes_and_highlight_groups(
    editor: Editor, model: ScriptedModel
) -> None:
    start(editor, model)
    editor.type_prompt("hello")
    editor.wait_for_turn()

    found = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        local ns = vim.api.nvim_get_namespaces()["claude_sidecar.chat"]
        local groups = {}
        for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(c.buf, ns, 0, -1, { details = true })) do
          local line = vim.api.nvim_buf_get_lines(c.buf, mark[2], mark[2] + 1, false)[1]
          groups[line] = mark[4].hl_group
        end
        local links = {}
        for _, g in ipairs({ "Prompt", "Tool", "ToolError", "Permission", "Notice", "TurnEnd", "Thinking", "File" }) do
          links[g] = vim.api.nvim_get_hl(0, { name = "ClaudeSidecar" .. g }).link or false
        end
        return { vim.bo[c.buf].filetype, vim.bo[c.prompt_buf].filetype, vim.b[c.buf].current_syntax, groups, links }
    """)
    filetype, prompt_filetype, syntax, groups, links = found

    assert (filetype, prompt_filetype, syntax) == (
        "claude_sidecar",
        "claude_sidecar_prompt",
        "claude_sidecar",
    )
    assert groups["> hello"] == "ClaudeSidecarPrompt"
    assert any(
        g == "ClaudeSidecarTurnEnd" for line, g in groups.items() if line.startswith("─── done")
    )
    assert all(links.values()), links


def test_claude_leaves_you_typing_in_the_prompt(
    start_editor: StartEditor, model: ScriptedModel
) -> None:
    editor = start_editor({"start_insert": True})
    model.set_scenario(load_scenario(SCENARIO))
    editor.cmd("Claude")
    editor.nvim.input("hello there")

    prompt = editor.wait(
        lambda: editor.lua("""
        local c = require("claude_sidecar.chat").current()
        return vim.api.nvim_get_current_buf() == c.prompt_buf
          and vim.api.nvim_buf_get_lines(c.prompt_buf, 0, -1, false)[1]"""),
        what="typed text",
    )

    assert prompt == "hello there"
    assert editor.lua("return vim.api.nvim_get_mode().mode") == "i"
