"""The transport hands stdout over a block of complete lines per read, with no length
limit on a line, and keeps a stderr tail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_sidecar.cli.transport import Transport, pdeathsig_wrapper
from claude_sidecar.runtime import host
from claude_sidecar.runtime.host import PLATFORM_ENV, Host

from tests.harness import pid_alive, wait_until_dead

SCRIPT = r"""
import sys
out = sys.stdout.buffer
out.write(b'{"a": 1}\n')
out.write(b'{"big": "' + b"x" * (20 * 1024 * 1024) + b'"}\n')
out.write(b'partial-')
out.flush()
out.write(b'line\n\n')
out.write(b'no newline at the end')
sys.stderr.write("".join(f"err {i}\n" for i in range(200)))
"""


async def test_lines_have_no_length_limit_and_partial_writes_are_joined(tmp_path: Path) -> None:
    transport = await Transport.spawn(
        [sys.executable, "-c", SCRIPT], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}
    )

    blocks = [block async for block in transport.reads()]
    info = await transport.wait()

    assert all(block.endswith(b"\n") for block in blocks)
    lines = b"".join(blocks).split(b"\n")
    assert lines[0] == b'{"a": 1}'
    assert len(lines[1]) == 20 * 1024 * 1024 + len(b'{"big": ""}')
    assert lines[2:] == [b"partial-line", b"", b"no newline at the end", b""]
    assert (info.code, info.signal) == (0, None)


async def test_stderr_is_drained_into_a_bounded_tail(tmp_path: Path) -> None:
    transport = await Transport.spawn(
        [sys.executable, "-c", SCRIPT], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}
    )
    _ = [block async for block in transport.reads()]
    await transport.wait()

    tail = transport.stderr_tail().splitlines()
    assert tail[-1] == "err 199" and len(tail) == 50


async def test_shutdown_escalates_to_sigkill_for_a_process_that_ignores_eof_and_sigterm(
    tmp_path: Path,
) -> None:
    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    transport = await Transport.spawn(
        [sys.executable, "-c", stubborn], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}
    )
    reads = transport.reads()
    assert await anext(reads) == b"ready\n"

    info = await transport.shutdown(grace=0.2, term_grace=0.2)

    assert info.signal == 9


PARENT = r"""
import asyncio, sys
from claude_sidecar.cli import transport
if sys.argv[1] == "preexec":
    transport.pdeathsig_wrapper = lambda: None
async def main():
    child = await transport.Transport.spawn(
        ["sh", "-c", "echo started; exec sleep 60"], cwd="/", env={"PATH": "/usr/bin:/bin"}
    )
    # The command runs once setpriv has set the death signal and exec'd it: only then is
    # the child tied to this process (under load, a kill before that left it orphaned).
    assert await anext(child.reads()) == b"started\n"
    print(child.pid, flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
"""


@pytest.mark.parametrize("way", ["setpriv", "preexec", "watchdog"])
def test_a_child_dies_with_the_process_that_spawned_it(
    way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked as on Linux's own path even in a run forced onto the portable one.
    monkeypatch.setattr(host, "HOST", Host("linux"))
    pdeathsig_wrapper.cache_clear()
    if way == "setpriv" and pdeathsig_wrapper() is None:
        pytest.fail("setpriv --pdeathsig is not available here: the fast spawn path is untested")
    pdeathsig_wrapper.cache_clear()
    # The watchdog is macOS's way (no PR_SET_PDEATHSIG there), forced here.
    env = {**os.environ, PLATFORM_ENV: "portable" if way == "watchdog" else "native"}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, way], stdout=subprocess.PIPE, text=True, env=env
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert pid_alive(child)

    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while pid_alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)

    survived = pid_alive(child)
    if survived:
        os.kill(child, signal.SIGKILL)
    assert not survived, f"pid {child} outlived its parent ({way})"


async def test_on_the_portable_path_a_clis_tools_end_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its group is then empty: the watchdog may forget it before the group's id comes back.
    monkeypatch.setattr(host, "HOST", Host("linux", forced_portable=True))
    transport = await Transport.spawn(
        ["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin"},
    )
    tool = int(next(iter([block async for block in transport.reads()])))

    info = await transport.wait()

    assert (info.code, info.signal) == (0, None)
    assert await wait_until_dead([tool]) == []
