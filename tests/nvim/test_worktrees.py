"""Chats in git worktrees from Neovim: :ClaudeWorktree starts one (without a name it asks the
chat's task, then a name made from it), and in :ClaudeAgents `d`
reviews what its agent changed, `m` merges its branch, `x` discards it (real git, daemon and
CLI; the stand-in model writes a file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario
from claude_sidecar.scripted.matching import prompt_text

from tests.nvim.editor import Editor, StartEditor
from tests.nvim.test_agents import agents_lines, open_list
from tests.worktree_repo import git, make_repo

WRITE_FEATURE = {
    "rules": [
        {
            "match": "(?i)add the feature",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {
                                "file_path": "{cwd}/feature.py",
                                "content": "feature = True\n",
                            },
                        }
                    }
                ],
                [{"text": "Added."}],
            ],
        }
    ],
    "default": [[{"text": "A scripted answer."}]],
}


@pytest.fixture
def repo_editor(start_editor: StartEditor, model: ScriptedModel, workspace: Path) -> Editor:
    """Neovim in a git repository (the workspace), its chats accepting edits."""
    make_repo(workspace)
    model.set_scenario(load_scenario(WRITE_FEATURE))
    return start_editor({"permission_mode": "acceptEdits"})


def worktree_chat(editor: Editor, name: str) -> Path:
    """:ClaudeWorktree NAME, one turn that writes feature.py there; the worktree's folder."""
    editor.cmd(f"ClaudeWorktree {name}")
    editor.type_prompt("add the feature")
    editor.wait_for_turn()
    return Path(editor.lua("return require('claude_sidecar.chat').current().info.worktree.path"))


def list_line_with(editor: Editor, text: str) -> int:
    """Put the list's cursor on the line of the chat that says ``text``; its line number."""
    lines = editor.wait(
        lambda: (found := agents_lines(editor)) and any(text in line for line in found) and found,
        what=f"a chat line with {text!r}",
    )
    row = next(i for i, line in enumerate(lines, 1) if text in line)
    editor.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    return row


def test_claude_worktree_starts_a_chat_whose_edits_stay_in_its_worktree(
    repo_editor: Editor, workspace: Path
) -> None:
    worktree = worktree_chat(repo_editor, "alpha")

    assert worktree == workspace / ".claude" / "worktrees" / "alpha"
    assert (worktree / "feature.py").read_text() == "feature = True\n"
    assert not (workspace / "feature.py").exists(), "the user's checkout is untouched"
    assert git(workspace, "status", "--porcelain") == ""
    title = repo_editor.lua("""
        local chat = require("claude_sidecar.chat")
        return vim.api.nvim_win_call(vim.fn.bufwinid(chat.current().buf), chat.winbar)
    """)
    assert title.startswith("Claude #1 · workspace on worktree-alpha · idle"), title


def test_claude_worktree_without_a_name_asks_the_task_then_names_the_worktree_after_it(
    repo_editor: Editor, workspace: Path, model: ScriptedModel
) -> None:
    repo_editor.cmd("ClaudeWorktree")
    (task,) = repo_editor.questions()
    repo_editor.answer("Add the feature, please: tests too")
    (name,) = repo_editor.questions()
    repo_editor.answer(name["default"])
    repo_editor.wait_for_turn()
    info = repo_editor.lua("return require('claude_sidecar.chat').current().info.worktree")

    assert task["input"] and "what should Claude do" in task["prompt"]
    assert name["input"] and name["default"] == "add-the-feature-please"
    assert info["branch"] == "worktree-add-the-feature-please"
    assert Path(info["path"]) == workspace / ".claude" / "worktrees" / "add-the-feature-please"
    first = model.main_requests[0]  # the turn's first request (its tool's result follows)
    assert prompt_text(first["messages"]) == "Add the feature, please: tests too"
    assert (Path(info["path"]) / "feature.py").read_text() == "feature = True\n"
    assert not (workspace / "feature.py").exists()


def test_claude_worktree_names_the_worktree_as_the_user_typed_over_the_default(
    repo_editor: Editor, workspace: Path
) -> None:
    repo_editor.cmd("ClaudeWorktree")
    repo_editor.answer("add the feature")
    repo_editor.answer("login-fix")
    repo_editor.wait_for_turn()

    assert repo_editor.lua(
        "return require('claude_sidecar.chat').current().info.worktree.branch"
    ) == ("worktree-login-fix")
    assert (workspace / ".claude" / "worktrees" / "login-fix" / "feature.py").exists()


@pytest.mark.parametrize("cancelled", ["task", "name"])
def test_cancelling_either_question_of_claude_worktree_starts_no_chat(
    repo_editor: Editor, workspace: Path, cancelled: str
) -> None:
    repo_editor.cmd("ClaudeWorktree")
    if cancelled == "name":
        repo_editor.answer("add the feature")
    repo_editor.cancel()

    assert repo_editor.questions() == []
    assert repo_editor.lua("return #require('claude_sidecar.chat').chats") == 0
    assert not (workspace / ".claude" / "worktrees").exists()


def test_d_in_the_list_reviews_the_worktree_as_one_diff(
    repo_editor: Editor, workspace: Path
) -> None:
    worktree_chat(repo_editor, "beta")
    open_list(repo_editor)
    list_line_with(repo_editor, "on worktree-beta +1 -0 in 1 file")

    repo_editor.nvim.input("d")
    review = repo_editor.wait(
        lambda: repo_editor.lua("return vim.bo.filetype") == "diff"
        and repo_editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"),
        what="the review",
    )

    assert review[0].startswith("# worktree-beta: 1 file, +1 -0 against main")
    assert "+feature = True" in review
    assert any(line.startswith("diff --git a/feature.py b/feature.py") for line in review)


def test_m_in_the_list_merges_the_branch_into_the_users_checkout(
    repo_editor: Editor, workspace: Path
) -> None:
    worktree_chat(repo_editor, "gamma")
    open_list(repo_editor)
    list_line_with(repo_editor, "on worktree-gamma")

    repo_editor.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
    repo_editor.nvim.input("m")
    repo_editor.wait(lambda: repo_editor.questions(), what="the strategy question")
    repo_editor.answer("squash")
    # The notice comes with the daemon's answer; the file alone appears before the squash commits.
    said = repo_editor.wait(
        lambda: next(
            (m for m in repo_editor.lua_as(list[str], "return _G.notes") if "squash of" in m),
            None,
        ),
        what="the notice of the merge",
    )

    assert "squash of worktree-gamma into main: 1 file, now " in said
    assert (workspace / "feature.py").read_text() == "feature = True\n"
    assert git(workspace, "log", "-1", "--format=%s").strip() == "add the feature"
    assert git(workspace, "status", "--porcelain") == ""


def test_x_in_the_list_discards_the_worktree_after_saying_what_would_be_lost(
    repo_editor: Editor, workspace: Path
) -> None:
    worktree = worktree_chat(repo_editor, "delta")
    open_list(repo_editor)
    list_line_with(repo_editor, "on worktree-delta")

    repo_editor.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
    repo_editor.nvim.input("x")
    repo_editor.wait(lambda: repo_editor.questions(), what="are you sure")
    repo_editor.answer("Discard it")
    lost = repo_editor.wait(
        lambda: (q := repo_editor.questions()) and q[0]["prompt"], what="what would be lost"
    )
    repo_editor.answer("Discard it anyway")
    # The daemon says so once the worktree and then its branch are gone.
    said = repo_editor.wait(
        lambda: next(
            (m for m in repo_editor.lua_as(list[str], "return _G.notes") if "removed" in m), None
        ),
        what="the notice that it was removed",
    )

    assert "1 uncommitted file(s) (feature.py)" in lost
    assert "removed worktree-delta and its worktree" in said and "stays resumable" in said
    assert not worktree.exists()
    assert "worktree-delta" not in git(workspace, "branch", "--list")
    assert not (workspace / "feature.py").exists()
