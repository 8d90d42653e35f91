"""Process facts the daemon reports and waits on, from /proc on Linux and from ps and
/dev/fd on the portable path (macOS's), each checked the same way on both."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_sidecar.runtime import host, processes
from claude_sidecar.runtime.host import Host


@pytest.fixture(
    params=[Host("linux"), Host("linux", forced_portable=True)], ids=["native", "portable"]
)
def on(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Host:
    monkeypatch.setattr(host, "HOST", request.param)
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def test_a_running_child_is_listed_and_runs(on: Host, child: subprocess.Popen[bytes]) -> None:
    assert child.pid in processes.children_of(os.getpid())
    assert processes.running(child.pid)


def test_a_child_that_ended_is_neither_listed_nor_running_before_it_is_reaped(
    on: Host, child: subprocess.Popen[bytes]
) -> None:
    child.send_signal(signal.SIGKILL)
    # A zombie until waited for: its end shows in /proc (and ps) without a wait.
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)

    assert child.pid not in processes.children_of(os.getpid())
    assert not processes.running(child.pid)


def test_a_pid_nobody_has_does_not_run(on: Host) -> None:
    assert not processes.running(2**22 + 1)  # above Linux's pid_max


def test_resident_memory_is_current_in_kib(on: Host, child: subprocess.Popen[bytes]) -> None:
    own = processes.rss_kib()

    assert 10_000 < own < 2_000_000, "this Python holds tens of MiB"
    assert 0 < processes.rss_kib(child.pid) < own, "sleep holds far less"


def test_an_open_file_counts_one_descriptor_more(on: Host, tmp_path: Path) -> None:
    before = processes.open_fds()
    with open(tmp_path / "f", "w"):
        assert processes.open_fds() == before + 1
