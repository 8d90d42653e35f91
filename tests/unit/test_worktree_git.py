"""Worktrees with real git, without a CLI: where they are made, what they changed, merging
them (merge, squash, rebase), conflicts and the user's uncommitted changes, removing."""

from __future__ import annotations

import os
import pty
import sys
from pathlib import Path

import pytest
from claude_sidecar.protocol.api import WorktreeInfo, WorktreeOptions
from claude_sidecar.protocol.errors import (
    GitIdentityMissing,
    InvalidParams,
    MergeConflict,
    UncommittedChanges,
)
from claude_sidecar.worktrees import changes, layout, merge

from tests.worktree_repo import commit_all, git, make_repo, state

pytestmark = pytest.mark.same_on_every_cli("git only: no CLI runs")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


async def made(repo: Path, name: str = "alpha", base_ref: str = "head") -> WorktreeInfo:
    info, _ = await layout.create(str(repo), WorktreeOptions(name=name, base_ref=base_ref))
    return info


async def test_a_worktree_is_made_under_claude_worktrees_on_the_branch_the_cli_names(
    repo: Path,
) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()

    info, cwd = await layout.create(str(repo), WorktreeOptions(name="feature/login"))

    assert info.path == str(repo / ".claude" / "worktrees" / "feature+login")
    assert cwd == info.path
    assert info.branch == "worktree-feature+login"
    assert (info.base_ref, info.base_commit, info.base_branch) == ("head", head, "main")
    assert git(info.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == info.branch
    assert await layout.find(info.path) == info


async def test_a_chat_in_a_subfolder_runs_in_the_same_subfolder_of_its_worktree(
    repo: Path,
) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "x.py").write_text("x = 1\n")
    commit_all(repo, "src")

    info, cwd = await layout.create(str(repo / "src"), WorktreeOptions(name="sub"))

    assert cwd == os.path.join(info.path, "src/")


async def test_a_worktree_from_a_ref_starts_at_it_and_merges_into_that_branch(
    repo: Path,
) -> None:
    first = git(repo, "rev-parse", "HEAD~1").strip()
    git(repo, "branch", "release", first)

    info = await made(repo, base_ref="release")

    assert (info.base_commit, info.base_branch) == (first, "release")


@pytest.mark.parametrize(
    ("options", "field", "said"),
    [
        (WorktreeOptions(base_ref="no-such-branch"), "worktree.baseRef", "names no commit"),
        (WorktreeOptions(base_ref="fresh"), "worktree.baseRef", "no origin/<default branch>"),
    ],
)
async def test_a_base_that_names_no_commit_is_refused_naming_the_field(
    repo: Path, options: WorktreeOptions, field: str, said: str
) -> None:
    with pytest.raises(InvalidParams) as refused:
        await layout.create(str(repo), options)

    assert refused.value.data["field"] == field
    assert said in refused.value.message
    assert git(repo, "worktree", "list").count("\n") == 1


async def test_fresh_starts_from_origins_default_branch(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "config", "user.name", "T")
    git(clone, "config", "user.email", "t@example.com")
    (clone / "local.txt").write_text("not on origin\n")
    commit_all(clone, "local only")

    info = await made(clone, base_ref="fresh")

    assert info.base_commit == git(clone, "rev-parse", "origin/main").strip()
    assert info.base_branch == "main"


def cloned_from_a_bare_origin(repo: Path, tmp_path: Path) -> tuple[Path, str]:
    """A clone of a bare repository made from ``repo``, with ``repo`` able to push to
    it; the commit of origin/main at the clone."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    git(repo, "remote", "add", "origin", str(bare))
    return clone, git(clone, "rev-parse", "origin/main").strip()


async def test_fresh_fetches_origin_first_and_starts_from_what_was_pushed_since(
    repo: Path, tmp_path: Path
) -> None:
    clone, _ = cloned_from_a_bare_origin(repo, tmp_path)
    (repo / "later.txt").write_text("pushed after the clone\n")
    pushed = commit_all(repo, "after the clone")
    git(repo, "push", "-q", "origin", "main")

    info = await made(clone, base_ref="fresh")

    assert (info.base_commit, info.base_branch) == (pushed, "main")
    assert (Path(info.path) / "later.txt").exists()


async def test_fresh_with_origin_unreachable_starts_from_the_last_fetched_refs_and_logs_why(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone, fetched = cloned_from_a_bare_origin(repo, tmp_path)
    git(clone, "remote", "set-url", "origin", str(tmp_path / "gone.git"))

    info = await made(clone, base_ref="fresh")

    assert info.base_commit == fetched
    (warning,) = [r.getMessage() for r in caplog.records if "not fetched" in r.getMessage()]
    assert "gone.git" in warning


async def test_fresh_waits_for_origin_only_so_long_then_starts_from_the_last_fetched_refs(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An origin that never answers (its upload-pack reads until git hangs up) is given
    up after FETCH_TIMEOUT: the fetch is ended and the chat starts all the same."""
    clone, fetched = cloned_from_a_bare_origin(repo, tmp_path)
    silent = tmp_path / "silent-upload-pack"
    silent.write_text("#!/bin/sh\nexec cat >/dev/null\n")
    silent.chmod(0o755)
    git(clone, "config", "remote.origin.uploadpack", str(silent))
    monkeypatch.setattr(layout, "FETCH_TIMEOUT", 0.5)

    info = await made(clone, base_ref="fresh")

    assert info.base_commit == fetched
    assert any("no answer within 0.5 s" in r.getMessage() for r in caplog.records)


_FETCH_ON_A_TERMINAL = """
import asyncio, sys
from claude_sidecar.protocol.api import WorktreeOptions
from claude_sidecar.worktrees import layout
info, _ = asyncio.run(layout.create(sys.argv[1], WorktreeOptions(name="t", base_ref="fresh")))
print("made", info.base_commit)
"""


def test_fresh_over_ssh_cannot_prompt_on_the_terminal_the_daemon_was_started_from(
    repo: Path, tmp_path: Path
) -> None:
    """A daemon started by an editor in a terminal has that terminal as its controlling
    one. ssh under ``git fetch`` (a passphrase, an unknown host key) must not reach it:
    it would write over the editor's screen and wait for an answer nobody sees."""
    clone, fetched = cloned_from_a_bare_origin(repo, tmp_path)
    seen = tmp_path / "ssh-saw"
    ssh = tmp_path / "ssh"
    ssh.write_text(
        "#!/bin/sh\n"
        f"if (exec 3</dev/tty) 2>/dev/null; then echo terminal > {seen}; "
        f"else echo none > {seen}; fi\n"
        "exit 255\n"
    )
    ssh.chmod(0o755)
    git(clone, "remote", "set-url", "origin", "ssh://git@example.invalid/repo.git")
    git(clone, "config", "core.sshCommand", str(ssh))

    pid, terminal = pty.fork()
    if pid == 0:  # the child: a session of its own with the pty as its terminal
        os.execv(sys.executable, [sys.executable, "-c", _FETCH_ON_A_TERMINAL, str(clone)])
    said = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # EIO: the child and its terminal are gone
            break
        if not chunk:
            break
        said += chunk
    os.close(terminal)
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0, said.decode(errors="replace")
    assert f"made {fetched}" in said.decode(errors="replace")
    assert seen.read_text() == "none\n", "ssh could open the daemon's terminal"


async def test_a_folder_outside_any_repository_is_refused_naming_cwd(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(InvalidParams) as refused:
        await layout.create(str(plain), WorktreeOptions(name="x"))

    assert refused.value.data["field"] == "cwd"
    assert "is not in a git repository" in refused.value.message


async def test_a_name_in_use_is_refused_naming_the_field(repo: Path) -> None:
    await made(repo, "alpha")

    with pytest.raises(InvalidParams) as refused:
        await made(repo, "alpha")

    assert refused.value.data["field"] == "worktree.name"
    assert "is in use" in refused.value.message


def test_a_name_git_cannot_take_as_a_branch_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidParams) as refused:
        WorktreeOptions(name="../escape")

    assert refused.value.data["field"] == "worktree.name"


async def test_changes_list_each_kind_of_change_committed_or_not_with_counts_and_diffs(
    repo: Path,
) -> None:
    info = await made(repo)
    wt = Path(info.path)
    (wt / "app.py").write_text(
        "".join(f"line {i}\n" for i in range(1, 21)).replace("line 5", "five")
    )
    (wt / "new.py").write_text("print('new')\n")
    commit_all(wt, "agent commit")
    (wt / "gone.txt").unlink()
    os.rename(wt / "old_name.txt", wt / "new_name.txt")
    (wt / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (wt / "big.txt").write_bytes(b"0123456789abcdef\n" * (5 * 1024 * 1024 // 17))

    result = await changes.changes(info)

    by_path = {f.path: f for f in result.files}
    assert {p: f.status for p, f in by_path.items()} == {
        "app.py": "modified",
        "new.py": "added",
        "gone.txt": "deleted",
        "new_name.txt": "renamed",
        "image.png": "added",
        "big.txt": "added",
    }
    app = by_path["app.py"]
    assert (app.added, app.deleted, app.uncommitted, app.omitted) == (1, 1, False, None)
    assert app.diff is not None and "-line 5\n+five\n" in app.diff
    assert by_path["new_name.txt"].old_path == "old_name.txt"
    assert by_path["gone.txt"].uncommitted and by_path["gone.txt"].deleted == 1
    image = by_path["image.png"]
    assert (image.binary, image.added, image.diff, image.omitted) == (True, None, None, "binary")
    big = by_path["big.txt"]
    assert (big.omitted, big.diff, big.binary) == ("tooLarge", None, False)
    assert big.size > 5_000_000
    assert [c.subject for c in result.commits] == ["agent commit"]
    assert result.added == sum(f.added or 0 for f in result.files)


async def test_counting_changes_leaves_the_worktree_index_and_branch_as_they_were(
    repo: Path,
) -> None:
    info = await made(repo)
    (Path(info.path) / "new.py").write_text("x\n")
    before = state(info.path)

    files, added, _ = await changes.counted(info)

    assert [(f.path, f.status) for f in files] == [("new.py", "added")]
    assert added == 1
    assert state(info.path) == before


async def test_a_file_the_cli_is_writing_atomically_is_not_counted_as_a_file_of_its_own(
    repo: Path,
) -> None:
    info = await made(repo)
    (Path(info.path) / "src").mkdir()
    (Path(info.path) / "src" / "new.py").write_text("x\n")
    # Where the CLI's Write and Edit tools put the content before renaming it over the file:
    # "<file>.tmp.<8 hex>" (its asynchronous write), "<file>.tmp.<pid>.<12 hex>" (its
    # synchronous one).
    (Path(info.path) / "src" / "new.py.tmp.0a1b2c3d").write_text("x\ny\n")
    (Path(info.path) / "README.md.tmp.9f8e7d6c").write_text("draft\n")
    (Path(info.path) / "src" / "new.py.tmp.48213.0a1b2c3d4e5f").write_text("x\nz\n")
    (Path(info.path) / "notes.txt.tmp.7.ffffffffffff").write_text("new\n")

    files, _, _ = await changes.counted(info)

    assert [f.path for f in files] == ["src/new.py"]


async def test_merge_commits_the_agents_work_and_updates_the_users_checkout(repo: Path) -> None:
    info = await made(repo)
    (Path(info.path) / "feature.py").write_text("feature = True\n")
    (repo / "user.txt").write_text("the user's own, uncommitted\n")

    answer, moved = await merge.merge(info, "merge", "Add the feature")

    assert (repo / "feature.py").read_text() == "feature = True\n"
    assert git(repo, "log", "-1", "--format=%s").strip() == "Add the feature"
    assert answer.committed == answer.commit == git(repo, "rev-parse", "main").strip()
    assert (answer.target, answer.files, answer.checkout) == ("main", ["feature.py"], str(repo))
    assert git(repo, "status", "--porcelain").splitlines() == ["?? user.txt"]
    assert moved.base_commit == answer.commit
    assert (await changes.changes(moved)).files == []


async def test_merge_of_diverged_branches_makes_a_merge_commit(repo: Path) -> None:
    info = await made(repo)
    (Path(info.path) / "feature.py").write_text("feature = True\n")
    (repo / "other.py").write_text("user's work\n")
    user_commit = commit_all(repo, "user's commit")

    answer, _ = await merge.merge(info, "merge", "Add the feature")

    parents = git(repo, "rev-list", "--parents", "-n", "1", "main").split()[1:]
    assert parents[0] == user_commit and len(parents) == 2
    assert (repo / "feature.py").exists() and (repo / "other.py").exists()
    assert answer.files == ["feature.py"]


async def test_squash_makes_one_commit_on_the_target_with_the_message(repo: Path) -> None:
    info = await made(repo)
    wt = Path(info.path)
    for i in range(3):
        (wt / f"step{i}.py").write_text(f"step = {i}\n")
        commit_all(wt, f"step {i}")
    before = git(repo, "rev-parse", "main").strip()

    answer, _ = await merge.merge(info, "squash", "All the steps")

    assert git(repo, "rev-list", "--parents", "-n", "1", "main").split()[1:] == [before]
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "All the steps"
    assert sorted(answer.files) == ["step0.py", "step1.py", "step2.py"]
    assert (await merge.unmerged(await layout.find(info.path) or info)) == ([], [])


async def test_rebase_replays_each_commit_on_the_target_in_order(repo: Path) -> None:
    info = await made(repo)
    wt = Path(info.path)
    for i in range(2):
        (wt / f"step{i}.py").write_text(f"step = {i}\n")
        commit_all(wt, f"step {i}")
    (repo / "user.py").write_text("u\n")
    user_commit = commit_all(repo, "user's commit")

    answer, _ = await merge.merge(info, "rebase", "unused: nothing uncommitted")

    subjects = git(repo, "log", "--format=%s", f"{user_commit}..main").split("\n")[:-1]
    assert subjects == ["step 1", "step 0"]
    assert git(repo, "rev-list", "--merges", "main").strip() == ""
    assert answer.committed is None
    assert git(repo, "worktree", "list").count("\n") == 2  # the temporary one is gone


@pytest.mark.parametrize("strategy", ["merge", "squash", "rebase"])
async def test_a_conflict_leaves_the_checkout_and_the_worktree_exactly_as_they_were(
    repo: Path, strategy: str
) -> None:
    info = await made(repo)
    wt = Path(info.path)
    (wt / "app.py").write_text("agent's version\n")
    commit_all(wt, "agent rewrites app.py")
    (wt / "README.md").write_text("agent's uncommitted readme\n")
    (repo / "app.py").write_text("user's version\n")
    commit_all(repo, "user rewrites app.py")
    (repo / "notes.txt").write_text("user's uncommitted notes\n")
    checkout_before, worktree_before = state(repo), state(wt)
    branches_before = git(repo, "for-each-ref", "refs/heads")

    with pytest.raises(MergeConflict) as refused:
        await merge.merge(info, strategy, "message")  # type: ignore[arg-type]

    assert refused.value.data["files"] == ["app.py"]
    assert (state(repo), state(wt)) == (checkout_before, worktree_before)
    assert git(repo, "for-each-ref", "refs/heads") == branches_before
    assert git(repo, "worktree", "list").count("\n") == 2


async def test_the_users_uncommitted_change_to_a_file_the_merge_touches_blocks_it(
    repo: Path,
) -> None:
    info = await made(repo)
    (Path(info.path) / "app.py").write_text("agent's version\n")
    (repo / "app.py").write_text("user's uncommitted version\n")
    checkout_before, worktree_before = state(repo), state(info.path)

    with pytest.raises(UncommittedChanges) as refused:
        await merge.merge(info, "merge", "message")

    assert refused.value.data["files"] == ["app.py"]
    assert "app.py" in refused.value.message
    assert (state(repo), state(info.path)) == (checkout_before, worktree_before)


async def test_a_merge_without_a_git_identity_says_how_to_set_one_and_changes_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = await made(repo)
    (Path(info.path) / "feature.py").write_text("feature = True\n")
    # A user who never told git who they are: no global or system config, and git told not
    # to guess a name from the machine's (as on a host whose name has no domain).
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for variable in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "EMAIL"):
        monkeypatch.delenv(variable, raising=False)
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    checkout_before, worktree_before = state(repo), state(info.path)

    with pytest.raises(GitIdentityMissing) as refused:
        await merge.merge(info, "squash", "message")

    assert refused.value.data["cwd"] == info.path
    assert "git config --global user.email" in refused.value.data["fix"]
    assert refused.value.data["fix"] in refused.value.message
    assert (state(repo), state(info.path)) == (checkout_before, worktree_before)


async def test_unmerged_work_names_the_commits_and_uncommitted_files(repo: Path) -> None:
    info = await made(repo)
    wt = Path(info.path)
    (wt / "a.py").write_text("a\n")
    commit_all(wt, "add a")
    (wt / "b.py").write_text("b\n")

    commits, files = await merge.unmerged(info)

    assert [c.split(" ", 1)[1] for c in commits] == ["add a"]
    assert files == ["b.py"]


async def test_remove_deletes_the_worktree_and_its_branch(repo: Path) -> None:
    info = await made(repo)
    (Path(info.path) / "scratch.py").write_text("x\n")

    await merge.remove(info)

    assert not Path(info.path).exists()
    assert git(repo, "branch", "--list", info.branch) == ""
    assert f"branch.{info.branch}." not in git(repo, "config", "--list", "--local")


async def test_the_users_checkout_does_not_show_the_worktrees_as_untracked(repo: Path) -> None:
    await made(repo, "alpha")
    await made(repo, "beta")

    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    excluded = (repo / ".git" / "info" / "exclude").read_text()
    assert excluded.count("/.claude/worktrees/") == 1, "said once, however many worktrees"
    assert git(repo / ".claude" / "worktrees" / "alpha", "status", "--porcelain") == ""
