"""What each front end loads at start: only its own JSON-RPC library."""

from __future__ import annotations

import subprocess
import sys


def printed_by(code: str) -> str:
    """What ``code`` prints, run by a Python of its own (nothing imported yet)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_acp_agent_loads_neither_pygls_nor_lsprotocol() -> None:
    # lsprotocol's types alone cost 0.3 s or more of CPU at every start of the agent.
    probe = (
        "import sys, claude_sidecar.frontends.acp.serve; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pygls', 'lsprotocol'}))"
    )
    assert printed_by(probe) == "[]"


# Runs load_mcp with a task beside it that counts its turns: the event loop goes on while the
# mcp package is imported, instead of waiting for it.
_LOOP_DURING_LOAD = """
import asyncio, sys
from claude_sidecar.channel import editor_tools

async def main():
    turns, loading = 0, True
    async def beside():
        nonlocal turns
        while loading:
            turns += 1
            await asyncio.sleep(0)
    counting = asyncio.ensure_future(beside())
    await asyncio.sleep(0)
    before = turns
    await editor_tools.load_mcp()
    loading = False
    await counting
    print(turns - before, "mcp.server.lowlevel" in sys.modules)

asyncio.run(main())
"""


def test_the_mcp_package_of_editor_tools_loads_while_the_event_loop_goes_on() -> None:
    # Imported in the loop, it held every request of the daemon for ~0.9 s.
    turns, loaded = printed_by(_LOOP_DURING_LOAD).split()

    assert loaded == "True"
    assert int(turns) > 10, f"the loop took {turns} turns while mcp was imported"


def test_the_daemon_does_not_load_the_mcp_package_until_a_client_declares_editor_tools() -> None:
    probe = (
        "import sys, claude_sidecar.commands.main, claude_sidecar.frontends.server.server; "
        "print('mcp' in sys.modules)"
    )
    assert printed_by(probe) == "False"
