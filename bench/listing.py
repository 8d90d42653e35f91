"""Listing a folder of stored sessions, one of them ~100 MB (issue 43's listing goal).

Run: ``uv run python bench/listing.py [--big-mb 100] [--sessions 100] [--repeat 3]``

Builds, in a temporary HOME, a project folder of ``--sessions`` stored sessions: copies of
the real CLI session files in ``tests/data/sessions`` (fresh session ids), one of them
grown to ``--big-mb`` MB by repeating the turns of a real session (a text answer and a
``Write``) with fresh uuids and message ids on one parent chain. Nothing is committed;
the folder is deleted afterwards.

Then, against ``python -m claude_sidecar --stdio`` started directly with that HOME (and a
fresh ``XDG_CACHE_HOME``), the wall time of ``claude/listSessions`` (the whole folder in
one page), measured from writing the request to reading its response:

- partial: a new daemon, no index yet, with ``allowPartial`` (what a client with the
  feature ``partialListing`` asks): the big file from its head and tail;
- completed: from that request until ``claude/sessionsChanged`` says the big file has
  been read whole (by the daemon's background reader), and the listing after it;
- cold: a new daemon, no index yet, without ``allowPartial`` (every file read whole before
  the answer: what an older client asks);
- warm: the same daemon again (median of 5);
- restarted: a new daemon, the index left by the first (the next editor session);
- grown: after one more turn is appended to the big file (a chat in use);
- rewritten: after the big file is rewritten with one line fewer (read whole again).

Side by side, the official SDK's ``list_sessions`` of the same folder (claude-agent-sdk,
in a process of its own, timed around the call): it reads each file's first and last
64 KiB, as the CLI's own ``--resume`` picker does, and gives no message count.

``--repeat`` builds a new folder and measures it again, each step's median printed (with
the range), with the daemon's CPU time for the request (from /proc/<pid>/stat: less
disturbed by other processes than the wall time; 10 ms ticks). The figures depend on the
machine: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from claude_sidecar.cli.paths import project_dir

from rpc_client import Daemon

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "sessions"
# A text answer, then a Write with thinking, its result and a closing text (CLI 2.1.330).
TEMPLATE = DATA / "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b.jsonl"
_IDS = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:msg|toolu)_[A-Za-z0-9_]+"
)


def _copy_turns(lines: list[bytes], session_id: bytes, parent: str | None) -> tuple[bytes, str]:
    """``lines`` with every uuid and message/tool id but the session's replaced by a fresh
    one, the root entry chained to ``parent``; the text and the uuid of its last entry."""
    fresh: dict[bytes, bytes] = {}

    def swap(match: re.Match[bytes]) -> bytes:
        old = match.group()
        if old == session_id:
            return old
        if old not in fresh:
            tail = uuid.uuid4().hex[:24].encode()
            fresh[old] = str(uuid.uuid4()).encode() if b"-" in old else old[:5] + tail
        return fresh[old]

    out: list[bytes] = []
    last = parent
    for line in lines:
        line = _IDS.sub(swap, line)
        if b'"parentUuid":null' in line and parent is not None:
            line = line.replace(b'"parentUuid":null', b'"parentUuid":"%s"' % parent.encode())
        entry = json.loads(line)
        if isinstance(entry.get("uuid"), str) and entry.get("type") in ("user", "assistant"):
            last = entry["uuid"]
        out.append(line)
    assert last is not None
    return b"\n".join(out) + b"\n", last


def grow_session(path: Path, target_bytes: int, template: Path = TEMPLATE) -> int:
    """Write at ``path`` a session made of ``template``'s turns repeated with fresh ids on
    one parent chain until it holds ``target_bytes``; the number of lines written."""
    session_id = path.stem.encode()
    lines = template.read_bytes().replace(template.stem.encode(), session_id).splitlines()
    written = count = 0
    parent: str | None = None
    with path.open("wb") as f:
        while written < target_bytes:
            chunk, parent = _copy_turns(lines, session_id, parent)
            f.write(chunk)
            written += len(chunk)
            count += len(lines)
    return count


def append_turn(path: Path, template: Path = TEMPLATE) -> None:
    """Append the template's last turn to ``path``, chained to the file's last entry (what
    a chat in use does between two listings)."""
    last = None
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - 65536))
        for line in f.read().splitlines()[1:]:
            entry = json.loads(line)
            if entry.get("type") in ("user", "assistant") and isinstance(entry.get("uuid"), str):
                last = entry["uuid"]
    lines = template.read_bytes().replace(template.stem.encode(), path.stem.encode()).splitlines()
    turn = lines[17:]  # the second turn: the Write
    first = next(i for i, ln in enumerate(turn) if b'"type":"user"' in ln)
    entry = json.loads(turn[first])
    turn[first] = turn[first].replace(
        b'"parentUuid":"%s"' % entry["parentUuid"].encode(), b'"parentUuid":null'
    )
    chunk, _ = _copy_turns(turn, path.stem.encode(), last)
    with path.open("ab") as f:
        f.write(chunk)


def make_folder(home: Path, cwd: Path, sessions: int, big_bytes: int) -> tuple[Path, int]:
    """The project folder of ``cwd`` under ``home``: ``sessions`` sessions, the first of
    them grown to ``big_bytes``; the big file's path and line count."""
    cwd.mkdir(parents=True, exist_ok=True)
    folder = project_dir(home, str(cwd))
    folder.mkdir(parents=True)
    small = sorted(DATA.glob("*.jsonl"))
    big = folder / f"{uuid.uuid4()}.jsonl"
    lines = grow_session(big, big_bytes)
    for i in range(sessions - 1):
        template = small[i % len(small)]
        session_id = str(uuid.uuid4())
        text = template.read_bytes().replace(template.stem.encode(), session_id.encode())
        (folder / f"{session_id}.jsonl").write_bytes(text)
    return big, lines


def _cpu_ms(pid: int) -> float:
    """The CPU time (user + system) of process ``pid`` so far, all its threads, in ms."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _list(daemon: Daemon, cwd: Path, cpu: dict[str, float], step: str) -> tuple[float, Any]:
    """Wall ms of one listing of ``cwd`` (its page); the daemon's CPU ms in ``cpu[step]``."""
    before = _cpu_ms(daemon.pid)
    start = time.perf_counter()
    page = daemon.request("claude/listSessions", {"cwd": str(cwd), "limit": 500}, timeout=300)
    wall = (time.perf_counter() - start) * 1000
    cpu[step] = _cpu_ms(daemon.pid) - before
    return wall, page


def _daemon(env: dict[str, str], tmp: Path) -> Daemon:
    daemon = Daemon(env=env, stderr_path=str(tmp / "daemon.log"))
    daemon.initialize({"clientName": "bench-listing"})
    return daemon


_SDK_LISTING = """
import sys, time
import claude_agent_sdk
start = time.perf_counter()
found = claude_agent_sdk.list_sessions(directory=sys.argv[1], include_worktrees=False)
print((time.perf_counter() - start) * 1000, len(found))
"""


def _sdk_listing(env: dict[str, str], cwd: Path) -> float:
    """The SDK's ``list_sessions`` of ``cwd`` in its own process: ms around the call."""
    out = subprocess.run(
        [sys.executable, "-c", _SDK_LISTING, str(cwd)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0])


def _partial(
    env: dict[str, str], tmp: Path, cwd: Path, big: Path, cpu: dict[str, float]
) -> dict[str, Any]:
    """The first listing with ``allowPartial`` (its own fresh index), the time until
    ``claude/sessionsChanged``, and the listing after it."""
    env = {**env, "XDG_CACHE_HOME": str(tmp / "cache-partial")}
    params = {"cwd": str(cwd), "limit": 500, "allowPartial": True}
    daemon = _daemon(env, tmp)
    try:
        changed: list[dict[str, Any]] = []
        before = _cpu_ms(daemon.pid)
        start = time.perf_counter()
        page = daemon.request("claude/listSessions", params, timeout=300, on_other=changed.append)
        partial = (time.perf_counter() - start) * 1000
        cpu["partial"] = _cpu_ms(daemon.pid) - before
        summary = next(s for s in page["sessions"] if s["sessionId"] == big.stem)
        assert summary.get("partial") is True, summary
        if not any(n["method"] == "claude/sessionsChanged" for n in changed):
            for _, body in daemon.bodies(300):
                if json.loads(body).get("method") == "claude/sessionsChanged":
                    break
        completed = (time.perf_counter() - start) * 1000
        after_start = time.perf_counter()
        page = daemon.request("claude/listSessions", params, timeout=300)
        after = (time.perf_counter() - after_start) * 1000
        summary = next(s for s in page["sessions"] if s["sessionId"] == big.stem)
        assert "partial" not in summary, summary
        return {"partial": partial, "completed": completed, "afterChanged": after}
    finally:
        daemon.shutdown()


def measure(sessions: int, big_mb: float, log: Any = print) -> dict[str, Any]:
    """The listing figures (ms) of a fresh folder; see the module docstring."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-listing-"))
    try:
        home = tmp / "home"
        log(f"writing {sessions} sessions, one of {big_mb} MB ...")
        cwd = tmp / "workspace"
        big, lines = make_folder(home, cwd, sessions, int(big_mb * 1024 * 1024))
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(tmp / "cache"),
            "XDG_STATE_HOME": str(tmp / "state"),
        }
        env.pop("CLAUDE_CONFIG_DIR", None)
        cpu: dict[str, float] = {}
        result: dict[str, Any] = {
            "cpu": cpu,
            "sessions": sessions,
            "bigBytes": big.stat().st_size,
            "bigLines": lines,
        }
        result["sdk"] = _sdk_listing(env, cwd)
        result.update(_partial(env, tmp, cwd, big, cpu))
        daemon = _daemon(env, tmp)
        try:
            result["cold"], page = _list(daemon, cwd, cpu, "cold")
            result["listed"] = len(page["sessions"])
            result["bigMessageCount"] = next(
                s["messageCount"] for s in page["sessions"] if s["sessionId"] == big.stem
            )
            result["warm"] = statistics.median(_list(daemon, cwd, cpu, "warm")[0] for _ in range(5))
        finally:
            daemon.shutdown()
        daemon = _daemon(env, tmp)
        try:
            result["restarted"], _ = _list(daemon, cwd, cpu, "restarted")
            append_turn(big)
            result["grown"], page = _list(daemon, cwd, cpu, "grown")
            result["grownMessageCount"] = next(
                s["messageCount"] for s in page["sessions"] if s["sessionId"] == big.stem
            )
            data = big.read_bytes()
            big.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])
            result["rewritten"], _ = _list(daemon, cwd, cpu, "rewritten")
        finally:
            daemon.shutdown()
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


STEPS = (
    "partial",
    "completed",
    "afterChanged",
    "cold",
    "warm",
    "restarted",
    "grown",
    "rewritten",
    "sdk",
)


def table(results: list[dict[str, Any]]) -> list[list[str]]:
    """Rows (step, median wall ms, its range, median daemon CPU ms or "") over repeats."""
    rows = []
    for step in STEPS:
        values = [r[step] for r in results]
        spread = f"{min(values):.0f}-{max(values):.0f}" if len(values) > 1 else ""
        cpu = ""
        if step in results[0]["cpu"]:
            cpu = f"{statistics.median(r['cpu'][step] for r in results):.0f}"
        rows.append([step, f"{statistics.median(values):.0f}", spread, cpu])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--big-mb", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    results = [
        measure(args.sessions, args.big_mb, log=lambda m: print(m, file=sys.stderr))
        for _ in range(args.repeat)
    ]
    first = results[0]
    print(
        f"claude/listSessions of {first['listed']} sessions, one of "
        f"{first['bigBytes'] / 1e6:.0f} MB ({first['bigLines']} lines, "
        f"messageCount {first['bigMessageCount']}, then {first['grownMessageCount']})"
    )
    print(f"  {'step':<13} {'wall ms':>8}  {'(range)':<11} {'daemon CPU ms':>13}")
    for step, median, spread, cpu in table(results):
        print(f"  {step:<13} {median:>8}  {spread:<11} {cpu:>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
