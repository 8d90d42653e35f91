"""Fixtures: a stand-in model, a temp HOME and workspace, and a daemon per test."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.runtime.host import PLATFORM_ENV
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests import env, zygote
from tests.env import COMPAT_CLI, DAEMON_UNDER_TEST, isolated_env
from tests.harness import Sidecar, StartSidecar, wait_until_dead

# pytest rewrites the asserts of each test module as it imports it and keeps the result only
# where Python writes bytecode: with PYTHONDONTWRITEBYTECODE set (as on this project's
# machines) every worker of every run rewrote and compiled each module again, ~6 s of CPU.
sys.dont_write_bytecode = False


def cli_under_test() -> tuple[str, str]:
    """The CLI this run's daemons use and the version it prints (``<cli> --version``),
    asked of the binary itself: facts the daemon reports are checked against it."""
    global _cli_under_test
    if _cli_under_test is None:
        # Where the SDK wheel keeps its CLI, found without importing the SDK.
        sdk = importlib.util.find_spec("claude_agent_sdk")
        assert sdk is not None and sdk.origin is not None, "claude-agent-sdk is not installed"
        path = COMPAT_CLI or str(Path(sdk.origin).parent / "_bundled" / "claude")
        said = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
        match = re.match(r"\s*(\d+\.\d+\.\d+)", said)
        assert match, f"`{path} --version` said {said!r}"
        _cli_under_test = path, match.group(1)
    return _cli_under_test


_cli_under_test: tuple[str, str] | None = None

# A plain conversation: enough for tests that only need some streamed text.
BASIC_SCENARIO = {
    "rules": [
        {"match": "(?i)hello", "steps": [[{"text": "Hello from the stand-in model!"}]]},
    ],
    "default": [[{"text": "A scripted answer."}]],
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_daemon_process: the test looks at the daemon's own process (its children, "
        "memory, threads, pid): its daemons are started directly, not by tests/zygote",
    )
    config.addinivalue_line(
        "markers",
        "pinned_cli(reason): checks a fact of the pinned CLI only (its version, a "
        "behaviour older CLIs lack); skipped in the compatibility run",
    )
    config.addinivalue_line(
        "markers",
        "same_on_every_cli(reason): what the test checks does not depend on the CLI's "
        "version (the daemon answers by itself, a fake CLI runs, only the client's own "
        "behaviour is checked, or the daemon's own policy around the CLI: the warm pool, "
        "process handling, timeouts); the compatibility run leaves it out",
    )
    config.addinivalue_line(
        "markers",
        "cross_release: holds against the daemon of the release before or after this one "
        "(a client's view: the daemon reached only over its protocol, no exact wording or "
        "version of this release's daemon); tests/cross-release.sh runs these",
    )


_TESTS = Path(__file__).parent
# Test directories of the front ends over the daemon's protocol (see below).
_FRONT_END_TESTS = {"nvim", "acp", "daemon"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if DAEMON_UNDER_TEST:
        # Another release's daemon: only what a client of either release relies on.
        keep(
            config, items, [item.get_closest_marker("cross_release") is not None for item in items]
        )
    if not COMPAT_CLI:
        return
    # Only the tests that run the CLI under test (daemons get it through daemon_env,
    # tests/scripted through `claude`) and whose outcome can depend on its version: the
    # others (unit tests, the docs, doctor and demo, which run the bundled CLI, and those
    # marked same_on_every_cli) would repeat the main run. So would the front ends' tests
    # (Neovim, ACP, the shared daemon): they read the daemon's protocol, and how the
    # daemon reads this CLI's lines is what the daemon's own tests check in this run.
    uses_cli = [
        bool({"daemon_env", "claude"} & set(getattr(item, "fixturenames", ())))
        and item.get_closest_marker("same_on_every_cli") is None
        and not _FRONT_END_TESTS & set(item.path.relative_to(_TESTS).parts[:1])
        for item in items
    ]
    keep(config, items, uses_cli)
    for item in items:
        marker = item.get_closest_marker("pinned_cli")
        if marker:
            reason = marker.args[0] if marker.args else "a fact of the pinned CLI"
            item.add_marker(pytest.mark.skip(reason=f"compatibility run ({COMPAT_CLI}): {reason}"))


def keep(config: pytest.Config, items: list[pytest.Item], kept: list[bool]) -> None:
    """Deselect the ``items`` whose ``kept`` is false."""
    dropped = [item for item, used in zip(items, kept, strict=True) if not used]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item, used in zip(items, kept, strict=True) if used]


def pytest_report_header(config: pytest.Config) -> str:
    if DAEMON_UNDER_TEST:
        return f"daemon under test: {DAEMON_UNDER_TEST}, with the CLI it pins"
    return f"CLI under test: {COMPAT_CLI or 'the pinned one (claude-agent-sdk bundle)'}"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (pyproject's addopts): one more than the CPUs. A test spends
    much of its time waiting for its CLI, daemon or Neovim (one process of the suite keeps
    about 0.6 of a CPU busy), so CPUs + 1 keeps them all busy; at most 8, for memory (each
    test runs a CLI, a daemon and maybe a Neovim)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min((cpus or 1) + 1, 8)


NO_ZYGOTE = "SIDECAR_TEST_NO_ZYGOTE"
"""Set (to anything): every daemon of the run starts directly, as users start it."""


@pytest.fixture(scope="session")
def zygote_socket() -> Iterator[str | None]:
    """This worker's fork server (tests/zygote), or None where it cannot run: another
    release's daemon under test, or no pidfd (Linux before 5.3, other systems)."""
    if DAEMON_UNDER_TEST or not hasattr(os, "pidfd_open") or os.environ.get(NO_ZYGOTE):
        yield None
        return
    with zygote.serving() as socket:
        yield socket


@pytest.fixture(autouse=True)
def daemons_from_zygote(
    request: pytest.FixtureRequest, zygote_socket: str | None
) -> Iterator[None]:
    """The test's daemons are forked by the fork server, unless it is marked
    ``real_daemon_process``."""
    direct = request.node.get_closest_marker("real_daemon_process") is not None
    env.ZYGOTE = None if direct else zygote_socket
    try:
        yield
    finally:
        env.ZYGOTE = None


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    """The stand-in Messages API; tests swap scenarios with ``model.set_scenario``."""
    with ScriptedModel(load_scenario(BASIC_SCENARIO)) as scripted:
        yield scripted


@pytest.fixture
def platform_path(request: pytest.FixtureRequest) -> str:
    """The path this test's daemons take (``tests.env.PLATFORM_PATHS``): a test runs on
    both with ``@both_platform_paths``; otherwise the run's own (``CLAUDE_SIDECAR_PLATFORM``,
    by default native)."""
    return str(getattr(request, "param", os.environ.get(PLATFORM_ENV, "native")))


@pytest.fixture
def daemon_env(home: Path, model: ScriptedModel, platform_path: str) -> dict[str, str]:
    return isolated_env(home, model.url, **{PLATFORM_ENV: platform_path})


@pytest.fixture
async def sidecar_with(daemon_env: dict[str, str]) -> AsyncIterator[StartSidecar]:
    """Starts daemons with the given ``initializationOptions`` (and variables added to
    ``daemon_env``); on teardown each is stopped, none of their CLIs may survive, and
    every channel's ``seq`` must have run without gaps."""
    daemons: list[Sidecar] = []

    async def start(
        options: dict[str, Any],
        *,
        args: tuple[str, ...] = (),
        handlers: Mapping[str, Callable[[Any, Any], Any]] | None = None,
        argv: tuple[str, ...] | None = None,
        **env: str,
    ) -> Sidecar:
        daemon = Sidecar({**daemon_env, **env}, args, argv=argv)
        for method, handler in (handlers or {}).items():
            daemon.client.feature(method)(handler)
        daemons.append(daemon)
        await daemon.start(options)
        return daemon

    yield start
    for daemon in daemons:
        await daemon.stop()
    for daemon in daemons:
        assert await wait_until_dead(daemon.pids) == [], "CLI processes outlived the daemon"
        daemon.assert_seq_contiguous()


@pytest.fixture
async def sidecar(sidecar_with: StartSidecar) -> Sidecar:
    """A daemon with an initialized client, checked on teardown like ``sidecar_with``'s."""
    return await sidecar_with({})
