"""The wheel installed with ``uv tool install`` (PyPI's users run ``uv tool install
claude-sidecar``), run from the installed command outside the checkout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import acp
import pytest

from tests.install.conftest import ROOT, VERSION, Packages, Scratch, run


@pytest.fixture(scope="module")
def installed(uv: str, packages: Packages, scratch: Scratch) -> Path:
    """The installed ``claude-sidecar`` command."""
    run([uv, "tool", "install", str(packages.wheel)], cwd=scratch.dir, env=scratch.env)
    command = scratch.bin / "claude-sidecar"
    assert command.exists()
    return command


def test_wheel_installed_with_uv_tool_runs_its_own_copy_not_the_checkout(
    installed: Path, scratch: Scratch
) -> None:
    python = Path(scratch.env["UV_TOOL_DIR"]) / "claude-sidecar" / "bin" / "python"
    said = run(
        [
            str(python),
            "-c",
            "import claude_sidecar, sys; print(claude_sidecar.__file__); print(sys.path)",
        ],
        cwd=scratch.dir,
        env=scratch.env,
    ).stdout.splitlines()

    assert Path(said[0]).is_relative_to(scratch.dir)
    assert str(ROOT) not in said[1]
    assert installed.resolve().is_relative_to(scratch.dir)


def test_wheel_installed_with_uv_tool_says_the_pyproject_version(
    installed: Path, scratch: Scratch
) -> None:
    said = run([str(installed), "--version"], cwd=scratch.dir, env=scratch.env).stdout

    assert said == f"claude-sidecar {VERSION}\n"


def test_wheel_installed_with_uv_tool_doctor_finds_the_bundled_cli(
    installed: Path, scratch: Scratch
) -> None:
    env = {**scratch.env, "ANTHROPIC_API_KEY": "sk-ant-the-users-own"}
    report = json.loads(run([str(installed), "doctor", "--json"], cwd=scratch.dir, env=env).stdout)

    assert report["daemonVersion"] == VERSION
    assert report["problems"] == []
    cli = report["cli"]
    assert cli["source"] == "claude-agent-sdk bundle"
    assert cli["error"] is None and cli["tested"] is True
    assert Path(cli["path"]).is_relative_to(scratch.dir)
    assert report["configDir"] == str(scratch.home / ".claude")


def test_wheel_installed_with_uv_tool_runs_the_demo(installed: Path, scratch: Scratch) -> None:
    out = run([str(installed), "demo"], cwd=scratch.dir, env=scratch.env).stdout

    write = out.index("✎ file updated by Write: ")
    edit = out.index("✎ file updated by Edit: ")
    assert out.index("  +Cursor blinks at dawn\n", write) < edit
    assert out.index("  -code wakes, line by line\n", edit) < out.index(
        "  +tests turn green by noon\n", edit
    )
    assert out.count("turn success") == 2


def test_wheel_installed_with_uv_tool_answers_acp_initialize_with_its_version(
    installed: Path, scratch: Scratch
) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": {}},
    }
    with (
        (scratch.dir / "acp.log").open("w") as log,
        subprocess.Popen(
            [str(installed), "acp"],
            cwd=scratch.dir,
            env=scratch.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        ) as agent,
    ):
        assert agent.stdin is not None and agent.stdout is not None
        agent.stdin.write(json.dumps(request) + "\n")
        agent.stdin.flush()
        answer = json.loads(agent.stdout.readline())
        agent.stdin.close()  # the client goes: the agent ends
        assert agent.wait(timeout=60) == 0

    assert answer["id"] == 1, answer
    assert answer["result"]["protocolVersion"] == acp.PROTOCOL_VERSION
    assert answer["result"]["agentInfo"]["name"] == "claude-sidecar"
    assert answer["result"]["agentInfo"]["version"] == VERSION
