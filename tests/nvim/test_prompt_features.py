"""What the prompt offers: the model picker, the context meter, completion, images."""

from __future__ import annotations

import base64
import re
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel

from tests.nvim.editor import Editor, StartEditor


def open_chat(editor: Editor) -> None:
    """:Claude, then wait for its channel (and what its CLI offers)."""
    editor.cmd("Claude")
    editor.wait(lambda: editor.chat("channel_id"), what="the channel")


def test_model_picker_lists_the_clis_models_then_their_effort_levels(
    editor: Editor, model: ScriptedModel
) -> None:
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

    assert 'unknown model "gpt-9"' in note and "sonnet" in note and "haiku" in note
    assert editor.chat("model") != "gpt-9"


def daemon_info(editor: Editor) -> dict[str, Any]:
    """The current chat's claude/channelInfo, asked of the daemon directly."""
    info = editor.lua(
        """
        local c = require("claude_sidecar.chat").current()
        local answer
        require("claude_sidecar.rpc").request("claude/channelInfo", { channelId = c.channel_id },
          function(err, info) answer = info or err end)
        vim.wait(30000, function() return answer ~= nil end)
        return answer
    """
    )
    assert isinstance(info, dict), info
    return info


def statusline(editor: Editor) -> str:
    return editor.lua_as(str, "return require('claude_sidecar').statusline()")


def chat_winbar(editor: Editor) -> str:
    return editor.lua_as(
        str,
        """
        local c = require("claude_sidecar.chat").current()
        local win = vim.fn.bufwinid(c.buf)
        return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true }).str
    """,
    )


def test_after_a_turn_the_statusline_and_winbar_show_context_use_and_cost(editor: Editor) -> None:
    open_chat(editor)
    editor.type_prompt("hello")
    editor.wait_for_turn()

    line = editor.wait(
        lambda: "ctx" in (s := statusline(editor)) and s,
        what="the meter in the statusline",
    )
    meter = re.search(r"ctx (\d+)% · \$(\d+\.\d{4})$", line)
    cost = editor.lua("return require('claude_sidecar.chat').current().t.cost_usd")

    assert meter, line
    assert int(meter[1]) == round(daemon_info(editor)["context"]["percentage"])
    assert float(meter[2]) == round(cost, 4) and cost > 0
    assert chat_winbar(editor).endswith(meter[0])


def test_a_resumed_chat_shows_the_context_use_and_cost_it_had_and_goes_on_counting(
    start_editor: StartEditor,
) -> None:
    first = start_editor()
    open_chat(first)
    first.type_prompt("hello")
    first.wait_for_turn()
    first.type_prompt("hello again")
    first.wait_for_turn(2)
    before = first.wait(lambda: "ctx" in (s := statusline(first)) and s, what="the meter")
    cost = first.lua_as(float, "return require('claude_sidecar.chat').current().t.cost_usd")
    first.quit()

    editor = start_editor()
    editor.cmd("ClaudeSessions")
    question = editor.wait(lambda: editor.questions(), what="the session list")[0]
    editor.answer(question["labels"][0])
    editor.wait(lambda: editor.chat("channel_id"), what="the resumed channel")
    resumed, winbar = statusline(editor), chat_winbar(editor)
    editor.type_prompt("hello once more")
    editor.wait_for_turn(3)
    after = editor.lua_as(float, "return require('claude_sidecar.chat').current().t.cost_usd")

    # Before any turn of its own: the meter and cost of the chat that was closed.
    assert resumed.endswith(before[before.index("ctx") :]), (resumed, before)
    assert winbar.endswith(before[before.index("ctx") :])
    assert after > cost > 0
    assert after == pytest.approx(daemon_info(editor)["totalCostUsd"])


def complete_in_prompt(editor: Editor, text: str) -> str:
    """Write ``text`` in the prompt, press <C-x><C-u> at its end; the prompt's line after."""
    editor.lua(
        """
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
        vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { ... })
    """,
        text,
    )
    editor.nvim.input("A<C-x><C-u>")
    line = editor.lua_as(str, "return vim.api.nvim_get_current_line()")
    editor.nvim.input("<C-e><Esc>")
    return line


@pytest.mark.same_on_every_cli("the plugin's own completion and checks")
def test_at_completes_files_of_the_chats_directory_in_the_prompt(
    editor: Editor, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "calculator.py").write_text("")
    open_chat(editor)

    assert complete_in_prompt(editor, "explain @calcu") == "explain @src/calculator.py"


def test_a_completed_mention_brings_the_files_content_to_the_model(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "calculator.py").write_text("def add(a, b): return a - b  # BUG_7\n")
    open_chat(editor)
    completed = complete_in_prompt(editor, "why is add wrong in @calcu")

    editor.type_prompt(completed)
    editor.wait_for_turn()

    assert "BUG_7" in repr(model.main_requests[-1]["messages"]), "the CLI expands @path mentions"


@pytest.mark.same_on_every_cli("the plugin's own completion and checks")
def test_at_offers_git_files_and_open_buffers_first(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "tracked.py").write_text("")
    (workspace / ".gitignore").write_text("ignored.py\n")
    (workspace / "ignored.py").write_text("")
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("notes\n")
    editor.cmd(f"edit {elsewhere}")
    open_chat(editor)

    words = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { "@" })
        local _, found = require("claude_sidecar.completion").complete_at(c.prompt_buf, 1, 1)
        return vim.tbl_map(function(x) return x.word end, found)
    """)

    assert words[0] == "@" + str(elsewhere).replace(str(Path.home()), "~", 1)
    assert "@tracked.py" in words and "@.gitignore" in words
    assert "@ignored.py" not in words


def test_slash_completes_the_clis_commands_at_the_start_of_a_prompt(editor: Editor) -> None:
    open_chat(editor)

    assert complete_in_prompt(editor, "/compa") == "/compact"
    assert complete_in_prompt(editor, "then /compa") == "then /compa"


@pytest.mark.same_on_every_cli("the plugin's own completion and checks")
def test_the_nvim_cmp_and_blink_sources_give_the_same_items(
    editor: Editor, workspace: Path
) -> None:
    (workspace / "calc.py").write_text("")
    open_chat(editor)

    got = editor.lua("""
        local c = require("claude_sidecar.chat").current()
        vim.api.nvim_set_current_win(vim.fn.bufwinid(c.prompt_buf))
        vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, { "see @cal" })
        local out = {}
        local cmp = require("claude_sidecar.completion.cmp").new()
        out.cmp_available = cmp:is_available()
        cmp:complete({ context = { bufnr = c.prompt_buf, cursor = { row = 1, col = 9 } } },
          function(r) out.cmp = r.items end)
        local blink = require("claude_sidecar.completion.blink").new({})
        out.blink_enabled = blink:enabled()
        blink:get_completions({ bufnr = c.prompt_buf, cursor = { 1, 8 } }, function(r) out.blink = r.items end)
        vim.cmd("wincmd p")
        out.cmp_elsewhere = cmp:is_available()
        return out
    """)

    assert got["cmp_available"] and got["blink_enabled"] and not got["cmp_elsewhere"]
    assert got["cmp"] == got["blink"]
    item = got["cmp"][0]
    assert item["label"] == "@calc.py" and item["textEdit"]["newText"] == "@calc.py"
    assert item["textEdit"]["range"] == {
        "start": {"line": 0, "character": 4},
        "end": {"line": 0, "character": 8},
    }


def png(path: Path) -> bytes:
    """Write a 1×1 PNG at ``path``; its bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )
    path.write_bytes(data)
    return data


def images_sent(model: ScriptedModel) -> list[dict[str, Any]]:
    """The image blocks of the last user message the stand-in model received."""
    last_user = [m for m in model.main_requests[-1]["messages"] if m["role"] == "user"][-1]
    content = last_user["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "image"]


def test_claude_image_goes_with_the_next_prompt(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    data = png(workspace / "shot.png")
    open_chat(editor)

    editor.cmd("ClaudeImage shot.png")
    editor.wait(
        lambda: any("shot.png" in line for line in editor.chat_lines()), what="the image line"
    )
    editor.type_prompt("what is in this picture?")
    editor.wait_for_turn()

    assert images_sent(model) == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(data).decode(),
            },
        }
    ]
    assert any(
        "🖼 shot.png (1 KB) goes with your next message" in line for line in editor.chat_lines()
    )


def test_a_prompt_that_is_only_an_image_path_attaches_the_image(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    png(workspace / "drop me.png")
    open_chat(editor)

    editor.type_prompt(f"'{workspace / 'drop me.png'}'")
    editor.wait(
        lambda: any("drop me.png" in line for line in editor.chat_lines()), what="the image line"
    )
    assert model.main_requests == [], "the path itself was sent"
    editor.type_prompt("describe it")
    editor.wait_for_turn()

    assert [b["source"]["media_type"] for b in images_sent(model)] == ["image/png"]


@pytest.mark.same_on_every_cli("the plugin's own completion and checks")
def test_a_file_that_is_not_an_image_is_refused(
    editor: Editor, model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "notes.png").write_text("not really a picture\n")
    open_chat(editor)
    editor.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")

    editor.cmd("ClaudeImage notes.png")
    note = editor.wait(lambda: editor.lua("return _G.notes[1]"), what="a refusal")
    editor.type_prompt("hello")
    editor.wait_for_turn()

    assert note.endswith(": notes.png is not an image Claude can read (PNG, JPEG, GIF or WebP)")
    assert images_sent(model) == []
