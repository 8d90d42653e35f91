"""Finding the Claude Code CLI binary.

Order: an explicit path (``--cli`` or the ``cliPath`` initialize option), the
``CLAUDE_SIDECAR_CLI`` environment variable, ``claude`` on PATH, the binary bundled in
the ``claude-agent-sdk`` wheel, and ``~/.claude/local/claude``. The first executable
file wins; if none is found the error names every place looked. An explicit path
that is not executable is an error by itself.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from .errors import CliNotFound

ENV_VAR = "CLAUDE_SIDECAR_CLI"


def _bundled_binary() -> Path | None:
    # find_spec locates the package without importing it (the SDK pulls in mcp etc.).
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_cli(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Return the path of the CLI binary to run, or raise ``CliNotFound``."""
    env = os.environ if env is None else env
    looked: list[str] = []
    candidates: list[tuple[str, Path | None]] = []
    if explicit:
        # An explicit choice that is wrong is an error, not a hint to look elsewhere.
        path = Path(explicit).expanduser()
        if _is_executable(path):
            return str(path)
        raise CliNotFound([f"explicit path ({path}: not an executable file)"])
    if env.get(ENV_VAR):
        candidates.append((f"${ENV_VAR}", Path(env[ENV_VAR]).expanduser()))
    on_path = shutil.which("claude", path=env.get("PATH"))
    candidates.append(("PATH", Path(on_path) if on_path else None))
    candidates.append(("claude-agent-sdk bundle", _bundled_binary()))
    home = env.get("HOME")
    candidates.append(
        ("~/.claude/local", Path(home) / ".claude" / "local" / "claude" if home else None)
    )
    for label, path in candidates:
        if path is not None and _is_executable(path):
            return str(path)
        looked.append(f"{label} ({path})" if path else f"{label} (none)")
    raise CliNotFound(looked)
