"""(o) The VS Code client while 8 chats stream at once with the Claude Chats view open: does
its extension host keep up, and its window?

overview.py's scenario in a real VS Code: the synthetic CLI (synthetic_cli.py) streams RATE
deltas a second for SECONDS in each of CHATS chats, all at once, through the extension's own
daemon (``claudeSidecar.cliPath``). ``editors/vscode/test/vscode/chats-bench.mjs`` runs it
in code-server's VS Code in headless Chromium (the extension-test route): the chats are
opened with "Claude: New Chat" (tabs of one group, the last in front), the Claude Chats view
is shown, and ``test/vscode/chats.bench.ts`` in the extension host sends the prompts. Over
the span from the sends to the last turn's end:

- the extension host: how late a repeating 10 ms timer fired (max, p95, p50), the
  notifications it handled (per second; ``claude/delta`` among them, the Chats view's
  ``claude/channelsChanged``) and how often the view's tree was told to redraw;
- the workbench's page (the renderer's main thread, which the chat webviews share): its
  longest task (``longtask``, 50 ms or more) and how late a 10 ms timer fired there.

Once with the Chats view in the side bar, once with the Explorer instead (what the view
costs), and once with one chat streaming, the view open (what the other seven cost).
Headless Chromium with ``--disable-gpu`` draws in software: the page's figures are an upper
bound. Everything shares the machine's cores; the load average is in the result.

Run: ``uv run python bench/overview_vscode.py [--chats 8] [--rate 200] [--seconds 10]``.
Nothing asserts a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import editor_vscode
import synthetic_cli

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "editors" / "vscode"
BENCH = VSCODE / "test" / "vscode" / "chats-bench.mjs"


def run(chats: int = 8, rate: float = 200, seconds: float = 10) -> dict[str, Any]:
    """Both rounds (the Chats view shown, then the Explorer), their figures as measured."""
    unavailable = editor_vscode.prepare()
    toolchain = editor_vscode._toolchain()
    if unavailable is None and toolchain is None:
        unavailable = "no VS Code toolchain (editors/vscode/scripts/toolchain.sh)"
    if unavailable:
        return {"unavailable": unavailable}
    # The bench's own entry (out/test/vscode/chats.bench.js) is built with the rest.
    subprocess.run(["node", "esbuild.mjs"], cwd=VSCODE, check=True, stdout=sys.stderr)
    result: dict[str, Any] = {"chats": chats, "rate": rate, "seconds": seconds, "rounds": {}}
    with tempfile.TemporaryDirectory(prefix="bench-overview-vscode-") as tmp:
        cli = synthetic_cli.wrapper(tmp)
        rounds: tuple[tuple[str, int, list[str]], ...] = (
            ("view", chats, []),
            ("explorer", chats, ["--no-view"]),
            ("one chat", 1, []),
        )
        for name, count, extra in rounds:
            editor_vscode.log(f"(o) {count} chat(s) streaming in VS Code: {name} ...")
            load = os.getloadavg()[0]
            done = subprocess.run(
                [
                    "node",
                    str(BENCH),
                    "--cli",
                    cli,
                    "--chats",
                    str(count),
                    "--rate",
                    str(rate),
                    "--seconds",
                    str(seconds),
                    "--json",
                    *extra,
                ],
                cwd=VSCODE,
                check=True,
                stdout=subprocess.PIPE,
                text=True,
                timeout=seconds + 600,
                env={**os.environ, "VSCODE_TOOLCHAIN_DIR": str(toolchain)},
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            figures["loadavg_before"] = load
            result["rounds"][name] = figures
    return result


def format_o(result: dict[str, Any]) -> str:
    """The figures as a few lines."""
    if "unavailable" in result:
        return f"(o) VS Code while chats stream: not run ({result['unavailable']})"
    lines = [
        f"(o) VS Code while {result['chats']} chats stream {result['rate']:.0f} deltas/s for "
        f"{result['seconds']:.0f} s (synthetic CLI, the extension's own daemon, code-server in "
        "headless Chromium):"
    ]
    sides = {
        "view": "Chats view open",
        "explorer": "Explorer instead",
        "one chat": "1 chat streaming, Chats view open",
    }
    for name, r in result["rounds"].items():
        lines += [
            f"  {sides[name]} ({r['spanS']:.1f} s, load average {r['loadavg_before']:.1f} before):",
            f"    extension host: 10 ms timer late by max {r['hostLagMaxMs']} ms, p95 "
            f"{r['hostLagP95Ms']} ms, p50 {r['hostLagP50Ms']} ms; {r['notifications']} "
            f"notifications ({r['notificationsPerS']}/s, {r['deltas']} claude/delta), "
            f"{r['channelsChanged']} claude/channelsChanged, tree redrawn {r['treeRedraws']} times",
            f"    page: longest task {r['pageLongestTaskMs']} ms ({r['pageLongTasks']} of 50 ms or "
            f"more; workbench {r['pageLongestWorkbenchTaskMs']} ms, chat page "
            f"{r['pageLongestFrameTaskMs']} ms), 10 ms timer late by max "
            f"{r['pageTimerLateMaxMs']} ms, p95 {r['pageTimerLateP95Ms']} ms",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    result = run(args.chats, args.rate, args.seconds)
    print(format_o(result))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "overview_vscode.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
