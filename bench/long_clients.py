"""(l), per client: the VS Code page and the Swing panel opening a long session and scrolling
to its first prompt, at the sizes the daemon's figures are taken at.

Each client's own long-session bench runs the real daemon and CLI in a HOME of its own, with
a session grown to the size (VS Code: ``editors/vscode/test/vscode/page-bench.mjs --long``,
from ``bench/grow_session.py``; Swing: the ui module's ``LongSessionBench`` through
``editors/intellij/scripts/test.sh``, from ``tests/repeated_session.py``); both repeat a short
real session's turns, so a size means the same number of entries of the same kinds. Their
headers say exactly what is timed; in short:

- **VS Code** (code-server's VS Code in headless Chromium): from the daemon's send of the
  resume's answer to the frame that shows the last entry; the renderer thread's longest task
  while opening, then while the chat is scrolled to its top (the scroll bar set to 0 again and
  again, a page at a time, at most ``scroll_s``); as code-server serves webviews (the page on
  the workbench's thread), then on a site of their own (the page on a thread of its own, as
  in VS Code desktop and vscode.dev).
- **Swing** (under Xvfb): from the resume to the paint that shows the last entry; the EDT's
  longest task (wall and CPU) while opening, then while the mouse wheel turns up to the first
  entry.

A client whose toolchain is missing is reported as unavailable, with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import editor_swing
import editor_vscode

ROOT = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _in_order(rows: list[dict[str, Any]], sizes: list[int]) -> list[dict[str, Any]]:
    """A bench's rows, one per size in the order asked for (each rounds a size up to whole
    copies of the seed's turns, so a row's own entry count may be a little more)."""
    if len(rows) != len(sizes):
        raise RuntimeError(f"{len(rows)} rows of figures for {len(sizes)} sizes")
    return rows


def vscode(sizes: list[int], scroll_s: float, own_site: bool = False) -> dict[str, Any]:
    """The VS Code page at each size: ``{"sizes": [figures per size]}`` or ``{"unavailable"}``;
    ``own_site``: the webviews on a site of their own (their own renderer thread, as VS Code
    desktop and vscode.dev run them; code-server's share the workbench's)."""
    unavailable = editor_vscode.prepare()
    toolchain = editor_vscode._toolchain()
    if unavailable or toolchain is None:
        return {"unavailable": unavailable or "no VS Code toolchain (scripts/toolchain.sh)"}
    where = ", webviews on a site of their own" if own_site else ""
    listed = ", ".join(f"{s:,}" for s in sizes)
    log(f"(l) VS Code{where}: {listed} entries (page-bench.mjs --long) ...")
    done = subprocess.run(
        [
            "node",
            str(editor_vscode.IN_VSCODE),
            "--long",
            ",".join(map(str, sizes)),
            "--runs",
            "1",
            "--scroll-s",
            str(int(scroll_s)),
            "--json",
            *(["--webview-site"] if own_site else []),
        ],
        cwd=editor_vscode.VSCODE,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        timeout=600 + len(sizes) * (scroll_s + 300),
        env={**os.environ, "VSCODE_TOOLCHAIN_DIR": str(toolchain)},
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])["long"]
    return {"sizes": _in_order([row["runs"][0] for row in measured], sizes)}


def swing(sizes: list[int]) -> dict[str, Any]:
    """The Swing panel at each size: ``{"sizes": [figures per size]}`` or ``{"unavailable"}``."""
    if unavailable := editor_swing.maven_missing():
        return unavailable
    log(f"(l) Swing: {', '.join(f'{s:,}' for s in sizes)} entries (LongSessionBench, Maven) ...")
    with tempfile.TemporaryDirectory(prefix="bench-long-swing-") as tmp:
        out = Path(tmp) / "long.json"
        done = subprocess.run(
            editor_swing.bench_command(
                "LongSessionBench",
                "-Dsidecar.bench.long=true",
                f"-Dsidecar.bench.sizes={','.join(map(str, sizes))}",
                "-Dsidecar.bench.modes=paged",
                f"-Dsidecar.bench.out={out}",
            ),
            capture_output=True,
            text=True,
            timeout=1800 + len(sizes) * 600,
            check=False,
        )
        if not out.exists():
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
            raise RuntimeError(f"the Swing long-session bench gave no figures:\n{tail}")
        rows: list[dict[str, Any]] = json.loads(out.read_text())
    return {"sizes": _in_order(rows, sizes)}
