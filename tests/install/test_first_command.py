"""The README's first command, as a new user runs it: on the system's own python3, which is
externally managed (PEP 668: pip may not write into it), with no uv anywhere on PATH, in a
fresh copy of the checkout."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import bootstrap
from tests.checkout import copy_checkout
from tests.install.stock import site_packages, stock_env

CHECKOUT = Path(__file__).resolve().parents[2]


def readme_first_command() -> str:
    """The first line of the README's "Try it" block, without its comment."""
    readme = (CHECKOUT / "README.md").read_text()
    block = re.search(r"## Try it.*?```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no ```sh block under its '## Try it' heading"
    return block.group(1).splitlines()[0].split("  #", 1)[0].strip()


def in_checkout(
    checkout: Path, env: dict[str, str], *command: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """COMMAND run in CHECKOUT as the user: output captured, its exit code left to the test."""
    return subprocess.run(
        list(command), cwd=checkout, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def first_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, str], dict[str, list[str]]]:
    """The README's first command, run once in a fresh copy by a user without uv."""
    root = tmp_path_factory.mktemp("first-command")
    checkout = copy_checkout(root / "claude-sidecar")
    env = stock_env(root / "home", root / "bin")
    before = site_packages()
    done = in_checkout(checkout, env, "bash", "-c", readme_first_command(), timeout=900)
    return done, checkout, env, before


def test_readme_first_command_runs_the_demo_on_the_systems_python_without_uv(
    first_run: tuple[subprocess.CompletedProcess[str], Path, dict[str, str], object],
) -> None:
    done, checkout, _, _ = first_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("turn success") == 2
    assert "the tools really ran" in done.stdout
    assert (checkout / ".bootstrap" / "bin" / "uv").is_file()
    assert "downloading uv-" in done.stderr


def test_readme_first_command_writes_nothing_into_the_systems_python(
    first_run: tuple[subprocess.CompletedProcess[str], Path, dict[str, str], dict[str, list[str]]],
) -> None:
    done, _, env, before = first_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert site_packages() == before
    # Nor into the user's own site-packages (pip install --user).
    assert not (Path(env["HOME"]) / ".local" / "lib").exists()


def test_bootstrap_reuses_the_uv_it_got_before(
    first_run: tuple[subprocess.CompletedProcess[str], Path, dict[str, str], object],
) -> None:
    _, checkout, env, _ = first_run
    again = in_checkout(checkout, env, "python3", "bootstrap.py", "--uv", timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(checkout / ".bootstrap" / "bin" / "uv")
    assert "downloading" not in again.stderr


def test_bootstrap_uses_the_uv_already_on_path(tmp_path: Path) -> None:
    checkout = tmp_path / "claude-sidecar"
    checkout.mkdir()
    shutil.copy2(CHECKOUT / "bootstrap.py", checkout)
    env = stock_env(tmp_path / "home", tmp_path / "bin", with_uv=True)

    done = in_checkout(checkout, env, "python3", "bootstrap.py", "--uv", timeout=120)
    assert done.returncode == 0, done.stderr

    assert done.stdout.strip() == shutil.which("uv")
    assert not (checkout / ".bootstrap").exists()


def test_bootstrap_without_the_download_installs_uv_with_pip_into_its_own_venv(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "claude-sidecar"
    checkout.mkdir()
    shutil.copy2(CHECKOUT / "bootstrap.py", checkout)
    env = stock_env(tmp_path / "home", tmp_path / "bin")
    env["CLAUDE_SIDECAR_BOOTSTRAP"] = "pip"

    done = in_checkout(checkout, env, "python3", "bootstrap.py", "--uv", timeout=600)

    assert done.returncode == 0, done.stderr[-3000:]
    uv = checkout / ".bootstrap" / "venv" / "bin" / "uv"
    assert done.stdout.strip() == str(uv)
    version = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.split()[1] == bootstrap.UV_VERSION


def test_in_a_checkout_the_sign_in_fix_names_the_bootstrap_command_the_user_has(
    first_run: tuple[subprocess.CompletedProcess[str], Path, dict[str, str], object],
) -> None:
    _, checkout, env, _ = first_run
    # No credentials in this HOME: doctor names the sign-in command. `uv run` put the venv's
    # claude-sidecar on the daemon's PATH only; the user has bootstrap.py.
    done = in_checkout(checkout, env, "python3", "bootstrap.py", "doctor", timeout=300)

    (problem,) = [line for line in done.stdout.splitlines() if line.startswith("problem:")]
    assert (
        f"run `{Path(env['PATH'].split(':')[0]) / 'python3'} {checkout / 'bootstrap.py'} login`"
        in problem
    )
