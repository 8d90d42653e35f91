"""The plugin's pure-Lua units (transcript, rendering), run in headless Neovim."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.nvim.editor import PLUGIN, nvim_binary

SPECS = sorted((PLUGIN / "tests").glob("*_spec.lua"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_lua_spec_passes(spec: Path) -> None:
    run = subprocess.run(
        [
            nvim_binary(),
            "--headless",
            "--clean",
            "-l",
            str(PLUGIN / "tests" / "run.lua"),
            str(spec),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.returncode == 0, run.stdout + run.stderr
    assert " 0 failed" in run.stdout
