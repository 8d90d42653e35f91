"""(h) The VS Code client's chat page while a long answer streams: stalls, key echo, end on screen.

Runs the page bench of the VS Code client (``npm run bench:page``:
``editors/vscode/test/webview/streaming.bench.ts``), building the extension first when its
bundles are missing or older than its sources (and ``npm ci`` when ``node_modules`` is). The
page is the extension's own webview (``dist/webview.js`` and ``dist/webview.css`` under its
Content-Security-Policy) in headless Chromium with a scripted host in place of VS Code: the
host sends it the notifications of a ~60 KB markdown answer as the daemon does when it
streams at full speed (~3,000 deltas coalesced into 45 notifications over 670 ms), and a key
is typed into the prompt every 25 ms while it streams.

Measured in the page, per run (the bench's header says exactly how):

- **longest task**: the page thread's longest task (``PerformanceObserver`` ``longtask``,
  which reports tasks of 50 ms or more: 0 when there was none);
- **stall**: how late a repeating 10 ms timer fires (the thread was busy that long), and the
  longest gap between animation frames;
- **key echo**: from a key event's time stamp to the end of the frame that draws it in the
  prompt, median and max over the keys typed before ``claude/turnEnded``;
- **end on screen**: from posting the answer's last notifications (the complete text,
  ``claude/turnEnded``, the footer) to the frame after its end is drawn.
- **CPU**: the CPU time of the page's thread from the first notification to the end on
  screen, and the part of it in style and layout (``Performance.getMetrics`` in thread
  time): the work itself, which other load on the machine does not inflate as it does the
  times above.

Peer, in the same run, browser and page: the cheapest renderer of the same stream, each
delta appended as a text node to one element (sent with a message type of its own, which
the page's handler ignores), the practical limit of drawing a stream on that page. Targets
from issue 25: no stall over 50 ms, median key echo within a frame (16 ms), end on screen
within 100 ms of turnEnded. Headless Chromium with ``--disable-gpu`` draws in software, and the
page here has the renderer thread to itself (in VS Code it shares it with the workbench):
compare the page with its peer, not with the targets alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "editors" / "vscode"
BENCH = VSCODE / "out" / "test" / "webview" / "streaming.bench.cjs"
BUILT = [BENCH, VSCODE / "dist" / "webview.js", VSCODE / "dist" / "webview.css"]
CHROMIUM = Path("/usr/bin/chromium")

# The bench's figures (camelCase) under the names the report uses.
FIGURES = {
    "longestTaskMs": "longest_task_ms",
    "longestStallMs": "longest_stall_ms",
    "longestFrameGapMs": "longest_frame_gap_ms",
    "keyEchoMedianMs": "key_echo_median_ms",
    "keyEchoMaxMs": "key_echo_max_ms",
    "keys": "keys",
    "endOnScreenMs": "end_on_screen_ms",
    "threadCpuMs": "thread_cpu_ms",
    "layoutCpuMs": "layout_cpu_ms",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _newest_source() -> float:
    sources = [VSCODE / "esbuild.mjs", VSCODE / "package-lock.json"]
    for folder in ("src", "test/webview", "test/core"):
        sources += [p for p in (VSCODE / folder).rglob("*") if p.is_file()]
    return max(p.stat().st_mtime for p in sources)


def prepare() -> str | None:
    """Install and build what the bench needs; the reason it cannot run, or None."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "node and npm are not on PATH (Node 20+)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (Debian chromium: editors/vscode/scripts/toolchain.sh)"
    modules = VSCODE / "node_modules" / ".package-lock.json"
    lock = VSCODE / "package-lock.json"
    if not modules.exists() or lock.stat().st_mtime > modules.stat().st_mtime:
        log("(h) npm ci in editors/vscode ...")
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=VSCODE,
            check=True,
            stdout=sys.stderr,
        )
    if (
        not all(p.exists() for p in BUILT)
        or min(p.stat().st_mtime for p in BUILT) < _newest_source()
    ):
        log("(h) building the VS Code extension (node esbuild.mjs) ...")
        subprocess.run(["node", "esbuild.mjs"], cwd=VSCODE, check=True, stdout=sys.stderr)
    return None


def run(quick: bool = False) -> dict[str, Any]:
    """Section (h): the chat page and its text-node peer, same stream, same keys, interleaved."""
    unavailable = prepare()
    if unavailable:
        return {"unavailable": unavailable}
    runs, chars = (1, 20_000) if quick else (3, 60_000)
    log(f"(h) VS Code chat page: {runs} run(s) of a {chars:,}-character answer, and the peer ...")
    done = subprocess.run(
        ["node", str(BENCH), "--runs", str(runs), "--chars", str(chars), "--peer", "--json"],
        cwd=VSCODE,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        timeout=600,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    repeats: dict[str, list[dict[str, Any]]] = {}
    for renderer in measured["renderers"]:
        name = "peer" if renderer["peer"] else "page"
        repeats[name] = [
            {FIGURES[k]: v for k, v in r.items() if k in FIGURES} for r in renderer["runs"]
        ]
    return {
        "answer_chars": measured["answerChars"],
        "notifications": measured["notifications"],
        "stream_ms": measured["streamMs"],
        "key_every_ms": measured["keyEveryMs"],
        "repeats": repeats,
    }


def main() -> int:
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
