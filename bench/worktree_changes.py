"""What a worktree chat changed, on a big repository (issue 44's figure).

Run: ``uv run python bench/worktree_changes.py [--files 10000] [--changed 200] [--repeat 5]``

Builds, in a temporary folder, a git repository of ``--files`` text files (40 lines each,
100 to a folder) in one commit, makes a chat's worktree of it as ``claude/newChannel``'s
``worktree`` does (``worktrees.layout.create``), then changes ``--changed`` files in the
worktree: half committed on its branch, half left uncommitted, plus as many untracked
new files. Then the wall time, median and range of ``--repeat`` runs, of:

- ``changes``: what ``claude/worktreeChanges`` computes (files, counts and every diff);
- ``counted``: what each ``claude/worktreeChanged`` check computes (files and counts).

Both run git the way the daemon does (``worktrees.git``), in this process's event loop;
the JSON-RPC round trip around them adds well under a millisecond. The folder is deleted
afterwards. The figures depend on the machine and its disk cache: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from claude_sidecar.protocol.api import WorktreeInfo, WorktreeOptions
from claude_sidecar.worktrees import changes, layout


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build(root: Path, files: int) -> Path:
    """A repository of ``files`` files of 40 lines, committed."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Bench")
    git(repo, "config", "user.email", "bench@example.com")
    for n in range(files):
        folder = repo / f"pkg{n // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n % 100:02d}.py").write_text(
            "".join(f"value_{i} = {n} * {i}\n" for i in range(40))
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def change(worktree: Path, files: int, changed: int) -> None:
    """Edit ``changed`` files (the first half committed), add as many untracked ones."""
    step = max(files // changed, 1)
    for k in range(changed):
        n = k * step
        path = worktree / f"pkg{n // 100:03d}" / f"mod{n % 100:02d}.py"
        path.write_text(path.read_text().replace("value_3 ", "renamed_3 "))
        (worktree / f"pkg{n // 100:03d}" / f"new{k}.py").write_text(f"added = {k}\n")
        if k == changed // 2 - 1:
            git(worktree, "add", "-A")
            git(worktree, "commit", "-q", "-m", "half of the work")


async def timed(call: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return times


async def measure(info: WorktreeInfo, repeat: int) -> None:
    listed = await changes.changes(info)
    print(f"{len(listed.files)} changed files, +{listed.added} -{listed.deleted}")
    for name, call in (
        ("changes", lambda: changes.changes(info)),
        ("counted", lambda: changes.counted(info)),
    ):
        times = await timed(call, repeat)
        print(
            f"{name}: median {statistics.median(times):.0f} ms "
            f"(range {min(times):.0f}-{max(times):.0f} ms, {repeat} runs)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-worktree-") as scratch:
        repo = build(Path(scratch), args.files)
        info, _ = asyncio.run(layout.create(str(repo), WorktreeOptions(name="bench")))
        change(Path(info.path), args.files, args.changed)
        print(f"repository: {args.files} files; worktree {info.path}")
        asyncio.run(measure(info, args.repeat))


if __name__ == "__main__":
    main()
