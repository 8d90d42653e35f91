"""What each front end loads at start: only its own JSON-RPC library."""

from __future__ import annotations

import subprocess
import sys


def test_the_acp_agent_loads_neither_pygls_nor_lsprotocol() -> None:
    # lsprotocol's types alone cost 0.3 s or more of CPU at every start of the agent.
    probe = (
        "import sys, claude_sidecar.frontends.acp.serve; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pygls', 'lsprotocol'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "[]"
