"""(i) The Swing chat panel of the IntelliJ client while a long answer streams: EDT stalls,
key echo, end on screen.

Runs the ui module's ``StreamingBench`` (editors/intellij/ui/src/test/.../StreamingBench.kt)
through ``editors/intellij/scripts/test.sh``, the client's own test command: Maven builds
core and ui from Maven Central's artifacts (or the local repository's), and the bench runs
under Xvfb when there is no display. The panel gets this checkout's daemon, which runs the
real CLI against the stand-in model; the model streams a ~60 KB markdown answer at full
speed in 20-character deltas (~3,000), which the daemon coalesces every 16 ms (the IDE
plugin's ``coalesceDeltasMs``). The build takes a minute or two before the first turn.

Measured, per turn (the Kotlin file's docstring has the details):

- **stall**: the longest task the EDT ran from the prompt to the end on screen, timed around
  each dispatch by the event queue; wall time, and the EDT thread's CPU time (other
  processes on the cores inflate the wall figure, not the CPU one).
- **key echo**: from the first delta to ``claude/turnEnded`` a key is queued on the EDT for
  the prompt every 25 ms; its echo is the end of the paint that follows its insertion.
  Median and max over the keys typed.
- **end on screen**: from the daemon's send of ``claude/turnEnded`` to the end of the paint
  after which the answer's last line is in the view and scrolled into sight. The daemon runs
  under ``send_clock.py``, which stamps each turnEnded frame as the daemon writes it (on the
  JVM's ``System.nanoTime`` clock), however late the JVM reads it (issue 43: timed from the
  daemon's send); ``listener_lag_ms`` is that send to the panel's listener.

Peer, in the same run, JVM and panel: the cheapest renderer of the stream, each text delta
appended to a plain ``JTextArea`` in the transcript's place (no entry drawn). Each turn opens
a new chat; the first turn of each renderer runs on a cold JVM and is reported apart, the
table shows the median of the warm ones. Targets from issue 25: no stall over 50 ms, median
key echo within a frame (16 ms), end on screen within 100 ms of the daemon's turnEnded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TEST_SH = ROOT / "editors" / "intellij" / "scripts" / "test.sh"


def maven_missing() -> dict[str, Any] | None:
    """``{"unavailable": why}`` when java or mvn is not installed; None when both are."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        return {"unavailable": f"{' and '.join(missing)} not found (OpenJDK 17+, Maven 3.8+)"}
    return None


def bench_command(test: str, *properties: str) -> list[str]:
    """The command that builds the ui module and runs its bench class ``test`` (through the
    client's own test.sh: Xvfb when there is no display) with ``-D`` ``properties``."""
    return [
        "bash",
        str(TEST_SH),
        "-pl",
        "ui",
        "-am",
        f"-Dtest={test}",
        "-Dsurefire.failIfNoSpecifiedTests=false",
        # test.sh runs `verify`: not the standalone app's jar tests (failsafe) here.
        "-DskipITs",
        *properties,
    ]


def run(quick: bool = False) -> dict[str, Any]:
    """Section (i): the panel and the plain text area, same stream, same keys, interleaved."""
    if unavailable := maven_missing():
        return unavailable
    size, rounds = (20_000, 1) if quick else (60_000, 3)
    with tempfile.TemporaryDirectory(prefix="bench-swing-") as tmp:
        out = Path(tmp) / "swing.json"
        command = bench_command(
            "StreamingBench",
            "-Dsidecar.bench=true",
            f"-Dsidecar.bench.chars={size}",
            f"-Dsidecar.bench.rounds={rounds}",
            f"-Dsidecar.bench.out={out}",
        )
        print(
            f"(i) Swing panel: {rounds} warm turn(s) of each renderer after a cold one, "
            f"{size:,} characters (editors/intellij/scripts/test.sh, Maven) ...",
            file=sys.stderr,
            flush=True,
        )
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
        if not out.exists():
            skipped = [line for line in done.stderr.splitlines() if ": SKIP: " in line]
            if done.returncode == 0 and skipped:
                return {"unavailable": skipped[-1].split(": SKIP: ", 1)[1]}
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
            raise RuntimeError(f"the Swing bench gave no figures (exit {done.returncode}):\n{tail}")
        result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> int:
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
