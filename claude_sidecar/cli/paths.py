"""Where the Claude Code CLI keeps its files: the one place that knows.

The CLI's config home is ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``. Each
conversation is stored at ``<config home>/projects/<slug of the cwd>/<session id>.jsonl``,
and a sub-agent's transcript in the ``<session id>/subagents/`` folder next to it. Every
module of the daemon that needs one of these paths asks this one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from claude_sidecar.protocol.api import is_absolute_path, is_uuid

_SLUG_MAX = 200
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def claude_home(env: Mapping[str, str]) -> tuple[Path, Path | None]:
    """``$HOME`` and ``$CLAUDE_CONFIG_DIR`` (None when unset) as a CLI run in ``env`` reads them."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    return Path(env.get("HOME", "~")).expanduser(), Path(config_dir) if config_dir else None


def default_config_home(home: Path) -> Path:
    """``home/.claude``: the CLI's config home when ``$CLAUDE_CONFIG_DIR`` is not set."""
    return Path(home) / ".claude"


def config_home(home: Path, config_dir: Path | None) -> Path:
    """The CLI's config home: ``config_dir`` if set, else ``home/.claude``."""
    return config_dir if config_dir is not None else default_config_home(home)


def env_config_home(env: Mapping[str, str]) -> Path:
    """The config home of a CLI run in ``env``."""
    return config_home(*claude_home(env))


def _js_hash36(text: str) -> str:
    """The CLI's ``Math.abs(hash).toString(36)``: Java's String.hashCode over UTF-16 units."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (h * 31 + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    h = abs(h - 0x100000000 if h >= 0x80000000 else h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if not h:
            return out


def _slug(path: str) -> str:
    """The CLI's directory name for ``path``.

    Every UTF-16 code unit that is not an ASCII letter or digit becomes ``-`` (so ``é``
    is one ``-`` and an emoji two); a result longer than 200 characters is cut to 200
    and gets ``-<base-36 hash of the path>`` appended.
    """
    units = path.encode("utf-16-le", "surrogatepass")
    slug = "".join(
        chr(u) if u < 128 and _NON_ALNUM.match(chr(u)) is None else "-"
        for u in (units[i] | units[i + 1] << 8 for i in range(0, len(units), 2))
    )
    if len(slug) <= _SLUG_MAX:
        return slug
    return f"{slug[:_SLUG_MAX]}-{_js_hash36(path)}"


def project_dir(home: Path, cwd: str, *, config_dir: Path | None = None) -> Path:
    """The folder where the CLI keeps the sessions it ran in ``cwd``.

    ``cwd`` must be absolute; symlinks are resolved first (the CLI sees the real path).
    ``config_dir`` replaces ``home/.claude`` for a CLI run with ``CLAUDE_CONFIG_DIR``.
    The folder may not exist (no session was ever run there).
    """
    if not is_absolute_path(cwd):
        raise ValueError(f"cwd must be an absolute path, got {cwd[:200]!r}")
    return config_home(home, config_dir) / "projects" / _slug(os.path.realpath(cwd))


def existing_project_dir(home: Path, cwd: str, config_dir: Path | None) -> Path | None:
    """``project_dir``, or for a cut (long) slug any folder with the same 200-char prefix;
    None when there is no such folder.

    CLIs hashed long paths differently across versions and runtimes (Bun vs Node), so
    the suffix may not match what this module computes.
    """
    exact = project_dir(home, cwd, config_dir=config_dir)
    if exact.is_dir():
        return exact
    if len(exact.name) <= _SLUG_MAX:
        return None
    prefix = exact.name[:_SLUG_MAX] + "-"
    try:
        for candidate in sorted(exact.parent.iterdir()):
            if candidate.name.startswith(prefix) and candidate.is_dir():
                return candidate
    except OSError:
        pass
    return None


def transcript_path(
    home: Path, cwd: str, session_id: str, *, config_dir: Path | None = None
) -> Path:
    """Where the CLI keeps (or will keep) the transcript of session ``session_id``."""
    directory = existing_project_dir(home, cwd, config_dir)
    return (directory or project_dir(home, cwd, config_dir=config_dir)) / f"{session_id}.jsonl"


def session_file(home: Path, cwd: str, session_id: str, config_dir: Path | None) -> Path:
    """The file of stored session ``session_id`` of ``cwd``.

    Raises ``ValueError`` if ``session_id`` is not a UUID (so that it cannot name a path
    outside the project folder) or ``cwd`` is not absolute, both before any file is
    touched, and ``FileNotFoundError`` if the CLI stored no such session.
    """
    if not is_uuid(session_id):
        raise ValueError(f"session id is not a UUID: {str(session_id)[:80]!r}")
    path = transcript_path(home, cwd, session_id, config_dir=config_dir)
    if not path.is_file():
        raise FileNotFoundError(f"no session {session_id} for {cwd} (looked for {path})")
    return path


def find_session_files(home: Path, session_id: str, config_dir: Path | None) -> list[Path]:
    """The files of stored session ``session_id`` in any project folder (one, unless the
    same id was recorded in two directories); [] for an id that is not a UUID."""
    if not is_uuid(session_id):
        return []
    projects = config_home(home, config_dir) / "projects"
    try:
        return sorted(p for p in projects.glob(f"*/{session_id}.jsonl") if p.is_file())
    except OSError:
        return []


def project_dirs(home: Path, config_dir: Path | None) -> list[Path]:
    """Every project folder the CLI keeps sessions in; [] if there are none."""
    projects = config_home(home, config_dir) / "projects"
    try:
        return sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        return []


def session_exists(
    home: Path, cwd: str, session_id: str, *, config_dir: Path | None = None
) -> bool:
    """Whether the CLI has stored session ``session_id`` of ``cwd`` (it writes the file
    with the first message, so a CLI that died before one left nothing to resume)."""
    try:
        session_file(home, cwd, session_id, config_dir)
    except FileNotFoundError:
        return False
    return True


def session_files(directory: Path) -> list[Path]:
    """The session files in a project folder: ``<uuid>.jsonl``, so not the
    ``agent-*.jsonl`` sidechains older CLIs kept there; [] if it cannot be read."""
    try:
        return [
            p
            for p in directory.iterdir()
            if p.suffix == ".jsonl" and is_uuid(p.stem) and p.is_file()
        ]
    except OSError:
        return []


def subagent_files(session_path: Path) -> list[Path]:
    """The sub-agent transcripts of the session stored at ``session_path``, in name order.

    The CLI writes them at ``<project dir>/<session id>/subagents/**/agent-<id>.jsonl``,
    each next to an ``agent-<id>.meta.json`` (see :func:`subagent_meta_path`).
    """
    root = session_path.with_suffix("") / "subagents"
    return sorted(root.rglob("agent-*.jsonl")) if root.is_dir() else []


def subagent_meta_path(transcript: Path) -> Path:
    """The ``agent-<id>.meta.json`` next to a sub-agent transcript: it names the tool use
    that started the sub-agent."""
    return transcript.with_name(transcript.name[: -len(".jsonl")] + ".meta.json")
