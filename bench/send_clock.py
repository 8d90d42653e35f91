"""Runs the daemon and notes when it sends each ``claude/turnEnded``: the clock a client's
"end on screen" is timed from (issue 43: measured from the daemon's send, not from when the
client got round to reading it).

    python bench/send_clock.py STAMPS -- claude-sidecar --stdio

The daemon's stdout is read as soon as it writes, on a thread of its own, into a queue that
another thread writes on to this process's stdout: a client that falls behind delays the
writer, never the reading, so each turnEnded frame is stamped when the daemon wrote it (plus
a pipe hop). A stamp is a line of CLOCK_MONOTONIC nanoseconds (``time.monotonic_ns``, the
clock of the JVM's ``System.nanoTime`` on Linux), appended to STAMPS and flushed at once.
stdin and stderr pass through; the daemon's exit code is this process's.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

TURN_ENDED = b'"method":"claude/turnEnded"'


def main(argv: list[str]) -> int:
    """Relay the daemon ``argv[2:]`` (after ``--``), stamping its turnEnded sends in ``argv[0]``."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: send_clock.py STAMPS -- COMMAND...", file=sys.stderr)
        return 2
    stamps = open(argv[0], "ab", buffering=0)  # noqa: SIM115 - open for the process's life
    daemon = subprocess.Popen(argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert daemon.stdin is not None and daemon.stdout is not None
    daemon_in, daemon_out = daemon.stdin, daemon.stdout
    chunks: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def read() -> None:
        carry = b""  # a frame's method split across two reads is still found
        while chunk := os.read(daemon_out.fileno(), 1 << 16):
            now = time.monotonic_ns()
            seen = carry + chunk
            for _ in range(seen.count(TURN_ENDED)):
                stamps.write(b"%d\n" % now)
            carry = seen[-(len(TURN_ENDED) - 1) :]
            chunks.put(chunk)
        chunks.put(b"")

    def write() -> None:
        out = sys.stdout.buffer.fileno()
        while chunk := chunks.get():
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
        os.close(out)

    def pump_stdin() -> None:
        source = sys.stdin.buffer.fileno()
        try:
            while data := os.read(source, 1 << 16):
                daemon_in.write(data)
            daemon_in.close()
        except OSError:
            pass  # the daemon is gone

    threads = [threading.Thread(target=t, daemon=True) for t in (read, write)]
    for t in threads:
        t.start()
    threading.Thread(target=pump_stdin, daemon=True).start()
    code = daemon.wait()
    for t in threads:
        t.join()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
