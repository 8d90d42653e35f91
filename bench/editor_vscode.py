"""(h) The VS Code client's chat page while a long answer streams: stalls, key echo, end on screen.

Timed from the daemon's send, with the real daemon and CLI (issue 43): the stand-in model
streams a ~60 KB markdown answer at full speed in 20-character deltas (~3,000), the daemon
coalesces them as the extension asks (``coalesceDeltasMs`` 16), and the daemon runs behind
``editors/vscode/test/webview/timestamp-relay.mjs``, which notes when ``claude/turnEnded``
left it. A key is typed into the prompt every 25 ms while it streams. Two set-ups:

- **page** (``npm run bench:page -- --daemon``: ``test/webview/streaming.bench.ts``): the
  extension's own webview (``dist/webview.js``/``.css`` under its Content-Security-Policy)
  in headless Chromium, fed by the extension's own protocol client (``src/core``) and its
  per-frame feed (``src/extension/page-feed.ts``) in Node, in place of VS Code's extension
  host and webview messaging. Peer, in the same run, browser and page: each event as it
  comes, every delta appended as a text node to one element (the practical limit of drawing
  a stream on that page).
- **in VS Code** (``test/vscode/page-bench.mjs``, when the extension's toolchain is
  installed: ``editors/vscode/scripts/toolchain.sh``): the extension in code-server's VS
  Code, its real extension host and webview messaging, in headless Chromium, twice: as
  code-server serves webviews (from the workbench's own origin: the page runs on the
  workbench's renderer thread; where issue 43's figures were taken), and on a site of their
  own (``--webview-site``), as VS Code desktop (a ``vscode-webview://`` origin per webview)
  and vscode.dev (``*.vscode-cdn.net``) serve them: Chromium's site isolation then runs the
  page in a renderer process of its own, its thread not the workbench's. Its peer, in each:
  the same extension and feed with the page replaced by ``test/webview/peer-page.ts`` (each
  delta appended as a text node, the end followed, no markdown): what drawing the stream
  costs in VS Code's webview on this machine at least.

Measured in the page, per run (each bench's header says exactly how):

- **longest task**: the page thread's longest task (``PerformanceObserver`` ``longtask``,
  which reports tasks of 50 ms or more: 0 when there was none);
- **stall**: how late a repeating 10 ms timer fires (the thread was busy that long), and the
  longest gap between animation frames;
- **key echo**: from a key event's time stamp to the end of the frame that draws it in the
  prompt, median and max over the keys typed before ``claude/turnEnded`` reached the page;
- **end on screen**: from the daemon's send of ``claude/turnEnded`` to the frame after the
  one that drew the answer's end and its footer; and when ``turnEnded`` reached the page
  (in VS Code also when the extension host posted it: the host's share, the page's frames
  from its arrival until the end was drawn and the size of the message that brought it:
  figures the machine's load does not change);
- **CPU**: the page thread's CPU time from the first notification to the end on screen (in
  VS Code: the page's renderer thread's, which the workbench shares in code-server, from
  the prompt's send), and
  the part of it in style and layout (thread time: what the machine's other load does not
  inflate as it does the times above); in VS Code also the CPU time of the extension host,
  the renderer process (all its threads) and the browser's other processes (its software
  compositor draws every frame) in the same span.

Targets from issues 25 and 43: no stall over 50 ms, median key echo within a frame (16 ms),
end on screen within 100 ms of the daemon's ``claude/turnEnded``. Headless Chromium with
``--disable-gpu`` draws in software; everything (daemon, CLI, browser, code-server) shares
the machine's cores, as a user's does.
"""

from __future__ import annotations

import json
import os
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
IN_VSCODE = VSCODE / "test" / "vscode" / "page-bench.mjs"


def _toolchain() -> Path | None:
    """The extension's VS Code toolchain (code-server), if installed."""
    folder = Path(os.environ.get("VSCODE_TOOLCHAIN_DIR") or VSCODE / ".toolchain")
    return folder if (folder / "env.sh").exists() else None


# The bench's figures (camelCase) under the names the report uses.
FIGURES = {
    "longestTaskMs": "longest_task_ms",
    "longestStallMs": "longest_stall_ms",
    "longestFrameGapMs": "longest_frame_gap_ms",
    "keyEchoMedianMs": "key_echo_median_ms",
    "keyEchoMaxMs": "key_echo_max_ms",
    "keys": "keys",
    "endOnScreenMs": "end_on_screen_ms",
    "endArrivedMs": "end_arrived_ms",
    "endPostedMs": "end_posted_ms",
    "endFrames": "end_frames",
    "endMessageBytes": "end_message_bytes",
    "messages": "messages",
    "threadCpuMs": "thread_cpu_ms",
    "layoutCpuMs": "layout_cpu_ms",
    "extensionHostCpuMs": "extension_host_cpu_ms",
    "rendererCpuMs": "renderer_cpu_ms",
    "browserCpuMs": "browser_cpu_ms",
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


def _figures(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{FIGURES[k]: v for k, v in r.items() if k in FIGURES} for r in runs]


def run(quick: bool = False) -> dict[str, Any]:
    """Section (h): the page and its text-node peer, then the page in VS Code."""
    unavailable = prepare()
    if unavailable:
        return {"unavailable": unavailable}
    runs, chars = (1, 20_000) if quick else (3, 60_000)
    log(f"(h) VS Code chat page: {runs} run(s) of a {chars:,}-character answer, and the peer ...")
    sizes = ["--runs", str(runs), "--chars", str(chars)]
    done = subprocess.run(
        ["node", str(BENCH), "--daemon", "--peer", "--json", *sizes],
        cwd=VSCODE,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        timeout=900,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    repeats: dict[str, list[dict[str, Any]]] = {}
    for renderer in measured["renderers"]:
        name = "peer" if renderer["peer"] else "page"
        repeats[name] = _figures(renderer["runs"])
    result: dict[str, Any] = {"answer_chars": measured["answerChars"], "repeats": repeats}
    toolchain = _toolchain()
    if toolchain is None:
        result["in_vscode_unavailable"] = "no VS Code toolchain (scripts/toolchain.sh)"
        return result
    # code-server's webviews share the workbench's renderer thread; VS Code desktop's and
    # vscode.dev's run in a renderer of their own (a site of their own): both, in turn.
    for where, flags in (("vscode", []), ("vscode_site", ["--webview-site"])):
        own = ", webviews on a site of their own" if flags else ""
        log(f"(h) the same in VS Code (code-server{own}): {runs} run(s), and its peer ...")
        done = subprocess.run(
            ["node", str(IN_VSCODE), "--json", "--peer", *flags, *sizes],
            cwd=VSCODE,
            check=True,
            stdout=subprocess.PIPE,
            text=True,
            timeout=900,
            env={**os.environ, "VSCODE_TOOLCHAIN_DIR": str(toolchain)},
        )
        in_vscode = json.loads(done.stdout.strip().splitlines()[-1])
        for build in in_vscode["builds"]:
            repeats[f"{where}_peer" if build["extension"] == "peer" else where] = _figures(
                build["runs"]
            )
    return result


def main() -> int:
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
