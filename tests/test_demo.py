"""`claude-sidecar demo` plays a whole session on the stand-in model."""

from __future__ import annotations

import os
import subprocess
import sys


def test_demo_streams_thinking_text_and_a_real_tool_call() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}

    done = subprocess.run([sys.executable, "-m", "claude_sidecar", "demo"], env=env,
                          capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "thinking…" in out and "claude:" in out
    assert "tool call Write" in out and "tool result: File created successfully" in out
    assert "turn success" in out
    assert "the Write tool really ran" in out
