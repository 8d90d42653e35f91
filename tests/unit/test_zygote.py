"""The fork server's launcher stands for a daemon as ``python -m claude_sidecar`` would:
the same output and exit code, the test's environment and folder, signals forwarded, and
a killed launcher takes its daemon with it (tests/zygote)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import zygote
from tests.harness import pid_alive

pytestmark = pytest.mark.same_on_every_cli("no CLI runs")


@pytest.fixture(scope="module")
def socket() -> Iterator[str]:
    with zygote.serving() as path:
        yield path


def direct(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "claude_sidecar", *args], env, cwd)


def launched(
    socket: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run(zygote.argv(socket, *args), env, cwd)


def run(
    argv: list[str], env: dict[str, str] | None, cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


def test_a_launched_daemon_prints_and_exits_as_one_started_directly(socket: str) -> None:
    for args in (["--version"], ["no-such-command"]):
        ours, theirs = launched(socket, *args), direct(*args)
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            theirs.returncode,
            theirs.stdout,
            theirs.stderr,
        ), args


def test_a_launched_daemon_runs_in_the_launchers_folder_and_environment(
    socket: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "config")}

    ours = launched(socket, "doctor", "--json", env=env, cwd=tmp_path)

    report = json.loads(ours.stdout)
    assert str(home / "config") in json.dumps(report)
    assert ours.stdout == direct("doctor", "--json", env=env, cwd=tmp_path).stdout


def test_a_signal_sent_to_the_launcher_reaches_the_daemon(socket: str) -> None:
    launcher = subprocess.Popen(
        zygote.argv(socket, "--stdio"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    daemon = zygote.daemon_pid(launcher.pid)

    launcher.send_signal(signal.SIGTERM)

    # As a daemon started directly: ended by the signal.
    assert launcher.wait(30) == -signal.SIGTERM
    assert not pid_alive(daemon)


def test_a_killed_launcher_takes_its_daemon_with_it(socket: str) -> None:
    launcher = subprocess.Popen(
        zygote.argv(socket, "--stdio"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    daemon = zygote.daemon_pid(launcher.pid)

    launcher.kill()
    launcher.wait(30)

    deadline = time.monotonic() + 30
    # Polls: another process's end is no event this one can await.
    while pid_alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(daemon)
