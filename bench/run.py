"""The benchmark suite: every figure side by side with its peer, measured in the same run.

Run: ``uv run python bench/run.py [--quick] [--only a,b,c,d,e,f,g,h,i,j,k,l,m,n,o]``

Prints one table per section on stdout (progress goes to stderr) and writes everything
measured, every repeat included, as JSON to ``bench/results/<timestamp>.json`` and
``bench/results/latest.json``. ``--quick`` shrinks every section (a-f in < 60 s; the
editor sections (g-i) build their clients first, minutes the first time); the normal
run of a-f takes 1.5-3 minutes. Figures depend on the machine and on whatever else runs
on it: compare a figure with its peer in the same run, never with a fixed number.
Nothing here asserts a figure; a section fails only if something was lost or broke.

Sections (each module's docstring says exactly how it measures):

(a) relay.py: relay throughput, ``claude/delta`` notifications/s arriving at a JSON-RPC
    client while synthetic CLIs stream at full speed (1 channel x 100k deltas, 8 x 25k at
    once); peers: the Python SDK's ClaudeSDKClient on the same CLI, and a minimal msgspec
    relay (the practical limit); also CPU time per delta; and with delta coalescing
    (``coalesceDeltasMs``) on vs off: notifications/s and characters/s.
(b) relay.py: added latency from the CLI writing a delta line to the client reading the
    notification, p50/p99/max, 8 channels x 200 deltas/s; peer: the msgspec relay; and
    the same with coalescing on.
(c) memory.py: the daemon's VmRSS/VmHWM idle and with 16 channels after streaming;
    peer: a Python process with the SDK and 16 ClaudeSDKClient.
(d) first_token.py (``run_all``): time to first token with the real CLI; peer: the SDK.
(e) file_updated.py: ``claude/fileUpdated`` arrival minus the file's mtime for an Edit
    of a 10,000-line file by the real CLI; peer row: the same on a 10-line file.
(f) per_line.py: CPU per CLI line on the relay's hot path, in one process (no pipes, no
    scheduling): the daemon's routing, numbering, encoding and buffered write against the
    msgspec relay's route, on the same delta lines, interleaved.
(g) editor_nvim.py: the Neovim client (embedded, this module its UI) while a ~60 KB
    markdown answer streams at full speed: the longest UI-thread stall, key echo while it
    streams, the end on screen after turnEnded; peer: a plain-buffer renderer of the same
    stream in the same editor.
(h) editor_vscode.py: the VS Code client's chat page while the same answer streams from the
    real daemon and CLI and keys are typed into the prompt, timed from the daemon's send: its
    webview in headless Chromium fed by the extension's client (``npm run bench:page --
    --daemon``, built first if needed) and, with the extension's toolchain installed, inside
    code-server's VS Code: the longest task and stall of the page's thread, key echo while it
    streams, the end on screen after the daemon's turnEnded, the thread's CPU time; peer:
    each delta appended as a text node on the same page.
(i) editor_swing.py: the IntelliJ client's Swing panel (under Xvfb, built with Maven) while
    the same kind of answer streams: the longest EDT stall (wall and CPU), key echo while it
    streams, the end on screen after the daemon sent turnEnded (bench/send_clock.py stamps
    the daemon's sends), warm and on a cold JVM; peer: each delta
    appended to a plain JTextArea in the same panel and JVM.
(j) acp_peer.py: ``claude-sidecar acp`` against claude-agent-acp (npm, on the same CLI and
    stand-in model), driven by the ACP Python SDK's client side: ``session/new``, new
    session -> first ``agent_message_chunk`` (the agent's first session and later ones),
    warm turn -> first chunk, RSS of the agent's process tree per session.
(k) shared.py: the shared daemon (``serve``, clients through ``connect``): notifications/s
    at each of 1 and 4 clients attached to one streaming chat, time to catch up after
    10,000 missed notifications (``claude/attach`` with ``afterSeq``), VmRSS with the
    replay window; peers: the private daemon (``--stdio``) and one client, same run.
(l) long_session.py: a real session grown to 1k, 10k and 100k entries (``--quick``: 100,
    1k, 10k), 99 small sessions beside it: the daemon's ``claude/newChannel`` ``resume``
    against the CLI alone resuming the same file (until its ``initialize`` answer), the time
    until the last page of the conversation is in the client's hands (a paged
    ``claude/getTranscript`` when the daemon has ``transcriptPaging``, else the whole one),
    ``claude/getHistory`` time and size, ``claude/listSessions`` of the folder (cold and
    cached), the daemon's VmRSS after the resume, the Neovim client from ``:ClaudeSessions``
    until the conversation's end is on screen and its longest main-loop stall, then scrolled
    to its first prompt (``gg`` a page at a time), the same for the VS Code page and the
    Swing panel (long_clients.py: each client's own long-session bench); and each figure's
    growth from the smallest size to the largest. The normal run takes 20-40 minutes on two
    cores (100k entries is a ~185 MB file; each client scrolls up for 120 s at most).
(m) overview.py: the overview of every chat (``claude/watchChannels``) while 8 chats stream
    200 deltas/s for 10 s on the shared daemon (synthetic CLI): ``claude/channelsChanged``
    per second and their bytes at the watching client, beside the editor's deltas, and how
    late the overview hears of a chat going running and idle.
(n) overview_clients.py: the same load watched by each client's list of chats, Neovim with
    ``:ClaudeAgents`` open and the Swing app with "All chats" open (under Xvfb, built with
    Maven): the longest main-loop or EDT stall (with the CPU time it used: a stall without
    CPU waited for a core), the stalls over 50 ms, how often the list was updated and
    redrawn, each beside a window as long with the chats idle; the two side by side.
(o) overview_vscode.py: the same 8 chats streaming in the VS Code client, in code-server with
    the Claude Chats view open (and with the Explorer instead): the extension host's
    lateness of a 10 ms timer (max, p95), the notifications it handled per second, and the
    window's longest task and timer lateness.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rpc_client import kill_all

RESULTS = Path(__file__).resolve().parent / "results"
NA_COALESCE = "n/a (coalescing not available)"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ------------------------------------------------------------ formatting


def num(value: Any, digits: int = 0) -> str:
    """A figure for the table: thousands separated; ``digits`` decimals (0: whole
    numbers from 100 up, one decimal below)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if digits == 0:
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"
    return f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or not b:
        return "-"
    r = a / b
    return f"{r:.1f}" if r >= 10 else f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def table(title: str, columns: list[str], rows: list[list[str]]) -> str:
    cells = [columns, *rows]
    widths = [max(len(row[i]) if i < len(row) else 0 for row in cells) for i in range(len(columns))]
    lines = [title]
    for row in cells:
        parts = [row[0].ljust(widths[0])]
        parts += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=False)]
        lines.append("  " + "  ".join(parts).rstrip())
    return "\n".join(lines)


def _paired_detail(paired: dict[str, Any], key: str) -> list[str]:
    """The range of a paired ratio and its medians by which peer ran first."""
    low, high = paired.get(f"{key}_range") or (None, None)
    by_order = [(paired.get(order) or {}).get(key) for order in ("daemon_first", "relay_first")]
    return [
        f"{num(low, 2)}-{num(high, 2)}" if low is not None else "-",
        *(num(figure, 2) for figure in by_order),
    ]


def format_a(a: dict[str, Any]) -> str:
    rows = []
    coalesce_rows = []
    for config in a["configs"]:
        name = f"{config['channels']} ch x {config['deltas_per_channel']:,}"
        d, s, r = (config.get(k) or {} for k in ("daemon", "sdk", "relay"))
        paired = config.get("paired") or {}
        rows.append(
            [
                f"{name}: msg/s",
                num(d.get("per_s")),
                num(s.get("per_s")),
                num(r.get("per_s")),
                ratio(d.get("per_s"), s.get("per_s")),
                ratio(d.get("per_s"), r.get("per_s")),
                num(paired.get("per_s"), 2),
                *_paired_detail(paired, "per_s"),
            ]
        )
        rows.append(
            [
                f"{name}: CPU us/delta",
                num(d.get("cpu_us_per_delta"), 1),
                num(s.get("cpu_us_per_delta"), 1),
                num(r.get("cpu_us_per_delta"), 1),
                ratio(d.get("cpu_us_per_delta"), s.get("cpu_us_per_delta")),
                ratio(d.get("cpu_us_per_delta"), r.get("cpu_us_per_delta")),
                num(paired.get("cpu"), 2),
                *_paired_detail(paired, "cpu"),
            ]
        )
        c = config.get("daemon_coalesced")
        if config.get("coalescing") != "on" or not c:
            coalesce_rows.append(
                [f"{name}: notifications/s", NA_COALESCE, num(d.get("per_s")), "-"]
            )
            coalesce_rows.append([f"{name}: chars/s", NA_COALESCE, num(d.get("chars_per_s")), "-"])
            continue
        coalesce_rows.append(
            [
                f"{name}: notifications/s",
                num(c["per_s"]),
                num(d.get("per_s")),
                ratio(c["per_s"], d.get("per_s")),
            ]
        )
        coalesce_rows.append(
            [
                f"{name}: chars/s",
                num(c["chars_per_s"]),
                num(d.get("chars_per_s")),
                ratio(c["chars_per_s"], d.get("chars_per_s")),
            ]
        )
        coalesce_rows.append(
            [
                f"{name}: CPU us/delta",
                num(c["cpu_us_per_delta"], 1),
                num(d.get("cpu_us_per_delta"), 1),
                ratio(c["cpu_us_per_delta"], d.get("cpu_us_per_delta")),
            ]
        )
    runs = len(a["configs"][0]["daemon"]["runs"]) if a["configs"] else 0
    first = table(
        f"(a) relay throughput: claude/delta at the client, median of {runs} "
        f"(client ceiling {num(a['client_ceiling_frames_per_s'])} frames/s; paired: the "
        "median of each repeat's daemon/relay, its range, and its median over the repeats "
        "the daemon ran first and over those the relay ran first)",
        [
            "",
            "daemon",
            "SDK",
            "relay",
            "daemon/SDK",
            "daemon/relay",
            "paired",
            "range",
            "daemon 1st",
            "relay 1st",
        ],
        rows,
    )
    second = table(
        f"(a) with delta coalescing (coalesceDeltasMs {a['coalesce_ms']}) vs off",
        ["", f"daemon {a['coalesce_ms']} ms", "daemon off", "on/off"],
        coalesce_rows,
    )
    return first + "\n" + second


def format_b(b: dict[str, Any]) -> str:
    d: dict[str, Any] = b["daemon"]
    r: dict[str, Any] = b["relay"]
    coalesced: dict[str, Any] | None = (
        b.get("daemon_coalesced") if b.get("coalescing") == "on" else None
    )
    rows = []
    for key, label in [
        ("p50_ms", "p50 ms"),
        ("p99_ms", "p99 ms"),
        ("max_ms", "max ms"),
        ("notifications", "notifications"),
        ("cpu_s", "CPU s"),
    ]:
        digits = 0 if key == "notifications" else 2
        rows.append(
            [
                label,
                num(d[key], digits),
                num(r[key], digits),
                ratio(d[key], r[key]),
                NA_COALESCE if coalesced is None else num(coalesced[key], digits),
            ]
        )
    return table(
        f"(b) added latency CLI line -> client, {b['channels']} ch x "
        f"{b['rate_per_channel']} deltas/s x {b['seconds']} s",
        ["", "daemon", "relay", "daemon/relay", f"daemon coalesce {b['coalesce_ms']} ms"],
        rows,
    )


def format_c(c: dict[str, Any]) -> str:
    d, s = c["daemon"], c["sdk"]
    rows = []
    for state, label in [
        ("idle", "idle"),
        ("loaded", f"{c['channels']} ch after {c['deltas_per_channel']:,} deltas"),
    ]:
        for key, name in [("rss_mib", "VmRSS MiB"), ("hwm_mib", "VmHWM MiB")]:
            rows.append(
                [
                    f"{label}: {name}",
                    num(d[state][key], 1),
                    num(s[state][key], 1),
                    ratio(d[state][key], s[state][key]),
                ]
            )
    return table(
        "(c) resident memory of the relaying Python process",
        ["", "daemon", "SDK", "daemon/SDK"],
        rows,
    )


def format_d(d: dict[str, Any]) -> str:
    rows = []

    def add(name: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                add(f"{name}: {key}" if name else str(key), inner)
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            rows.append(
                [name, num(statistics.median(value), 1), num(min(value), 1), num(max(value), 1)]
            )
        elif isinstance(value, (int, float)):
            rows.append([name, num(value, 1), "", ""])
        else:
            rows.append([name, str(value)[:60], "", ""])

    add("", d)
    return table(
        "(d) time to first token, ms (bench/first_token.py)", ["", "median", "min", "max"], rows
    )


def format_e(e: dict[str, Any]) -> str:
    big, small = e["big"], e["small"]
    rows = [
        [label, num(big[key], 1), num(small[key], 1), ratio(big[key], small[key])]
        for key, label in [("p50_ms", "p50 ms"), ("max_ms", "max ms")]
    ]
    return table(
        f"(e) claude/fileUpdated arrival - file mtime, Edit by the real CLI, "
        f"{e['edits']} edits (mtime resolution {e['mtime_resolution_ms']:g} ms)",
        ["", f"{big['lines']:,} lines", f"{small['lines']} lines (peer)", "ratio"],
        rows,
    )


def format_f(f: dict[str, Any]) -> str:
    rows = [
        [name, num(v["daemon_us"], 2), num(v["relay_us"], 2), ratio(v["daemon_us"], v["relay_us"])]
        for name, v in f.items()
        if isinstance(v, dict)
    ]
    return table(
        f"(f) CPU per CLI line on the hot path, in process, us (best of {f['rounds']} rounds "
        f"of {f['lines']:,} lines)",
        ["", "daemon", "relay", "daemon/relay"],
        rows,
    )


def format_g(g: dict[str, Any]) -> str:
    if "unavailable" in g:
        return f"(g) skipped: {g['unavailable']}"

    def median(name: str, key: str) -> float | None:
        values = [r[key] for r in g["repeats"][name] if r.get(key) is not None]
        return statistics.median(values) if values else None

    metrics = [
        ("longest UI-thread stall, ms", "max_stall_ms", "< 50"),
        ("key echo while streaming, median ms", "key_echo_median_ms", "< 16"),
        ("key echo while streaming, max ms", "key_echo_max_ms", ""),
        ("end on screen after turnEnded, ms", "end_on_screen_ms", "< 100"),
        ("prompt to turnEnded, s", "stream_s", ""),
    ]
    rows = [
        [label, num(median("plugin", key), 1), num(median("floor", key), 1), target]
        for label, key, target in metrics
    ]
    return table(
        f"(g) Neovim while a {g['answer_chars']:,}-character answer streams (median of "
        f"{len(g['repeats']['plugin'])}); floor: each delta appended to a plain buffer",
        ["", "plugin", "floor", "target"],
        rows,
    )


def format_h(h: dict[str, Any]) -> str:
    if "unavailable" in h:
        return f"(h) skipped: {h['unavailable']}"

    def median(name: str, key: str) -> float | None:
        values = [r[key] for r in h["repeats"].get(name, []) if r.get(key) is not None]
        return statistics.median(values) if values else None

    metrics = [
        ("longest UI-thread task (longtask), ms", "longest_task_ms", "< 50"),
        ("longest UI-thread stall (10 ms timer), ms", "longest_stall_ms", "< 50"),
        ("longest gap between frames, ms", "longest_frame_gap_ms", ""),
        ("key echo while streaming, median ms", "key_echo_median_ms", "< 16"),
        ("key echo while streaming, max ms", "key_echo_max_ms", ""),
        ("end on screen after the daemon's turnEnded, ms", "end_on_screen_ms", "< 100"),
        ("  the extension host posted turnEnded after, ms", "end_posted_ms", ""),
        ("  turnEnded reached the page after, ms", "end_arrived_ms", ""),
        ("  the page's frames from then until the end was drawn", "end_frames", ""),
        ("  the message that brought turnEnded, bytes", "end_message_bytes", ""),
        ("messages the page got while it streamed", "messages", ""),
        ("keys typed while streaming", "keys", ""),
        ("UI-thread CPU, first notification to end on screen, ms", "thread_cpu_ms", ""),
        ("  of which style and layout, ms", "layout_cpu_ms", ""),
        ("extension host CPU, prompt to end on screen, ms", "extension_host_cpu_ms", ""),
        ("renderer processes CPU (all threads, the workbench's too), ms", "renderer_cpu_ms", ""),
        ("browser's other processes CPU (compositor), ms", "browser_cpu_ms", ""),
    ]
    rows = [
        [
            label,
            num(median("page", key), 1),
            num(median("peer", key), 1),
            num(median("vscode", key), 1),
            num(median("vscode_peer", key), 1),
            num(median("vscode_site", key), 1),
            num(median("vscode_site_peer", key), 1),
            target,
        ]
        for label, key, target in metrics
    ]
    note = f"; in VS Code: {h['in_vscode_unavailable']}" if "in_vscode_unavailable" in h else ""
    return table(
        f"(h) VS Code chat page while a {h['answer_chars']:,}-character answer streams from the "
        f"real daemon and CLI, timed from the daemon's send "
        f"(median of {len(h['repeats']['page'])}); "
        f"page: headless Chromium fed by the extension's client; peer: each delta appended as a "
        f"text node; in VS Code: code-server, its peer the same in VS Code's webview; own site: "
        f"the webviews on a site of their own (their own renderer, as VS Code desktop and "
        f"vscode.dev run them){note}",
        ["", "page", "peer", "in VS Code", "its peer", "own site", "its peer", "target"],
        rows,
    )


def format_i(i: dict[str, Any]) -> str:
    if "unavailable" in i:
        return f"(i) skipped: {i['unavailable']}"

    def median(name: str, key: str) -> float | None:
        values = [r[key] for r in i["repeats"][name] if r.get(key) is not None]
        return statistics.median(values) if values else None

    metrics = [
        ("longest EDT stall, ms", "max_stall_ms", "< 50"),
        ("longest EDT stall, CPU ms", "max_stall_cpu_ms", ""),
        ("key echo while streaming, median ms", "key_echo_median_ms", "< 16"),
        ("key echo while streaming, max ms", "key_echo_max_ms", ""),
        ("end on screen after the daemon sent turnEnded, ms", "end_on_screen_ms", "< 100"),
        ("daemon's send of turnEnded to the panel's listener, ms", "listener_lag_ms", ""),
        ("prompt to turnEnded, s", "stream_s", ""),
    ]
    rows = [
        [
            label,
            num(median("panel", key), 1),
            num(median("peer", key), 1),
            num(i["cold"]["panel"].get(key), 1),
            num(i["cold"]["peer"].get(key), 1),
            target,
        ]
        for label, key, target in metrics
    ]
    return table(
        f"(i) Swing panel while a {i['answer_chars']:,}-character answer streams (median of "
        f"{len(i['repeats']['panel'])} warm turns; cold: the first turn in the JVM); peer: "
        "each delta appended to a plain JTextArea",
        ["", "panel", "peer", "panel cold", "peer cold", "target"],
        rows,
    )


def format_j(j: dict[str, Any]) -> str:
    if "unavailable" in j:
        return f"(j) skipped: {j['unavailable']}"
    mine, peer = j["summary"]["sidecar"], j["summary"]["peer"]
    rows = []
    for key, label in [
        ("first_session_new_ms", "first session: session/new, ms"),
        ("first_session_first_chunk_ms", "first session: session/new -> first chunk, ms"),
        ("later_sessions_new_ms", "later sessions: session/new, ms"),
        ("later_sessions_first_chunk_ms", "later sessions: session/new -> first chunk, ms"),
        ("warm_turn_ms", "warm turn: prompt -> first chunk, ms"),
        ("rss_per_session_mib", f"RSS per session ({j['sessions']} open, tree), MiB"),
        ("pss_per_session_mib", f"PSS per session ({j['sessions']} open, tree), MiB"),
    ]:
        m, p = mine[key], peer[key]
        rows.append(
            [
                label,
                num(m["median"], 1),
                f"{num(m['min'], 1)}-{num(m['max'], 1)}",
                num(p["median"], 1),
                f"{num(p['min'], 1)}-{num(p['max'], 1)}",
                ratio(p["median"], m["median"]),
            ]
        )
    load = f"{j['loadavg_start'][0]:.1f} at the start, {j['loadavg'][0]:.1f} at the end"
    return table(
        f"(j) ACP: claude-sidecar acp (warm pool 1) vs claude-agent-acp, same CLI and client; "
        f"median over {j['repeats']} fresh agents x {j['sessions']} sessions (range min-max); "
        f"{mine['pooled']}/{mine['later_sessions']} later sessions from the pool; "
        f"1-min load {load}",
        ["", "sidecar", "range", "claude-agent-acp", "range", "peer/sidecar"],
        rows,
    )


def format_k(k: dict[str, Any]) -> str:
    import shared

    return table(
        f"(k) shared daemon (claude-sidecar serve, clients through connect): one chat, "
        f"{k['burst']:,} deltas; peers: the private daemon and one client, same run",
        ["", "shared daemon", "peer"],
        shared.table(k),
    )


def format_l(l_result: dict[str, Any]) -> str:
    import long_session

    columns, rows = long_session.table(l_result)
    return table(long_session.title(l_result), columns, rows)


# ------------------------------------------------------------ sections


def run_d(quick: bool) -> dict[str, Any]:
    import first_token

    run_all = getattr(first_token, "run_all", None)
    if run_all is None:
        raise NotImplementedError("bench/first_token.py has no run_all(runs) yet")
    log("(d) time to first token (bench/first_token.py) ...")
    result = run_all(1 if quick else 3)
    assert isinstance(result, dict), result
    return result


def sections(
    quick: bool,
) -> dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]]:
    import acp_peer
    import editor_nvim
    import editor_swing
    import editor_vscode
    import file_updated
    import long_session
    import memory
    import overview
    import overview_clients
    import overview_vscode
    import per_line
    import relay
    import shared

    return {
        "a": (lambda: relay.throughput(quick, 1 if quick else 5, log=log), format_a),
        "b": (lambda: relay.latency(quick, log=log), format_b),
        "c": (lambda: memory.measure(quick, log=log), format_c),
        "d": (lambda: run_d(quick), format_d),
        "e": (lambda: file_updated.measure(quick, log=log), format_e),
        "f": (lambda: per_line.measure(quick, log=log), format_f),
        "g": (lambda: editor_nvim.run(quick), format_g),
        "h": (lambda: editor_vscode.run(quick), format_h),
        "i": (lambda: editor_swing.run(quick), format_i),
        "j": (lambda: acp_peer.measure(quick, log=log), format_j),
        "k": (lambda: shared.measure(quick, log=log), format_k),
        "l": (lambda: long_session.measure(quick, log=log), format_l),
        "m": (lambda: overview.run(8, 200, 5 if quick else 10), overview.format_m),
        "n": (
            lambda: overview_clients.run(8, 200, 5 if quick else 10),
            overview_clients.format_n,
        ),
        "o": (
            lambda: overview_vscode.run(8, 200, 5 if quick else 10),
            overview_vscode.format_o,
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, < 60 s in all")
    parser.add_argument(
        "--only", default="a,b,c,d,e,f,g,h,i,j,k,l,m,n,o", help="sections, e.g. a,b (default all)"
    )
    args = parser.parse_args()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    available = sections(args.quick)
    unknown = [s for s in chosen if s not in available]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {','.join(available)}")

    started = datetime.datetime.now()
    report: dict[str, Any] = {
        "started": started.isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_start": os.getloadavg(),
        },
        "sections": {},
        "skipped": {},
        "errors": {},
        "seconds": {},
    }
    tables = []
    for name in chosen:
        measure, render = available[name]
        began = time.monotonic()
        try:
            result = measure()
        except NotImplementedError as e:
            report["skipped"][name] = str(e)
            tables.append(f"({name}) skipped: {e}")
            continue
        except Exception as e:  # one broken section must not hide the others
            report["errors"][name] = traceback.format_exc()
            tables.append(f"({name}) FAILED: {type(e).__name__}: {e}")
            log(traceback.format_exc())
            continue
        finally:
            kill_all()
            report["seconds"][name] = round(time.monotonic() - began, 1)
        report["sections"][name] = result
        tables.append(render(result))
    report["machine"]["loadavg_end"] = os.getloadavg()
    text = "\n\n".join(tables)
    report["table"] = text
    print(text)

    RESULTS.mkdir(exist_ok=True)
    data = json.dumps(report, indent=1)
    path = RESULTS / f"{started:%Y%m%d-%H%M%S}.json"
    path.write_text(data)
    (RESULTS / "latest.json").write_text(data)
    log(
        f"\nwritten: {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
        f" and latest.json ({sum(report['seconds'].values()):.0f} s)"
    )
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        kill_all()
