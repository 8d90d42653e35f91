"""The transport splits stdout into batches of lines with no length limit and keeps a stderr tail."""

from __future__ import annotations

import sys

from claude_sidecar.transport import Transport

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


async def test_lines_have_no_length_limit_and_partial_writes_are_joined(tmp_path) -> None:
    transport = await Transport.spawn([sys.executable, "-c", SCRIPT], cwd=str(tmp_path),
                                      env={"PATH": "/usr/bin:/bin"})

    lines = [line async for batch in transport.batches() for line in batch]
    info = await transport.wait()

    assert lines[0] == b'{"a": 1}'
    assert len(lines[1]) == 20 * 1024 * 1024 + len(b'{"big": ""}')
    assert lines[2:] == [b"partial-line", b"", b"no newline at the end"]
    assert (info.code, info.signal) == (0, None)


async def test_stderr_is_drained_into_a_bounded_tail(tmp_path) -> None:
    transport = await Transport.spawn([sys.executable, "-c", SCRIPT], cwd=str(tmp_path),
                                      env={"PATH": "/usr/bin:/bin"})
    _ = [batch async for batch in transport.batches()]
    await transport.wait()

    tail = transport.stderr_tail().splitlines()
    assert tail[-1] == "err 199" and len(tail) == 50


async def test_shutdown_escalates_to_sigkill_for_a_process_that_ignores_eof_and_sigterm(
        tmp_path) -> None:
    stubborn = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)")
    transport = await Transport.spawn([sys.executable, "-c", stubborn], cwd=str(tmp_path),
                                      env={"PATH": "/usr/bin:/bin"})
    batches = transport.batches()
    assert await anext(batches) == [b"ready"]

    info = await transport.shutdown(grace=0.2, term_grace=0.2)

    assert info.signal == 9
