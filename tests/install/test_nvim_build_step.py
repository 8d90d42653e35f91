"""The Neovim plugin's build step (editors/nvim/build.lua, which lazy.nvim, vim.pack and
packer run on install) on a stock system: the system's own python3 and no uv on PATH."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.checkout import copy_checkout
from tests.install.stock import site_packages, stock_env
from tests.nvim.editor import nvim_binary


def test_build_step_without_uv_installs_the_daemon_through_bootstrap(tmp_path: Path) -> None:
    checkout = copy_checkout(tmp_path / "claude-sidecar")
    env = stock_env(tmp_path / "home", tmp_path / "bin")
    (tmp_path / "bin" / "nvim").symlink_to(nvim_binary())
    before = site_packages()

    done = subprocess.run(
        ["nvim", "-l", str(checkout / "editors" / "nvim" / "build.lua")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )

    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    uv = checkout / ".bootstrap" / "bin" / "uv"
    assert f"{uv} sync --no-dev --frozen" in said
    daemon = checkout / ".venv" / "bin" / "claude-sidecar"
    version = subprocess.run([str(daemon), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "claude-sidecar" in version.stdout
    assert (checkout / "editors" / "nvim" / "doc" / "tags").is_file()
    assert site_packages() == before
