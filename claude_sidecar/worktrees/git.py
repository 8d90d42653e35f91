"""Running ``git``: one subprocess per call (anyio), its output typed.

Every other module of the package goes through ``run``, so that how git is called (no
pager, no prompts, not on the daemon's terminal, a plain C locale for the messages read
back, no hooks' stdin) is decided in one place, and a failure becomes ``GitFailed``
naming the command and git's own words.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import anyio

from claude_sidecar.protocol.errors import GitFailed, GitIdentityMissing

# Paths and messages as bytes git would print them to a person: unquoted (core.quotePath)
# so that paths with non-ASCII names come back as they are, and never a pager or an editor.
_CONFIG = ("-c", "core.quotePath=false", "-c", "core.pager=cat", "-c", "color.ui=false")
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}
# What git says (LC_ALL=C) when it has no identity to commit with and cannot guess one.
_NO_IDENTITY = ("Please tell me who you are", "unable to auto-detect email address")


@dataclass(frozen=True)
class Output:
    """What one git command printed and how it ended."""

    code: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        """stdout as text, the trailing newline removed."""
        return self.stdout.decode("utf-8", "surrogateescape").rstrip("\n")

    def fields(self) -> list[str]:
        """stdout split at NULs (a ``-z`` listing), the empty tail left out."""
        return [f.decode("utf-8", "surrogateescape") for f in self.stdout.split(b"\0") if f != b""]


async def run(
    cwd: str,
    *args: str,
    check: bool = True,
    ok: Sequence[int] = (0,),
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> Output:
    """Run ``git args`` in ``cwd``; with ``check``, an exit code not in ``ok`` raises
    ``GitFailed``. ``env`` adds variables (e.g. ``GIT_INDEX_FILE``)."""
    command = ["git", *_CONFIG, *args]
    try:
        done = await anyio.run_process(
            command,
            input=stdin,
            cwd=cwd,
            check=False,
            env={**os.environ, **_ENV, **(env or {})},
            stdin=None if stdin is not None else subprocess.DEVNULL,
            # Outside the daemon's session, so without its controlling terminal (a daemon
            # started by an editor in a terminal has one): ssh under a fetch cannot ask for
            # a passphrase or a host key there, over the editor's screen, and wait for an
            # answer nobody sees; it fails at once instead. (Ignored on Windows.)
            start_new_session=True,
        )
    except OSError as e:
        raise GitFailed(list(args), cwd, f"git could not be started: {e}") from e
    out = Output(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace").strip())
    if check and out.code not in ok:
        raise failure(list(args), cwd, out.stderr or f"exit code {out.code}")
    return out


def failure(args: list[str], cwd: str, stderr: str) -> GitFailed | GitIdentityMissing:
    """The error for ``git args`` failing in ``cwd`` with ``stderr``: no identity to commit
    with has its own (the user can fix it), anything else is ``GitFailed``."""
    if any(words in stderr for words in _NO_IDENTITY):
        return GitIdentityMissing(cwd, stderr)
    return GitFailed(args, cwd, stderr)


async def rev(cwd: str, ref: str) -> str | None:
    """The commit ``ref`` names in the repository of ``cwd``, or None when it names none."""
    out = await run(
        cwd,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{ref}^{{commit}}",
        check=False,
    )
    return out.text if out.code == 0 and out.text else None


async def tree_of(cwd: str, commit: str) -> str:
    """The tree of ``commit``."""
    return (await run(cwd, "rev-parse", "--verify", f"{commit}^{{tree}}")).text


async def is_ancestor(cwd: str, older: str, newer: str) -> bool:
    """Whether ``older`` is ``newer`` or one of its ancestors."""
    out = await run(cwd, "merge-base", "--is-ancestor", older, newer, ok=(0, 1))
    return out.code == 0


async def config_get(cwd: str, key: str) -> str | None:
    """A value of the repository's git config, or None when it is not set."""
    out = await run(cwd, "config", "--get", key, ok=(0, 1))
    return out.text if out.code == 0 else None


async def commit_tree(
    cwd: str, tree: str, parents: Sequence[str], message: str, env: Mapping[str, str] | None = None
) -> str:
    """A new commit of ``tree`` with ``parents`` (on no branch yet)."""
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    return (await run(cwd, *args, env=env, stdin=message.encode())).text


@dataclass(frozen=True)
class Checkout:
    """One working tree of a repository, as ``git worktree list`` lists it."""

    path: str
    head: str | None
    branch: str | None  # the short name (None: detached or bare)
    locked: bool


async def checkouts(cwd: str) -> list[Checkout]:
    """Every working tree of the repository of ``cwd``, the main one first."""
    out = await run(cwd, "worktree", "list", "--porcelain", "-z")
    found: list[Checkout] = []
    path, head, branch, locked = "", None, None, False
    for field in [*out.stdout.decode("utf-8", "surrogateescape").split("\0"), ""]:
        if field == "":
            if path:
                found.append(Checkout(path, head, branch, locked))
            path, head, branch, locked = "", None, None, False
        elif field.startswith("worktree "):
            path = field.removeprefix("worktree ")
        elif field.startswith("HEAD "):
            head = field.removeprefix("HEAD ")
        elif field.startswith("branch "):
            branch = field.removeprefix("branch ").removeprefix("refs/heads/")
        elif field == "locked" or field.startswith("locked "):
            locked = True
    return found


@dataclass(frozen=True)
class StatusEntry:
    """One path of ``git status --porcelain``: its two status letters."""

    code: str
    path: str


async def status(cwd: str) -> list[StatusEntry]:
    """What is not committed in the working tree of ``cwd``: staged, changed and
    untracked files (each file of an untracked folder), not the ignored ones."""
    out = await run(cwd, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    entries: list[StatusEntry] = []
    fields = out.fields()
    i = 0
    while i < len(fields):
        code, path = fields[i][:2], fields[i][3:]
        entries.append(StatusEntry(code, path))
        # A rename or copy is followed by the path it came from.
        i += 2 if code[0] in "RC" else 1
    return entries
