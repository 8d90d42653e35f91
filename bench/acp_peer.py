"""Section (j): ``claude-sidecar acp`` against claude-agent-acp, driven by the same ACP client.

Run through run.py: ``uv run python bench/run.py --only j [--quick]``.

Both agents run the same Claude Code CLI (the one ``find_cli`` picks, the daemon's; the
peer gets it through ``CLAUDE_CODE_EXECUTABLE``) against the same stand-in model, each with
its own HOME; the client is the ACP Python SDK's client side (``spawn_agent_process``),
timing with ``time.perf_counter`` in this process. The peer is
``@agentclientprotocol/claude-agent-acp`` 0.101.0 on Node 22, installed by
``tests/acp/toolchain.sh`` into ``.cache/acp/`` (the section is skipped, saying why, when
it cannot be).

Each repeat starts a fresh agent of each kind (interleaved: sidecar, peer, sidecar, ...),
so both see the same machine, and in one workspace opens ``SESSIONS`` sessions one after
the other, each with one prompt ``hi``. After each session's first turn the sidecar starts
a spare CLI for the directory (its warm pool); the bench waits until the agent's log says
the spare is ready, then ``SETTLE_S``, before the next figure; the peer waits as long.

Each agent runs in the workspace, as editors start their agents in the project: the
sidecar starts its first spare there at ``initialize`` (``--warm-pool-cwd``' default);
the first ``session/new`` is sent right after ``initialize`` answers, with no wait.

- session/new: the ``session/new`` round trip, ms, of the agent's first session (its spare
  still starting) and of the later ones;
- new session -> first chunk: from sending ``session/new`` to the first
  ``agent_message_chunk`` of the session's first prompt, ms, first and later sessions;
- warm turn first chunk: ``WARM_TURNS`` more prompts in the first session, each send ->
  first chunk, ms;
- RSS per session: the sum of VmRSS over the agent's whole process tree (the agent, its
  CLIs, what they run; the sidecar's spare CLI included) with ``SESSIONS`` sessions open,
  divided by ``SESSIONS``, MiB; PSS (shared pages split between processes) beside it in
  the JSON, and the number of the CLI's processes in each tree.

The sidecar runs with its default warm pool (``--warm-pool 1``). Sessions that did not
come from the pool are counted (``pooled`` in the JSON).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.interfaces import Agent, Client
from acp.schema import (
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)
from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.runtime.processes import children_of
from claude_sidecar.scripted import ScriptedModel, load_scenario

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAIN = ROOT / "tests" / "acp" / "toolchain.sh"
SCENARIO = {
    "rules": [],
    "default": [[{"text": "The quick brown fox jumps over the lazy dog."}]],
    "chunk": 8,
}
SESSIONS = 4
# A quiet moment after a spare CLI said it is ready (its start-up work trails off).
SETTLE_S = 0.5
WARM_TURNS = 3
SPARE_READY = re.compile(r"warm pool: spare CLI pid \d+ ready")
TOOK_SPARE = re.compile(r"took spare CLI pid \d+ from the warm pool")


class TimingClient:
    """The ACP client: notes when each session's first ``agent_message_chunk`` of the
    current prompt arrives; denies any permission request (``hi`` asks for none)."""

    def __init__(self) -> None:
        self.first_chunk: dict[str, asyncio.Future[float]] = {}

    def expect(self, session_id: str) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.first_chunk[session_id] = future
        return future

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        future = self.first_chunk.get(session_id)
        chunk = getattr(update, "session_update", None) == "agent_message_chunk"
        if chunk and future is not None and not future.done():
            future.set_result(time.perf_counter())

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def on_connect(self, conn: Agent) -> None:
        pass


def tree_memory_kib(pid: int) -> tuple[int, int]:
    """VmRSS and Pss summed over ``pid`` and all its descendants, KiB."""
    rss = pss = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        pending.extend(children_of(current))
        try:
            with open(f"/proc/{current}/status") as f:
                rss += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            with open(f"/proc/{current}/smaps_rollup") as f:
                pss += next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            continue  # gone meanwhile, or a kernel thread without memory
    return rss, pss


def agent_env(model_url: str, cli: str, tmp: Path, **extra: str) -> dict[str, str]:
    """An agent's environment: its own HOME (in ``tmp``), the CLI pointed at the stand-in
    model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        HOME=tempfile.mkdtemp(prefix="home-", dir=tmp),
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="bench",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_EXECUTABLE=cli,
        # The CLI refuses its permission bypass as root outside a sandbox; the peer
        # checks for it at start.
        IS_SANDBOX="1",
        **extra,
    )
    return env


def log_count(path: Path, pattern: re.Pattern[str]) -> int:
    return len(pattern.findall(path.read_text(errors="replace"))) if path.exists() else 0


async def wait_log(path: Path, pattern: re.Pattern[str], count: int, timeout: float) -> bool:
    """Wait until ``pattern`` appears ``count`` times in the log; False after ``timeout``."""
    deadline = time.monotonic() + timeout
    # Polls: another process's log file growing is not an event this process can await.
    while log_count(path, pattern) < count:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def one_agent(
    kind: str,
    command: list[str],
    env: dict[str, str],
    log_path: Path,
    sessions: int,
    cli: str,
    peer_wait_s: float = 0.0,
) -> dict[str, Any]:
    """One fresh agent: ``sessions`` sessions one after the other, the figures above; the
    peer waits ``peer_wait_s`` where the sidecar waits for its spare."""
    client = TimingClient()
    workspace = tempfile.mkdtemp(prefix="ws-", dir=log_path.parent)
    result: dict[str, Any] = {"new_ms": [], "first_chunk_ms": [], "pooled": 0, "waited_s": []}
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        async with spawn_agent_process(
            cast(Client, client),
            command[0],
            *command[1:],
            env=env,
            # Where editors start their agents: the project.
            cwd=workspace,
            transport_kwargs={"stderr": log},
        ) as (conn, process):
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="bench", version="1"),
                ),
                60,
            )

            async def turn(session_id: str, started: float) -> float:
                first = client.expect(session_id)
                answer = await asyncio.wait_for(
                    conn.prompt(session_id=session_id, prompt=[text_block("hi")]), 120
                )
                assert answer.stop_reason == "end_turn", answer
                assert first.done(), f"{kind}: the turn ended without an agent_message_chunk"
                return (first.result() - started) * 1000

            async def settle(spares: int) -> None:
                # After a session's first turn the sidecar starts a spare CLI for the
                # directory: wait until it is ready (its log says so), so that its start
                # does not weigh on the next figure; the peer waits as long.
                began = time.monotonic()
                if kind == "sidecar":
                    await wait_log(log_path, SPARE_READY, spares, 60)
                    result["waited_s"].append(round(time.monotonic() - began, 2))
                else:
                    await asyncio.sleep(peer_wait_s)
                await asyncio.sleep(SETTLE_S)

            for n in range(sessions):
                started = time.perf_counter()
                opened = await asyncio.wait_for(
                    conn.new_session(cwd=workspace, mcp_servers=[]), 120
                )
                result["new_ms"].append((time.perf_counter() - started) * 1000)
                result["first_chunk_ms"].append(await turn(opened.session_id, started))
                await settle(n + 1)
                if n == 0:
                    result["warm_turn_ms"] = [
                        await turn(opened.session_id, time.perf_counter())
                        for _ in range(WARM_TURNS)
                    ]
            result["pooled"] = log_count(log_path, TOOK_SPARE) if kind == "sidecar" else 0
            rss, pss = tree_memory_kib(process.pid)
            result["tree_rss_mib"] = rss / 1024
            result["tree_pss_mib"] = pss / 1024
            tree = _descendants(process.pid)
            result["processes"] = 1 + len(tree)
            # Proof that both agents ran the same CLI: its processes in the tree.
            result["cli_processes"] = sum(_exe(pid) == os.path.realpath(cli) for pid in tree)
            result["tree"] = [_cmdline(pid)[:200] for pid in [process.pid, *tree]]
    finally:
        os.close(log)
    return result


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        children = children_of(pending.pop())
        found += children
        pending += children
    return found


def install_peer() -> str:
    """claude-agent-acp's wrapper (installed once into .cache/acp); raises with npm's words."""
    done = subprocess.run(
        ["bash", str(TOOLCHAIN), "claude-agent-acp"], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-400:])
    return done.stdout.strip().splitlines()[-1]


async def measure_async(
    model_url: str, peer: str, repeats: int, sessions: int, tmp: Path, log: Callable[[str], None]
) -> dict[str, Any]:
    """Every repeat of both agents, interleaved; the raw figures."""
    cli = find_cli()
    sidecar = [sys.executable, "-m", "claude_sidecar", "--log-level", "INFO", "acp", "--cli", cli]
    runs: dict[str, list[dict[str, Any]]] = {"sidecar": [], "peer": []}
    for r in range(repeats):
        log(f"(j) repeat {r + 1}/{repeats}: claude-sidecar acp ...")
        env = agent_env(model_url, cli, tmp)
        mine = await one_agent("sidecar", sidecar, env, tmp / f"sidecar-{r}.log", sessions, cli)
        runs["sidecar"].append(mine)
        log(f"(j) repeat {r + 1}/{repeats}: claude-agent-acp ...")
        wait = statistics.median(mine["waited_s"]) if mine["waited_s"] else 0.0
        runs["peer"].append(
            await one_agent(
                "peer",
                [peer],
                agent_env(model_url, cli, tmp),
                tmp / f"peer-{r}.log",
                sessions,
                cli,
                wait,
            )
        )
    return {"cli": cli, "sessions": sessions, "runs": runs}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The medians over repeats (and min/max) of one agent's figures."""

    nan = float("nan")

    def spread(values: list[float]) -> dict[str, float]:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    return {
        "first_session_new_ms": spread([r["new_ms"][0] for r in runs]),
        "later_sessions_new_ms": spread([v for r in runs for v in r["new_ms"][1:]] or [nan]),
        "first_session_first_chunk_ms": spread([r["first_chunk_ms"][0] for r in runs]),
        "later_sessions_first_chunk_ms": spread(
            [v for r in runs for v in r["first_chunk_ms"][1:]] or [nan]
        ),
        "warm_turn_ms": spread([v for r in runs for v in r["warm_turn_ms"]]),
        "rss_per_session_mib": spread([r["tree_rss_mib"] / len(r["new_ms"]) for r in runs]),
        "pss_per_session_mib": spread([r["tree_pss_mib"] / len(r["new_ms"]) for r in runs]),
        "pooled": sum(r["pooled"] for r in runs),
        "cli_processes": [r["cli_processes"] for r in runs],
        "later_sessions": sum(len(r["new_ms"]) - 1 for r in runs),
    }


def measure(quick: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """Section (j): both agents, ``repeats`` fresh agents each; ``unavailable`` when
    claude-agent-acp cannot be installed."""
    try:
        log("(j) claude-agent-acp: tests/acp/toolchain.sh claude-agent-acp ...")
        peer = install_peer()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return {"unavailable": f"claude-agent-acp could not be installed: {e}"}
    repeats = 1 if quick else 5
    sessions = 2 if quick else SESSIONS
    load_start = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="bench-acp-"))
    try:
        with ScriptedModel(load_scenario(SCENARIO)) as model:
            raw = asyncio.run(measure_async(model.url, peer, repeats, sessions, tmp, log))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    raw["summary"] = {name: summarize(runs) for name, runs in raw["runs"].items()}
    raw["repeats"] = repeats
    raw["loadavg_start"] = load_start
    raw["loadavg"] = os.getloadavg()
    return raw
