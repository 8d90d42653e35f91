"""What a worktree's agent changed: its branch against the base commit, plus what it has
not committed yet (untracked files too), as one diff.

The files on disk are snapshotted as a tree without touching the worktree's index or
branch: ``git add -A`` into a copy of its index (the copy keeps the stat cache, so only
changed files are hashed), then ``write-tree``. Base commit -> that tree is then one
ordinary ``git diff``, with renames found and binary files known to git.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Literal

import anyio

from claude_sidecar.protocol.api import (
    FileStatus,
    WorktreeChangesResult,
    WorktreeCommit,
    WorktreeFile,
    WorktreeFileCount,
    WorktreeInfo,
)
from claude_sidecar.worktrees import git

LARGE = 256 * 1024
"""A file bigger than this (bytes, either side) is summarised: its diff is not sent."""

_STATUS: dict[str, FileStatus] = {
    "A": "added",
    "C": "added",
    "M": "modified",
    "T": "modified",
    "D": "deleted",
    "R": "renamed",
}
_NO_BLOB = "0" * 40
# The CLI writes a file atomically: into "<file>.tmp.<8 hex digits>" (its asynchronous write)
# or "<file>.tmp.<pid>.<12 hex digits>" (its synchronous one) beside it, then renamed over the
# file (both names are in its own check for leftovers, CLI 2.1.330). A count made in between
# would announce that name as a file of its own, then take it back.
_IN_FLIGHT = (
    ":(exclude,glob)**/*.tmp." + "[0-9a-f]" * 8,
    ":(exclude,glob)**/*.tmp.[0-9]*." + "[0-9a-f]" * 12,
)


async def snapshot(path: str) -> str:
    """The tree of the files in worktree ``path`` as they are on disk (ignored files and
    the CLI's half-written ones left out), written without changing its index."""
    index = (await git.run(path, "rev-parse", "--path-format=absolute", "--git-path", "index")).text
    with tempfile.TemporaryDirectory(prefix="claude-sidecar-index-") as scratch:
        copy = os.path.join(scratch, "index")
        if os.path.exists(index):
            await anyio.to_thread.run_sync(shutil.copyfile, index, copy)
        env = {"GIT_INDEX_FILE": copy}
        await git.run(path, "add", "--all", "--", ".", *_IN_FLIGHT, env=env)
        return (await git.run(path, "write-tree", env=env)).text


@dataclass
class _Entry:
    path: str
    status: FileStatus
    old_path: str | None
    old_blob: str
    new_blob: str
    added: int | None = None
    deleted: int | None = None


async def _entries(path: str, base: str, tree: str) -> list[_Entry]:
    """Every file that differs between ``base`` and ``tree``, with its +/- counts."""
    # Both at once; a failure of either is raised as it is (gather, not a task group's
    # ExceptionGroup, which callers would not catch as the git error it holds).
    raw, numstat = await asyncio.gather(
        git.run(path, "diff", "--raw", "-z", "-M", "--no-abbrev", base, tree),
        git.run(path, "diff", "--numstat", "-z", "-M", base, tree),
    )
    entries: list[_Entry] = []
    fields = raw.fields()
    i = 0
    while i < len(fields):
        _, _, old_blob, new_blob, letters = fields[i].lstrip(":").split(" ")
        letter = letters[0]
        if letter in "RC":
            old_path, new_path, i = fields[i + 1], fields[i + 2], i + 3
        else:
            old_path, new_path, i = None, fields[i + 1], i + 2
        status = _STATUS.get(letter, "modified")
        entries.append(
            _Entry(new_path, status, old_path if letter == "R" else None, old_blob, new_blob)
        )
    counts = numstat.fields()
    i, n = 0, 0
    while i < len(counts) and n < len(entries):
        added, deleted, rest = counts[i].split("\t", 2)
        # A rename's paths follow as two fields of their own (the third part is empty).
        i += 3 if rest == "" else 1
        if added != "-":
            entries[n].added, entries[n].deleted = int(added), int(deleted)
        n += 1
    return entries


async def counted(info: WorktreeInfo) -> tuple[list[WorktreeFileCount], int, int]:
    """The files the worktree changed and their +/- counts, and the totals: what
    ``claude/worktreeChanged`` sends."""
    tree = await snapshot(info.path)
    entries = await _entries(info.path, info.base_commit, tree)
    files = [WorktreeFileCount(e.path, e.status, e.added, e.deleted) for e in entries]
    return files, sum(e.added or 0 for e in entries), sum(e.deleted or 0 for e in entries)


async def changes(info: WorktreeInfo) -> WorktreeChangesResult:
    """``claude/worktreeChanges``: every changed file with its diff (a binary or large one
    summarised), the branch's commits since the base, and whether each file's change is
    committed yet."""
    head = await git.rev(info.path, "HEAD") or info.base_commit
    tree = await snapshot(info.path)
    entries = await _entries(info.path, info.base_commit, tree)
    sizes = await _sizes(info.path, [b for e in entries for b in (e.old_blob, e.new_blob)])
    uncommitted = set(
        (await git.run(info.path, "diff", "--name-only", "-z", "-M", head, tree)).fields()
    )
    shown = [
        e
        for e in entries
        if e.added is not None and max(sizes.get(e.old_blob, 0), sizes.get(e.new_blob, 0)) <= LARGE
    ]
    patches = await _patches(info.path, info.base_commit, tree, entries, shown)
    files = []
    for e in entries:
        size = sizes.get(e.new_blob if e.status != "deleted" else e.old_blob, 0)
        omitted: Literal["binary", "tooLarge"] | None = None
        if e not in shown:
            omitted = "binary" if e.added is None else "tooLarge"
        files.append(
            WorktreeFile(
                path=e.path,
                status=e.status,
                old_path=e.old_path,
                added=e.added,
                deleted=e.deleted,
                binary=e.added is None,
                size=size,
                uncommitted=e.path in uncommitted or (e.old_path or "") in uncommitted,
                diff=patches.get(e.path) if omitted is None else None,
                omitted=omitted,
            )
        )
    return WorktreeChangesResult(
        worktree=info,
        head=head,
        commits=await branch_commits(info.path, info.base_commit, head),
        files=files,
        added=sum(e.added or 0 for e in entries),
        deleted=sum(e.deleted or 0 for e in entries),
    )


async def branch_commits(cwd: str, base: str, head: str) -> list[WorktreeCommit]:
    """The commits of ``head`` that ``base`` does not have, oldest first."""
    out = await git.run(cwd, "log", "-z", "--reverse", "--format=%H%x1f%s", f"{base}..{head}")
    return [
        WorktreeCommit(commit=sha, subject=subject)
        for sha, subject in (f.split("\x1f", 1) for f in out.fields())
    ]


async def _sizes(cwd: str, blobs: list[str]) -> dict[str, int]:
    wanted = sorted({b for b in blobs if b != _NO_BLOB})
    if not wanted:
        return {}
    out = await git.run(
        cwd,
        "cat-file",
        "--batch-check=%(objectname) %(objectsize)",
        stdin="\n".join(wanted).encode(),
    )
    sizes: dict[str, int] = {}
    for line in out.text.splitlines():
        sha, _, size = line.partition(" ")
        if size.isdigit():
            sizes[sha] = int(size)
    return sizes


async def _patches(
    cwd: str, base: str, tree: str, entries: list[_Entry], shown: list[_Entry]
) -> dict[str, str]:
    """The unified diff of each file of ``shown``, by path. One ``git diff`` that leaves
    the other files out: its file sections come in the order of ``entries``."""
    if not shown:
        return {}
    left_out = [p for e in entries if e not in shown for p in (e.path, e.old_path) if p]
    pathspecs = [f":(exclude,literal){p}" for p in left_out]
    args = ["diff", "-M", "--no-color", "--no-ext-diff", base, tree]
    if pathspecs:
        args += ["--", ".", *pathspecs]
    text = (await git.run(cwd, *args)).stdout.decode("utf-8", "replace")
    sections: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or not sections:
            sections.append(line)
        else:
            sections[-1] += line
    if len(sections) != len(shown):
        raise RuntimeError(
            f"git diff gave {len(sections)} file section(s) for {len(shown)} file(s) in {cwd}"
        )
    return {e.path: section for e, section in zip(shown, sections, strict=True)}
