"""Bringing a worktree's branch into the branch it was made from, and removing it.

Nothing the user has is touched until the result is known to be clean: the agent's
uncommitted work becomes a commit on no branch, the merge is computed without a checkout
(``git merge-tree --write-tree``; a rebase replays the commits in a temporary detached
worktree), and the user's checkout of the target branch is updated last, by ``git
read-tree -m -u`` from the old tip to the new one, which keeps their uncommitted changes;
a merge that would change one of those files is refused before anything is written. Only
then do the target branch and the worktree's branch move.
"""

from __future__ import annotations

import os
import tempfile

from claude_sidecar.protocol.api import MergeStrategy, MergeWorktreeResult, WorktreeInfo
from claude_sidecar.protocol.errors import (
    InvalidParams,
    MergeConflict,
    UncommittedChanges,
)
from claude_sidecar.worktrees import changes, git, layout


async def target_of(info: WorktreeInfo) -> tuple[str, str]:
    """The branch a merge of ``info`` goes into and its tip."""
    branch = info.base_branch
    tip = await git.rev(info.root, f"refs/heads/{branch}") if branch is not None else None
    if branch is None or tip is None:
        raise InvalidParams(
            "channelId",
            f"names a chat whose worktree was made from {info.base_ref!r}, which is no local "
            "branch to merge into",
            "merge its branch yourself with git, or remove the worktree",
        )
    return branch, tip


async def merge(
    info: WorktreeInfo, strategy: MergeStrategy, message: str
) -> tuple[MergeWorktreeResult, WorktreeInfo]:
    """Merge, squash or rebase the worktree's branch (with its uncommitted work, committed
    with ``message``) into its base branch; returns the answer and the worktree as it is
    now (its base is the merged tip). ``MergeConflict`` or ``UncommittedChanges``: nothing
    was changed."""
    target, previous = await target_of(info)
    head = await git.rev(info.path, "HEAD") or info.base_commit
    tree = await changes.snapshot(info.path)
    committed = None
    tip = head
    if tree != await git.tree_of(info.path, head):
        tip = committed = await git.commit_tree(info.path, tree, [head], message)
    if strategy == "rebase":
        result = await _rebased(info, target, previous, tip)
    else:
        result = await _merged(info, target, previous, tip, strategy, message)
    files = (await git.run(info.root, "diff", "--name-only", "-z", previous, result)).fields()
    checkout = next((c for c in await git.checkouts(info.root) if c.branch == target), None)
    if checkout is not None:
        await _refuse_touching_uncommitted(checkout.path, files)
        # All or nothing: read-tree checks every file before it writes one.
        await git.run(checkout.path, "read-tree", "-m", "-u", previous, result)
    await git.run(info.root, "update-ref", f"refs/heads/{target}", result, previous)
    # The worktree goes on from the merged state (its work is all in it now).
    await git.run(info.path, "reset", "--quiet", "--hard", result)
    moved = await layout.rebase_onto(info, result)
    answer = MergeWorktreeResult(
        strategy=strategy,
        target=target,
        previous=previous,
        commit=result,
        committed=committed,
        files=files,
        checkout=checkout.path if checkout is not None else None,
    )
    return answer, moved


async def _merged(
    info: WorktreeInfo,
    target: str,
    previous: str,
    tip: str,
    strategy: MergeStrategy,
    message: str,
) -> str:
    """The commit a merge or squash of ``tip`` into ``previous`` makes (``previous``
    itself when there is nothing to bring in; ``tip`` for a fast-forward merge)."""
    out = await git.run(
        info.root,
        "merge-tree",
        "--write-tree",
        "-z",
        "--name-only",
        "--no-messages",
        previous,
        tip,
        ok=(0, 1),
    )
    fields = out.fields()
    if out.code == 1:
        raise MergeConflict(info.branch, target, strategy, sorted(set(fields[1:])))
    merged = fields[0]
    if merged == await git.tree_of(info.root, previous):
        return previous
    if strategy == "merge":
        if await git.is_ancestor(info.root, previous, tip):
            return tip
        return await git.commit_tree(
            info.root, merged, [previous, tip], f"Merge branch '{info.branch}' into {target}"
        )
    return await git.commit_tree(info.root, merged, [previous], message)


async def _rebased(info: WorktreeInfo, target: str, previous: str, tip: str) -> str:
    """The commits of ``tip`` replayed onto ``previous``, in a temporary detached worktree
    that is removed afterwards (a conflict leaves nothing behind)."""
    picks = (
        await git.run(info.root, "rev-list", "--reverse", "--no-merges", f"{previous}..{tip}")
    ).text.split()
    if not picks:
        return previous
    with tempfile.TemporaryDirectory(prefix="claude-sidecar-rebase-") as scratch:
        place = os.path.join(scratch, "worktree")
        await git.run(info.root, "worktree", "add", "--quiet", "--detach", place, previous)
        try:
            out = await git.run(
                place,
                "cherry-pick",
                "--allow-empty",
                "--keep-redundant-commits",
                *picks,
                check=False,
            )
            if out.code != 0:
                unmerged = await git.run(place, "diff", "--name-only", "-z", "--diff-filter=U")
                files = sorted(set(unmerged.fields()))
                await git.run(place, "cherry-pick", "--abort", check=False)
                if not files:
                    raise git.failure(["cherry-pick", *picks], place, out.stderr)
                raise MergeConflict(info.branch, target, "rebase", files)
            return (await git.run(place, "rev-parse", "HEAD")).text
        finally:
            await git.run(info.root, "worktree", "remove", "--force", place, check=False)
            await git.run(info.root, "worktree", "prune", check=False)


async def _refuse_touching_uncommitted(checkout: str, files: list[str]) -> None:
    dirty = sorted({e.path for e in await git.status(checkout)} & set(files))
    if dirty:
        raise UncommittedChanges(checkout, dirty)


async def unmerged(info: WorktreeInfo) -> tuple[list[str], list[str]]:
    """What removing the worktree would lose: its branch's commits whose changes the base
    branch does not have (``sha subject``), and its uncommitted files."""
    uncommitted = sorted({e.path for e in await git.status(info.path)})
    head = await git.rev(info.path, "HEAD") or info.base_commit
    branch = info.base_branch
    target = await git.rev(info.root, f"refs/heads/{branch}") if branch else None
    target = target or info.base_commit
    if await git.is_ancestor(info.root, head, target):
        return [], uncommitted
    # A squash or rebase brought the changes in as other commits: merging again would
    # change nothing.
    out = await git.run(
        info.root,
        "merge-tree",
        "--write-tree",
        "-z",
        "--name-only",
        "--no-messages",
        target,
        head,
        ok=(0, 1),
    )
    if out.code == 0 and out.fields()[0] == await git.tree_of(info.root, target):
        return [], uncommitted
    commits = await changes.branch_commits(info.root, target, head)
    return [f"{c.commit[:12]} {c.subject}" for c in commits], uncommitted


async def remove(info: WorktreeInfo) -> None:
    """Remove the worktree (whatever is in it, and a lock the CLI left) and its branch."""
    if os.path.isdir(info.path):
        await git.run(info.root, "worktree", "remove", "--force", "--force", info.path)
    await git.run(info.root, "worktree", "prune")
    if await git.rev(info.root, f"refs/heads/{info.branch}") is not None:
        await git.run(info.root, "branch", "--quiet", "-D", info.branch)
