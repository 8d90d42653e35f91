"""An outside ACP client: ``acpx`` (npm, on Node 22) runs a prompt through
``claude-sidecar acp`` against the real CLI and the stand-in model, answers the Write's
permission request by its own policy, and the file on disk shows what it chose.

``tests/acp/toolchain.sh acpx`` installs acpx into ``.cache/acp/`` the first time (about
30 s; later runs find it). Without npm or the registry the tests skip; with CI=true they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.harness import json_object, wait_until_dead

TOOLCHAIN = Path(__file__).with_name("toolchain.sh")
NOTE = "written through acpx\n"
WRITE = {"name": "Write", "input": {"file_path": "{cwd}/note.txt", "content": NOTE}}
SCENARIO = {
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [{"tool_use": WRITE}],
                [{"text": "Finished."}],
            ],
        }
    ],
    "default": [[{"text": "Hello!"}]],
}
# acpx's exit code when a permission request was denied (its EXIT_CODES.PERMISSION_DENIED).
ACPX_PERMISSION_DENIED = 5
# The first run installs Node 22 and acpx inside the fixture (pytest-timeout counts it).
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="session")
def acpx() -> str:
    """The acpx wrapper, installed by tests/acp/toolchain.sh when missing."""
    done = subprocess.run(
        ["bash", str(TOOLCHAIN), "acpx"], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()][-3:]
        why = f"acpx could not be installed: {' / '.join(said)}"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(f"{why} (with CI=true this fails)")
    return done.stdout.strip().splitlines()[-1]


@dataclass
class Run:
    """What one ``acpx exec`` did: its exit code and every JSON-RPC message it logged
    (``--format json`` prints both directions of the connection)."""

    returncode: int
    messages: list[dict[str, Any]]
    stderr: str

    def request(self, method: str) -> dict[str, Any]:
        """The one request of ``method`` (with its ``id``)."""
        (found,) = [m for m in self.messages if m.get("method") == method and "id" in m]
        return found

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``request``: the message with its id that is not a request and
        came after it (both sides number their requests from 0)."""
        after = self.messages[self.messages.index(request) + 1 :]
        return next(m for m in after if m.get("id") == request["id"] and "method" not in m)

    def tool_call(self, tool_call_id: str) -> dict[str, Any]:
        """The tool call as acpx saw it: its ``tool_call`` with every update applied."""
        call: dict[str, Any] = {}
        for m in self.messages:
            update = m.get("params", {}).get("update", {}) if m.get("method") else {}
            if update.get("toolCallId") == tool_call_id:
                call.update(update)
        return call


async def run_acpx(acpx: str, env: dict[str, str], cwd: Path, *args: str) -> Run:
    agent = shlex.join([sys.executable, "-m", "claude_sidecar", "acp", "--warm-pool", "0"])
    process = await asyncio.create_subprocess_exec(
        acpx,
        "--format",
        "json",
        "--cwd",
        str(cwd),
        "--timeout",
        "120",
        *args,
        "--agent",
        agent,
        "exec",
        "please write the note",
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 240)
    lines = [line for line in stdout.decode().splitlines() if line.startswith("{")]
    messages = [json_object(json.loads(line)) for line in lines]
    assert process.returncode is not None
    return Run(process.returncode, messages, stderr.decode())


async def test_acpx_allows_the_write_it_is_asked_about_and_the_file_is_written(
    acpx: str, daemon_env: dict[str, str], model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))

    run = await run_acpx(acpx, daemon_env, workspace, "--approve-all")

    assert run.returncode == 0, run.stderr[-2000:]
    assert (workspace / "note.txt").read_text() == NOTE
    ask = run.request("session/request_permission")
    assert ask["params"]["toolCall"]["kind"] == "edit"
    assert ask["params"]["toolCall"]["content"] == [
        {"type": "diff", "path": str(workspace / "note.txt"), "newText": NOTE}
    ]
    assert {o["optionId"]: o["kind"] for o in ask["params"]["options"]} == {
        "allow": "allow_once",
        "allowAlways": "allow_always",
        "deny": "reject_once",
    }
    assert run.answer(ask)["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
    call = run.tool_call(ask["params"]["toolCall"]["toolCallId"])
    assert call["status"] == "completed"
    assert run.answer(run.request("session/prompt"))["result"]["stopReason"] == "end_turn"
    # acpx ended the agent (closed its stdin): the session's CLI went with it.
    cli = run.answer(run.request("session/new"))["result"]["_meta"]["claudeSidecar"]["pid"]
    assert await wait_until_dead([cli]) == [], "the session's CLI outlived acpx"


async def test_acpx_denies_the_write_and_the_file_stays_as_it_was(
    acpx: str, daemon_env: dict[str, str], model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    (workspace / "note.txt").write_text("old\n")

    run = await run_acpx(acpx, daemon_env, workspace, "--deny-all")

    assert run.returncode == ACPX_PERMISSION_DENIED, run.stderr[-2000:]
    assert (workspace / "note.txt").read_text() == "old\n"
    ask = run.request("session/request_permission")
    assert ask["params"]["toolCall"]["content"] == [
        {"type": "diff", "path": str(workspace / "note.txt"), "oldText": "old\n", "newText": NOTE}
    ]
    assert run.answer(ask)["result"]["outcome"] == {"outcome": "selected", "optionId": "deny"}
    call = run.tool_call(ask["params"]["toolCall"]["toolCallId"])
    assert call["status"] == "failed"
    assert call["_meta"]["claudeSidecar"]["status"] == "denied"
    assert run.answer(run.request("session/prompt"))["result"]["stopReason"] == "end_turn"
    cli = run.answer(run.request("session/new"))["result"]["_meta"]["claudeSidecar"]["pid"]
    assert await wait_until_dead([cli]) == [], "the session's CLI outlived acpx"
