"""The Python packages as users get them: built once per test session with ``uv build``,
installed into a scratch HOME with the installers users run (``uv tool``, pipx), and run
from the installed command, outside the checkout and without it on any path.

The user's uv and pip caches are kept (so nothing but PyPI is needed, and only for what the
caches lack). Without uv the tests skip; with CI=true they fail."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.install.prerequisites import missing

ROOT = Path(__file__).resolve().parents[2]
with (ROOT / "pyproject.toml").open("rb") as _pyproject:
    VERSION: str = tomllib.load(_pyproject)["project"]["version"]


def require(command: str) -> str:
    """The path of ``command``; skips without it (fails with CI=true)."""
    path = shutil.which(command)
    if path is None:
        missing(f"{command} is not on PATH: the installed-package tests need it")
    return path


@pytest.fixture(scope="session")
def uv() -> str:
    return require("uv")


@dataclass(frozen=True)
class Packages:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="session")
def packages(uv: str, tmp_path_factory: pytest.TempPathFactory) -> Packages:
    """The wheel and sdist of the checkout, built once for the whole session: the xdist
    workers share one build (the first to take the lock builds, the others find it)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's directory, above each worker's own
    out = shared / "claude-sidecar-packages"
    wheel = out / f"claude_sidecar-{VERSION}-py3-none-any.whl"
    sdist = out / f"claude_sidecar-{VERSION}.tar.gz"
    with (shared / "claude-sidecar-packages.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (wheel.exists() and sdist.exists()):
            run([uv, "build", "--out-dir", str(out), str(ROOT)], cwd=shared, env=user_env())
    return Packages(wheel, sdist)


def run(
    command: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end; a failure shows its output."""
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


def user_env() -> dict[str, str]:
    """This process's environment without what ties it to the checkout: the virtualenv
    `uv run` activated (its bin on PATH, VIRTUAL_ENV), PYTHONPATH, and the Claude and
    Anthropic settings of the host."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = [
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not (venv and entry.startswith(venv)) and not entry.startswith(str(ROOT))
    ]
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ANTHROPIC_", "CLAUDE")) and name not in _CHECKOUT_VARIABLES
    }
    env["PATH"] = os.pathsep.join(path)
    return env


# What `uv run` (or a user's activated checkout) sets to run the checkout's own code.
_CHECKOUT_VARIABLES = {
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "UV_PROJECT_ENVIRONMENT",
    "UV_RUN_RECURSION_DEPTH",
}


def _ask(command: list[str]) -> str:
    return run(command, cwd=Path.home(), env=dict(os.environ)).stdout.strip()


@dataclass(frozen=True)
class Scratch:
    """A user's machine in a temp dir: HOME, where the installers put things, and the
    environment every command runs in."""

    dir: Path
    home: Path
    bin: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def scratch(uv: str, tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    """A scratch HOME with uv's tool dirs and pipx's dirs in it; the user's uv cache, uv's
    Pythons and pip cache are kept (asked before HOME moves)."""
    root = tmp_path_factory.mktemp("user")
    assert not root.is_relative_to(ROOT)
    home, bin_dir, tmp = root / "home", root / "bin", root / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = user_env()
    env.update(
        HOME=str(home),
        # Its own temporary folder: what the demo leaves for the user to look at stays in it.
        TMPDIR=str(tmp),
        UV_CACHE_DIR=_ask([uv, "cache", "dir"]),
        UV_PYTHON_INSTALL_DIR=_ask([uv, "python", "dir"]),
        UV_TOOL_DIR=str(root / "uv-tools"),
        UV_TOOL_BIN_DIR=str(bin_dir),
        PIPX_HOME=str(root / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(root / "man"),
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR")
        or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"),
        # The demo and the agent start real CLIs: no update checks or telemetry.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    env["PATH"] = os.pathsep.join([str(bin_dir), env["PATH"]])
    return Scratch(root, home, bin_dir, env)
