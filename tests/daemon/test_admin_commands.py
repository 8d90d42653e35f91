"""`claude-sidecar status` and `claude-sidecar stop`: the shared daemon, for a person at a
shell: which chats run and who is attached; stopping it, refused mid-turn unless forced."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from claude_sidecar import __version__
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.daemon.conftest import SharedDaemon
from tests.daemon.test_daemon_life import held
from tests.env import both_platform_paths
from tests.harness import wait_until_dead


async def run(daemon_env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run `claude-sidecar ARGS`; its exit code and what it printed (stdout, then stderr)."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "claude_sidecar", *args),
        env=daemon_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, (out + err).decode()


async def test_status_lists_each_chat_with_its_state_and_the_editors_attached(
    shared: SharedDaemon, workspace: Path
) -> None:
    nvim = await shared.client(name="claude_sidecar.nvim")
    chat = await nvim.new_channel(str(workspace))
    await nvim.turn(chat, "hello")
    vscode = await shared.client(name="vscode")
    await vscode.request("claude/attach", {"channelId": chat})
    await vscode.new_channel(str(workspace))
    await vscode.request("claude/detach", {"channelId": "ch-2"})

    model = (await nvim.request("claude/channelInfo", {"channelId": chat}))["model"]
    code, said = await run(shared.env, "status", "--socket", str(shared.socket))

    lines = said.splitlines()
    assert code == 0
    assert lines[0] == f"claude-sidecar {__version__} (pid {shared.pid}) serves {shared.socket}"
    assert lines[1:] == [
        "2 chat(s)",
        f"  ch-1  idle  {workspace}  {model}  2 attached: claude_sidecar.nvim, vscode",
        f"  ch-2  idle  {workspace}  nobody attached",
    ]


async def test_status_without_a_daemon_says_so_and_starts_none(
    socket_dir: Path, daemon_env: dict[str, str]
) -> None:
    code, said = await run(daemon_env, "status", "--socket", str(socket_dir / "daemon.sock"))

    assert (code, said) == (1, f"no shared daemon serves {socket_dir / 'daemon.sock'}\n")
    assert not (socket_dir / "daemon.sock").exists()


@both_platform_paths
async def test_stop_is_refused_mid_turn_and_forced_ends_the_daemon_and_its_clis(
    shared: SharedDaemon, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario({"rules": [held("^long$", "^never$")], "default": [[{"text": "ok"}]]})
    )
    client = await shared.client()
    opened = await client.open_channel(cwd=str(workspace))
    await client.send(opened["channelId"], "long")
    await client.wait_for_state(opened["channelId"], "running")
    socket = str(shared.socket)

    refused = await run(shared.env, "stop", "--socket", socket)
    forced = await run(shared.env, "stop", "--force", "--socket", socket)

    assert refused == (
        1,
        "not stopped: 1 chat(s) are in a turn (ch-1); wait for them to end, "
        "or run `claude-sidecar stop --force`\n",
    )
    assert forced == (0, "stopped the shared daemon; 1 chat(s) closed\n")
    assert shared.process is not None
    assert await asyncio.wait_for(shared.process.wait(), 30) == 0
    assert await wait_until_dead([opened["pid"]]) == []
