"""Where a chat's worktree lives, what its branch is called, and making or finding one.

The layout is the Claude Code CLI's own (``claude --worktree NAME``, CLI 2.1.330): the
worktree is ``<main checkout>/.claude/worktrees/<slug>`` on a new branch
``worktree-<slug>``, where the slug is the name with ``/`` written ``+``. So ``claude
--worktree NAME`` in a terminal enters the worktree a chat of the daemon made, and a chat
can be resumed in one the CLI made.

The daemon makes the worktree with git itself rather than through ``--worktree``: the
CLI's base is only ``fresh`` or ``head`` (its ``worktree.baseRef`` setting; no other
ref), it silently re-enters a worktree whose name is in use, and it reports neither the
branch nor the base commit. What the daemon knows of the base is kept in the branch's git
config (``branch.<branch>.sidecarBase*``, which ``git branch -D`` removes with it). A base
of ``fresh`` is origin's default branch as origin has it now: origin is fetched first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from pathlib import Path

import anyio

from claude_sidecar.protocol.api import WorktreeInfo, WorktreeOptions
from claude_sidecar.protocol.errors import GitFailed, InvalidParams
from claude_sidecar.worktrees import git

log = logging.getLogger(__name__)

WORKTREES_DIR = Path(".claude", "worktrees")
BRANCH_PREFIX = "worktree-"
FETCH_TIMEOUT = 20.0
"""How long a worktree from ``fresh`` waits for the fetch of origin (seconds)."""
# The branch's git config keys where the base is kept.
_NAME, _BASE_REF = "sidecarName", "sidecarBaseRef"
_BASE_COMMIT, _BASE_BRANCH = "sidecarBaseCommit", "sidecarBaseBranch"


def slug(name: str) -> str:
    """The folder name of worktree ``name`` (the CLI writes ``/`` as ``+``)."""
    return name.replace("/", "+")


def branch_for(name: str) -> str:
    """The branch of worktree ``name``, as the CLI names it."""
    return BRANCH_PREFIX + slug(name)


class Repository:
    """The git repository a folder is in: its main checkout, and the checkout (main or
    linked) and subfolder the folder is."""

    def __init__(self, main_root: str, toplevel: str, prefix: str) -> None:
        self.main_root = main_root
        self.toplevel = toplevel
        self.prefix = prefix

    def worktree_path(self, name: str) -> str:
        """Where worktree ``name`` of this repository lives."""
        return str(Path(self.main_root, WORKTREES_DIR, slug(name)))


async def repository(cwd: str, field: str = "cwd") -> Repository:
    """The repository ``cwd`` is in, or ``InvalidParams`` naming ``field``."""
    out = await git.run(cwd, "rev-parse", "--show-toplevel", "--show-prefix", check=False)
    lines = out.stdout.decode("utf-8", "surrogateescape").split("\n")
    if out.code != 0 or not lines[0]:
        raise InvalidParams(
            field,
            f"is not in a git repository ({cwd}: {out.stderr[:200] or 'no work tree'})",
            "pass a folder of a git repository's checkout, or leave out `worktree`",
        )
    checkouts = await git.checkouts(cwd)
    return Repository(checkouts[0].path, lines[0], lines[1] if len(lines) > 1 else "")


async def _resolve_base(repo: Repository, base_ref: str) -> tuple[str, str | None]:
    """The commit ``base_ref`` names for a new worktree, and the branch a merge brings the
    worktree's work into (None when it names no local branch)."""
    field = "worktree.baseRef"
    if base_ref == "head":
        commit = await git.rev(repo.toplevel, "HEAD")
        if commit is None:
            raise InvalidParams(
                field, "is head, but the repository has no commit yet", "commit something first"
            )
        out = await git.run(repo.toplevel, "symbolic-ref", "--quiet", "--short", "HEAD", ok=(0, 1))
        return commit, out.text if out.code == 0 else None
    if base_ref == "fresh":
        unfetched = await _fetch_origin(repo)
        if unfetched is not None:
            log.warning(
                "worktree from fresh: origin of %s not fetched (%s); starting from origin's "
                "branches as last fetched",
                repo.main_root,
                unfetched,
            )
        # origin's default branch, as the CLI finds it: origin/HEAD, else main or master.
        out = await git.run(
            repo.toplevel,
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
            ok=(0, 1),
        )
        candidates = [out.text] if out.code == 0 else []
        candidates += ["origin/main", "origin/master"]
        for remote in candidates:
            commit = await git.rev(repo.toplevel, f"refs/remotes/{remote}")
            if commit is not None:
                return commit, await _local_branch(repo, remote.removeprefix("origin/"))
        why = "" if unfetched is None else f" (fetching origin failed: {unfetched})"
        raise InvalidParams(
            field,
            f"is fresh, but the repository has no origin/<default branch>{why}",
            "fetch origin first, or start from head or a named ref",
        )
    commit = await git.rev(repo.toplevel, base_ref)
    if commit is None:
        raise InvalidParams(
            field,
            f"is {base_ref[:100]!r}, which names no commit of {repo.main_root}",
            "pass head, fresh, or a branch, tag or commit of the repository",
        )
    if await git.rev(repo.toplevel, f"refs/heads/{base_ref}") is not None:
        return commit, base_ref
    if await git.rev(repo.toplevel, f"refs/remotes/{base_ref}") is not None:
        return commit, await _local_branch(repo, base_ref.split("/", 1)[-1])
    return commit, None


async def _fetch_origin(repo: Repository) -> str | None:
    """Fetch origin, so that ``fresh`` is origin's default branch as it is now, not as last
    fetched; at most :data:`FETCH_TIMEOUT`. None when fetched, else why not (offline, no
    origin, no answer in time: the caller goes on with the refs as they are)."""
    with anyio.move_on_after(FETCH_TIMEOUT) as waited:
        out = await git.run(repo.toplevel, "fetch", "--quiet", "origin", check=False)
    if waited.cancelled_caught:
        return f"no answer within {FETCH_TIMEOUT:g} s"
    if out.code != 0:
        return out.stderr[:300] or f"git fetch exited with {out.code}"
    return None


async def _local_branch(repo: Repository, name: str) -> str | None:
    return name if await git.rev(repo.toplevel, f"refs/heads/{name}") is not None else None


async def _in_use(repo: Repository, name: str) -> str | None:
    """What already uses worktree name ``name`` (None: it is free)."""
    path = repo.worktree_path(name)
    if os.path.lexists(path):
        return f"{path} exists"
    if await git.rev(repo.main_root, f"refs/heads/{branch_for(name)}") is not None:
        return f"branch {branch_for(name)} exists"
    taken = {c.path.lower() for c in await git.checkouts(repo.main_root)}
    if path.lower() in taken:
        return f"a worktree of the repository is registered at {path}"
    return None


async def create(cwd: str, options: WorktreeOptions) -> tuple[WorktreeInfo, str]:
    """Make the worktree ``options`` ask for in the repository of ``cwd``; returns it and
    the folder of the chat in it (``cwd``'s subfolder of the checkout, in the worktree)."""
    repo = await repository(cwd)
    commit, base_branch = await _resolve_base(repo, options.base_ref)
    name = options.name
    if name is None:
        name = await _free_name(repo)
    elif (used := await _in_use(repo, name)) is not None:
        raise InvalidParams(
            "worktree.name",
            f"is in use ({used})",
            "choose another name, or resume the chat that runs there (resume and this name)",
        )
    info = WorktreeInfo(
        name=name,
        path=repo.worktree_path(name),
        branch=branch_for(name),
        base_ref=options.base_ref,
        base_commit=commit,
        base_branch=base_branch,
        root=repo.main_root,
    )
    await _ignore_worktrees(repo)
    await git.run(
        repo.main_root, "worktree", "add", "--quiet", "-b", info.branch, info.path, commit
    )
    section = f"branch.{info.branch}."
    await git.run(repo.main_root, "config", section + _NAME, name)
    await git.run(repo.main_root, "config", section + _BASE_REF, info.base_ref)
    await git.run(repo.main_root, "config", section + _BASE_COMMIT, commit)
    if base_branch is not None:
        await git.run(repo.main_root, "config", section + _BASE_BRANCH, base_branch)
    return info, _inside(info.path, repo.prefix)


async def _ignore_worktrees(repo: Repository) -> None:
    """Have git ignore ``.claude/worktrees/`` in the user's checkout, unless it does: the CLI
    leaves it to show as untracked (``?? .claude/``) in every ``git status``. The line goes
    to the repository's ``info/exclude`` (this clone only), not to a ``.gitignore`` the
    user would have to commit."""
    folder = f"/{WORKTREES_DIR.as_posix()}/"
    ignored = await git.run(
        repo.main_root, "check-ignore", "-q", "--no-index", folder.lstrip("/"), ok=(0, 1)
    )
    if ignored.code == 0:
        return
    common = await git.run(
        repo.main_root, "rev-parse", "--path-format=absolute", "--git-common-dir"
    )
    await asyncio.to_thread(_exclude, Path(common.text.strip(), "info", "exclude"), folder)


def _exclude(exclude: Path, pattern: str) -> None:
    """Append ``pattern`` to git's ``exclude`` file (made if missing)."""
    exclude.parent.mkdir(parents=True, exist_ok=True)
    existing = exclude.read_text() if exclude.exists() else ""
    with exclude.open("a") as out:
        if existing and not existing.endswith("\n"):
            out.write("\n")
        out.write(f"# chats of claude-sidecar and claude --worktree\n{pattern}\n")


async def enter(cwd: str, options: WorktreeOptions) -> tuple[WorktreeInfo, str]:
    """The existing worktree ``options.name`` of the repository of ``cwd`` (a resumed chat
    goes on in it) and the chat's folder there."""
    repo = await repository(cwd)
    if options.name is None:
        raise InvalidParams(
            "worktree.name",
            "is required to resume a chat in its worktree",
            "pass the name of the worktree the chat ran in",
        )
    path = repo.worktree_path(options.name)
    info = await find(path) if os.path.isdir(path) else None
    if info is None:
        raise InvalidParams(
            "worktree.name",
            f"names no worktree of {repo.main_root} ({path} is not one)",
            "pass the name of an existing worktree, or leave out `resume` to make one",
        )
    return info, _inside(info.path, repo.prefix)


def _inside(path: str, prefix: str) -> str:
    # The same subfolder in the worktree when it is there (it may not be at the base).
    inside = os.path.join(path, prefix) if prefix else path
    return inside if os.path.isdir(inside) else path


async def _free_name(repo: Repository) -> str:
    while True:
        name = f"chat-{secrets.token_hex(3)}"
        if await _in_use(repo, name) is None:
            return name


def is_worktree_folder(cwd: str) -> bool:
    """Whether ``cwd`` may be in a worktree of this layout (a cheap test before ``find``)."""
    return f"{os.sep}{WORKTREES_DIR}{os.sep}" in os.path.normpath(cwd) + os.sep


async def find(cwd: str) -> WorktreeInfo | None:
    """The worktree of this layout that ``cwd`` is in, or None: a chat resumed or forked in
    one keeps it. The base is what the daemon recorded when it made the worktree; for one
    the CLI made, the main checkout's branch and where the worktree's branch left it."""
    if not is_worktree_folder(cwd):
        return None
    out = await git.run(cwd, "rev-parse", "--show-toplevel", check=False)
    if out.code != 0:
        return None
    toplevel = out.text
    checkouts = await git.checkouts(cwd)
    main = checkouts[0]
    here = next((c for c in checkouts if c.path == toplevel), None)
    if (
        here is None
        or here.branch is None
        or Path(toplevel).parent != Path(main.path, WORKTREES_DIR)
    ):
        return None
    section = f"branch.{here.branch}."
    base_ref = await git.config_get(toplevel, section + _BASE_REF) or "head"
    base_branch = await git.config_get(toplevel, section + _BASE_BRANCH)
    base_commit = await git.config_get(toplevel, section + _BASE_COMMIT)
    if base_commit is None:
        base_branch = base_branch or main.branch
        if base_branch is not None:
            fork = await git.run(toplevel, "merge-base", base_branch, "HEAD", ok=(0, 1))
            base_commit = fork.text if fork.code == 0 else None
        base_commit = base_commit or here.head or ""
    return WorktreeInfo(
        name=await git.config_get(toplevel, section + _NAME) or Path(toplevel).name,
        path=toplevel,
        branch=here.branch,
        base_ref=base_ref,
        base_commit=base_commit,
        base_branch=base_branch,
        root=main.path,
    )


def _main_toplevel(cwd: str) -> Path | None:
    """The top of the checkout ``cwd`` is in, when worktrees of this layout may have been
    made from it (it holds ``.claude/worktrees``): found on disk, so that a listing of a
    folder without any worktree costs no git command."""
    folder = Path(os.path.abspath(cwd))
    for top in (folder, *folder.parents):
        if os.path.lexists(top / ".git"):
            return top if (top / WORKTREES_DIR).is_dir() else None
    return None


async def worktree_folders(cwd: str) -> list[tuple[str, str]]:
    """The worktrees of this layout made from the main checkout ``cwd`` is in, each as its
    name and ``cwd``'s counterpart in it (the same subfolder: where a chat opened from
    ``cwd`` in that worktree runs, and so where the CLI stores its sessions). None when
    ``cwd`` is not in a main checkout, or no worktree exists (registered with git and on
    disk)."""
    top = _main_toplevel(cwd)
    if top is None:
        return []
    try:
        checkouts = await git.checkouts(str(top))
    except GitFailed as e:
        log.info("worktrees of %s not listed: %s", top, e.message)
        return []
    main = Path(checkouts[0].path)
    prefix = os.path.relpath(os.path.realpath(cwd), os.path.realpath(main))
    if prefix == os.pardir or prefix.startswith(os.pardir + os.sep):
        return []  # a linked worktree, not the main checkout
    names = await _recorded_names(str(main))
    found: list[tuple[str, str]] = []
    for checkout in checkouts[1:]:
        path = Path(checkout.path)
        if path.parent != main / WORKTREES_DIR or not path.is_dir():
            continue
        name = names.get(checkout.branch or "", path.name)
        found.append((name, os.path.normpath(path / prefix)))
    return found


async def _recorded_names(root: str) -> dict[str, str]:
    """The worktree name the daemon recorded for each branch (``create``), by branch."""
    out = await git.run(
        root, "config", "-z", "--get-regexp", rf"^branch\..*\.{_NAME.lower()}$", ok=(0, 1)
    )
    names: dict[str, str] = {}
    for field in out.fields():
        key, _, value = field.partition("\n")
        names[key.removeprefix("branch.").removesuffix(f".{_NAME.lower()}")] = value
    return names


async def rebase_onto(info: WorktreeInfo, commit: str) -> WorktreeInfo:
    """``info`` with ``commit`` as its base commit from now on (after a merge), recorded."""
    await git.run(info.root, "config", f"branch.{info.branch}.{_BASE_COMMIT}", commit)
    return WorktreeInfo(
        name=info.name,
        path=info.path,
        branch=info.branch,
        base_ref=info.base_ref,
        base_commit=commit,
        base_branch=info.base_branch,
        root=info.root,
    )
