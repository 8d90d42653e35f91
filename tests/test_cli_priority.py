"""A chat's CLI, and the tools it runs, run below the editor's CPU priority (nice 10 unless
``--cli-nice`` or ``CLAUDE_SIDECAR_CLI_NICE`` says otherwise), so that the editor draws the
answer as it streams on a busy machine (claude_sidecar.cli.priority). Linux's own path sets
the CLI's autogroup too; the portable one (macOS) sets the process group's niceness alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import both_platform_paths, daemon_argv
from tests.harness import Sidecar, StartSidecar

pytestmark = pytest.mark.same_on_every_cli("the daemon's own scheduling of the CLI process")

RUN_NICE = {
    "rules": [
        {
            "match": "(?i)niceness",
            "steps": [
                [{"tool_use": {"name": "Bash", "input": {"command": "nice > niceness.txt"}}}],
                [{"text": "Written."}],
            ],
        }
    ],
    "default": [[{"text": "?"}]],
}


def thread_niceness(pid: int) -> set[int]:
    """The niceness of each thread of process ``pid`` (field 19 of its stat)."""
    values = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        stat = (task / "stat").read_text()
        # After the command's closing parenthesis: state is field 3, niceness field 19.
        values.add(int(stat.rsplit(")", 1)[1].split()[16]))
    return values


def autogroup_niceness(pid: int) -> int:
    """The niceness of the autogroup of process ``pid`` (``/autogroup-N nice K``)."""
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])


@both_platform_paths
async def test_a_chats_cli_and_the_tools_it_runs_run_at_nice_10(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, platform_path: str
) -> None:
    model.set_scenario(load_scenario(RUN_NICE))
    opened = await sidecar.open_channel(cwd=str(workspace), allowedTools=["Bash"])
    pid = opened["pid"]

    await sidecar.turn(opened["channelId"], "write your niceness down")

    assert thread_niceness(pid) == {10}
    assert (workspace / "niceness.txt").read_text().strip() == "10"
    # Linux weighs a session's processes as one by its autogroup's niceness: set on Linux's
    # own path only (the portable path, macOS's, has no autogroups to set).
    assert autogroup_niceness(pid) == (10 if platform_path == "native" else 0)


async def test_cli_nice_sets_the_clis_niceness_and_0_leaves_the_daemons(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    lowest = await sidecar_with({}, args=("--cli-nice", "19"))
    as_daemon = await sidecar_with({}, args=("--cli-nice", "0"))

    lowest_pid = (await lowest.open_channel(cwd=str(workspace)))["pid"]
    daemons_pid = (await as_daemon.open_channel(cwd=str(workspace)))["pid"]

    assert (thread_niceness(lowest_pid), autogroup_niceness(lowest_pid)) == ({19}, 19)
    assert (thread_niceness(daemons_pid), autogroup_niceness(daemons_pid)) == ({0}, 0)


async def test_the_environment_sets_the_niceness_when_no_flag_does(
    sidecar_with: StartSidecar, workspace: Path
) -> None:
    # Editors start the daemon with arguments of their own: CLAUDE_SIDECAR_CLI_NICE reaches
    # it through their environment.
    daemon = await sidecar_with({}, CLAUDE_SIDECAR_CLI_NICE="3")

    pid = (await daemon.open_channel(cwd=str(workspace)))["pid"]

    assert (thread_niceness(pid), autogroup_niceness(pid)) == ({3}, 3)


def test_a_niceness_out_of_range_in_the_environment_stops_the_daemon_naming_it(
    daemon_env: dict[str, str],
) -> None:
    started = subprocess.run(
        daemon_argv("--stdio"),
        env={**daemon_env, "CLAUDE_SIDECAR_CLI_NICE": "20"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert started.returncode == 2
    assert "CLAUDE_SIDECAR_CLI_NICE is '20': expected a niceness from 0 to 19" in started.stderr
