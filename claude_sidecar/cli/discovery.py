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
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from claude_sidecar.cli.compat import TESTED_CLI_VERSIONS, in_tested_range
from claude_sidecar.cli.paths import default_config_home
from claude_sidecar.protocol.api import CliInfo
from claude_sidecar.protocol.errors import CliNotFound

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
    return locate_cli(explicit, env)[0]


def locate_cli(
    explicit: str | None = None, env: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The CLI binary to run and where it was found (``PATH``, ``claude-agent-sdk bundle``,
    ...), or raise ``CliNotFound``."""
    env = os.environ if env is None else env
    looked: list[str] = []
    candidates: list[tuple[str, Path | None]] = []
    if explicit:
        # An explicit choice that is wrong is an error, not a hint to look elsewhere.
        chosen = Path(explicit).expanduser()
        if _is_executable(chosen):
            return str(chosen), "--cli"
        raise CliNotFound([f"explicit path ({chosen}: not an executable file)"])
    if env.get(ENV_VAR):
        candidates.append((f"${ENV_VAR}", Path(env[ENV_VAR]).expanduser()))
    on_path = shutil.which("claude", path=env.get("PATH"))
    candidates.append(("PATH", Path(on_path) if on_path else None))
    candidates.append(("claude-agent-sdk bundle", _bundled_binary()))
    home = env.get("HOME")
    # The CLI's npm-local install is under the default config home whatever
    # $CLAUDE_CONFIG_DIR says (CLI 2.1.330 joins the home folder, ".claude", "local").
    local = default_config_home(Path(home)) / "local" / "claude" if home else None
    candidates.append(("~/.claude/local", local))
    for label, path in candidates:
        if path is not None and _is_executable(path):
            return str(path), label
        looked.append(f"{label} ({path})" if path else f"{label} (none)")
    raise CliNotFound(looked)


# Generous: a 200 MB binary's start on a loaded two-core machine has taken over 5 s.
VERSION_TIMEOUT = 20.0
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


def cli_version(path: str, env: Mapping[str, str] | None = None) -> str:
    """The version the CLI at ``path`` prints (``2.1.330``); raises ``OSError`` or
    ``ValueError`` when it cannot be run or says something else."""
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise ValueError(f"`{path} --version` did not answer within {VERSION_TIMEOUT:g} s") from e
    match = _VERSION.search(done.stdout)
    if done.returncode != 0 or match is None:
        said = (done.stdout + done.stderr).strip()[:200]
        raise ValueError(f"`{path} --version` exited with {done.returncode}: {said!r}")
    return match.group(0)


# Versions asked of a binary (path, size, mtime): only answers are kept, since a CLI that
# did not answer in time on a loaded machine may well answer the next time.
_versions: dict[tuple[str, int, int], str] = {}


def _binary_key(path: str) -> tuple[str, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (path, stat.st_size, stat.st_mtime_ns)


def remembered_cli_version(path: str, env: Mapping[str, str] | None = None) -> str:
    """``cli_version``, asked once per binary (path, size and mtime) that answered; raises
    as ``cli_version`` does when it cannot tell."""
    key = _binary_key(path)
    if key is not None and key in _versions:
        return _versions[key]
    version = cli_version(path, env)
    if key is not None:
        _versions[key] = version
    return version


def known_cli_version(path: str, env: Mapping[str, str] | None = None) -> str | None:
    """``remembered_cli_version``, or None when the CLI cannot tell. For CLIs that do not
    report their version themselves."""
    try:
        return remembered_cli_version(path, env)
    except (OSError, ValueError):
        return None


def describe_cli(explicit: str | None = None, env: Mapping[str, str] | None = None) -> CliInfo:
    """Which CLI new channels will run and its version, or why there is none."""
    tested = list(TESTED_CLI_VERSIONS)
    try:
        path, source = locate_cli(explicit, env)
    except CliNotFound as e:
        return CliInfo(path=None, version=None, error=e.message, tested_versions=tested)
    try:
        version = remembered_cli_version(path, env)
    except (OSError, ValueError) as e:
        return CliInfo(
            path=path,
            version=None,
            error=f"cannot tell its version: {e}",
            source=source,
            tested_versions=tested,
        )
    return CliInfo(
        path=path,
        version=version,
        source=source,
        tested=in_tested_range(version),
        tested_versions=tested,
    )
