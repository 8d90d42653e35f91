"""Credentials from the environment never reach the logs or error messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.harness import StartSidecar

SECRET = "sk-ant-api03-SECRET-do-not-log-0123456789"


async def test_api_keys_and_tokens_do_not_appear_in_debug_logs_or_errors(
    sidecar_with: StartSidecar, workspace: Path, tmp_path: Path
) -> None:
    log_file = tmp_path / "daemon.log"
    daemon = await sidecar_with(
        {},
        args=("--log-file", str(log_file)),
        ANTHROPIC_API_KEY=SECRET,
        ANTHROPIC_AUTH_TOKEN=SECRET + "-tok",
    )

    channel = await daemon.new_channel(str(workspace), env={"GITHUB_TOKEN": SECRET})
    await daemon.turn(channel, "hello")
    error = await daemon.error("claude/newChannel", {"cwd": "relative", "env": {"K": SECRET}})
    await daemon.stop()

    logged = log_file.read_text()
    assert "CLI exited" in logged, "the log was written"
    assert SECRET not in logged
    assert SECRET not in error.message and SECRET not in str(error.data)


def test_a_child_process_never_inherits_the_daemons_stdout(tmp_path: Path) -> None:
    # A stray print in the daemon goes to stderr, not into the JSON-RPC stream.
    code = (
        "from claude_sidecar.runtime.stdout import claim_stdout; out = claim_stdout(); "
        "print('stray'); import subprocess; subprocess.run(['echo', 'child']); "
        "out.write(b'RPC')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)

    assert done.stdout == b"RPC"
    assert b"stray" in done.stderr and b"child" in done.stderr
