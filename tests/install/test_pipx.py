"""The wheel installed with pipx, as a user without pipx gets it (``uvx pipx``), with pipx's
pip backend: the one distributions' own pipx packages use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.install.conftest import VERSION, Packages, Scratch, run

PIPX = "pipx==1.18.4"
"""Pinned, as the project pins its tools: a new pipx changes no test's outcome by itself."""


@pytest.fixture(scope="module")
def installed(uv: str, packages: Packages, scratch: Scratch) -> Path:
    """The ``claude-sidecar`` command pipx installed."""
    run(
        [
            uv,
            "tool",
            "run",
            "--from",
            PIPX,
            "pipx",
            "install",
            "--backend",
            "pip",
            str(packages.wheel),
        ],
        cwd=scratch.dir,
        env=scratch.env,
        timeout=300,
    )
    command = scratch.bin / "claude-sidecar"
    assert command.resolve().is_relative_to(Path(scratch.env["PIPX_HOME"]))
    return command


def test_wheel_installed_with_pipx_says_the_pyproject_version(
    installed: Path, scratch: Scratch
) -> None:
    said = run([str(installed), "--version"], cwd=scratch.dir, env=scratch.env).stdout

    assert said == f"claude-sidecar {VERSION}\n"


def test_wheel_installed_with_pipx_doctor_finds_the_bundled_cli(
    installed: Path, scratch: Scratch
) -> None:
    env = {**scratch.env, "ANTHROPIC_API_KEY": "sk-ant-the-users-own"}
    report = json.loads(run([str(installed), "doctor", "--json"], cwd=scratch.dir, env=env).stdout)

    assert report["daemonVersion"] == VERSION
    assert report["problems"] == []
    assert report["cli"]["source"] == "claude-agent-sdk bundle"
    assert report["cli"]["error"] is None and report["cli"]["tested"] is True
    assert Path(report["cli"]["path"]).is_relative_to(Path(scratch.env["PIPX_HOME"]))
