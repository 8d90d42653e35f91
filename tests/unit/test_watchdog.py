"""The watchdog (macOS's guard, where PR_SET_PDEATHSIG is missing) kills every process
group enrolled with it once the daemon's end of its pipe closes, however the daemon ended;
a CLI is enrolled before it runs, so one started just before the daemon died is killed too."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator

import pytest
from claude_sidecar.cli.watchdog import Watchdog

from tests.harness import pid_alive

# A CLI with a tool of its own in its process group: prints the tool's pid, then waits.
CLI_WITH_A_TOOL = ["sh", "-c", "sleep 60 & echo $!; wait"]


def wait_ended(pid: int) -> bool:
    """Whether ``pid`` ends within 30 s (a hang guard: no event says it has)."""
    deadline = time.monotonic() + 30
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not pid_alive(pid)


@pytest.fixture
def watchdog() -> Iterator[Watchdog]:
    started = Watchdog.start()
    yield started
    with contextlib.suppress(OSError):  # closed by the test
        started.close()


def test_the_daemons_end_closing_kills_each_enrolled_cli_and_its_group(
    watchdog: Watchdog,
) -> None:
    command, fds = watchdog.command(CLI_WITH_A_TOOL)
    cli = subprocess.Popen(
        command, pass_fds=fds, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert cli.stdout is not None
    tool = int(cli.stdout.readline())

    watchdog.close()  # as the kernel does when the daemon is killed

    assert cli.wait(30) == -9
    assert wait_ended(tool), "the CLI's tool dies with its group"


def test_a_cli_started_just_before_the_daemon_died_is_killed_too(
    watchdog: Watchdog,
) -> None:
    command, fds = watchdog.command(["sleep", "60"])
    cli = subprocess.Popen(command, pass_fds=fds, start_new_session=True)
    # The daemon's end closes before the CLI has run (PR_SET_PDEATHSIG's window: killed
    # between the fork and the child's prctl, the CLI would be orphaned).
    watchdog.close()

    assert cli.wait(30) == -9


def test_a_group_the_daemon_killed_itself_is_forgotten(watchdog: Watchdog) -> None:
    command, fds = watchdog.command(["sh", "-c", "echo started; exec sleep 60"])
    cli = subprocess.Popen(
        command, pass_fds=fds, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert cli.stdout is not None
    assert cli.stdout.readline() == "started\n"  # enrolled: it runs
    # The daemon released it; another process later taking the same group id is not killed.
    watchdog.release(cli.pid)
    watchdog.close()

    assert wait_ended(watchdog.pid), "the watchdog ends with the daemon"
    survived = pid_alive(cli.pid)
    cli.kill()
    assert survived
