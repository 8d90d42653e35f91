"""The fork server's launcher stands for a daemon as ``python -m claude_sidecar`` would:
the same output and exit code, the test's environment and folder, signals forwarded, and
a killed launcher takes its daemon with it (tests/zygote)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket as socket_module
import struct
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


@contextlib.contextmanager
def command_server(folder: Path) -> Iterator[tuple[Path, int]]:
    """A server serving in ``folder`` as tests/zygote/command.sh starts it for the editor
    suites: a shell's background job, SIGINT and SIGQUIT ignored. Its command's path and
    its pid."""
    folder.mkdir()

    def as_a_background_job() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGQUIT, signal.SIG_IGN)

    server = subprocess.Popen(
        [sys.executable, str(zygote.LAUNCHER.with_name("server.py")), "--in", str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        preexec_fn=as_a_background_job,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        assert server.stdout.readline() == b"ready\n"
        yield folder / "claude-sidecar", server.pid
    finally:
        server.stdin.close()
        server.wait(30)


def test_the_servers_command_stands_for_the_console_script_until_the_server_ends(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "zygote"
    with command_server(folder) as (command, _):
        scenario = tmp_path / "broken.json"
        scenario.write_text("not a scenario")
        ours = run([str(command), "--version"], None, None)
        model = run([str(command), "scripted-model", "--scenario", str(scenario)], None, None)
        theirs = run([sys.executable, "-m", "claude_sidecar", "--version"], None, None)

    assert (ours.returncode, ours.stdout) == (0, theirs.stdout)
    assert model.returncode != 0 and "broken.json" in model.stderr, model.stderr
    assert not folder.exists()


def test_a_daemon_of_a_server_started_as_a_background_job_still_ends_on_sigint(
    tmp_path: Path,
) -> None:
    # The editor suites stop their stand-in model with SIGINT: a child that kept the
    # server's ignored SIGINT ran on, and the suite waited for it.
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"rules": []}))

    def interrupted(command: list[str]) -> tuple[str, int]:
        model = subprocess.Popen(
            [*command, "scripted-model", "--scenario", str(scenario), "--port", "0"],
            stderr=subprocess.PIPE,
            text=True,
            # As Node starts it (libuv sets every signal to its default in the child); a
            # test worker of xdist ignores SIGINT, which a child would keep.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert model.stderr is not None
        listening = model.stderr.readline()
        model.send_signal(signal.SIGINT)
        return listening, model.wait(30)

    with command_server(tmp_path / "zygote") as (command, _):
        listening, ended = interrupted([str(command)])

    assert "listening on http://" in listening
    # Ended (not left running): the model's own end of an interrupt, or by the signal
    # itself when it came before the model was ready for it, as a direct start ends.
    assert ended in (0, -signal.SIGINT)


def test_a_launcher_gone_before_it_learns_the_pid_ends_its_daemon_and_not_the_server(
    tmp_path: Path,
) -> None:
    # A launcher killed right after its request (a test ending as its daemon starts) once
    # ended the server with a BrokenPipeError: every later daemon of that suite failed.
    with command_server(tmp_path / "zygote") as (command, server):
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        body = json.dumps(
            {"argv": ["--stdio"], "env": dict(os.environ), "cwd": str(tmp_path), "umask": 0o22}
        ).encode()
        # Stopped, the server reads the request only once the launcher is gone: the order
        # the race produced, on cue.
        os.kill(server, signal.SIGSTOP)
        try:
            with socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM) as s:
                s.connect(str(command.with_name("s")))
                socket_module.send_fds(s, [struct.pack("!I", len(body))], [stdin_r, stdout_w, 2])
                s.sendall(body)
        finally:
            os.kill(server, signal.SIGCONT)
        os.close(stdin_r)
        os.close(stdout_w)

        # The daemon held the only other end of its stdout: an end of file says it is gone
        # (its stdin, still open here, would have kept it running).
        ready, _, _ = select.select([stdout_r], [], [], 30)
        assert ready, "the daemon of the launcher that went is still running"
        assert os.read(stdout_r, 1) == b""
        served = run([str(command), "--version"], None, None)
        os.close(stdin_w)
        os.close(stdout_r)

    assert served.returncode == 0, served.stderr
