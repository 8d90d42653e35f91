"""A git repository for the worktree tests: made with the git command line, read back by
it (the trees, the status), independently of the daemon's own git calls."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


def git(cwd: Path | str, *args: str) -> str:
    """Run git in ``cwd``; its stdout (the run must succeed)."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repo(path: Path) -> Path:
    """A repository on branch main with two commits and an identity of its own."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    (path / "README.md").write_text("# Project\n")
    (path / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    (path / "old_name.txt").write_text("".join(f"stays {i}\n" for i in range(30)))
    (path / "gone.txt").write_text("to be deleted\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    (path / "README.md").write_text("# Project\n\nSecond commit.\n")
    git(path, "commit", "-q", "-am", "second")
    return path


def commit_all(path: Path | str, message: str) -> str:
    """Commit everything in ``path``; the new commit."""
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


def state(path: Path | str) -> tuple[str, str, str, str]:
    """Everything a merge could change in a checkout: its HEAD, the tree of its index, its
    status and the tree of the files on disk, untracked ones too (written through a
    temporary index, so nothing of the checkout is changed)."""
    head = git(path, "rev-parse", "HEAD").strip()
    index_tree = git(path, "write-tree").strip()
    status = git(path, "status", "--porcelain=v1", "--untracked-files=all")
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
        for args in (["add", "--all", "--", "."], ["write-tree"]):
            done = subprocess.run(
                ["git", *args], cwd=path, env=env, capture_output=True, text=True, check=True
            )
    return head, index_tree, status, done.stdout.strip()
