"""The README's first command, as a new user runs it: on the system's own python3, which is
externally managed (PEP 668: pip may not write into it), with no uv anywhere on PATH, in a
fresh copy of the checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import bootstrap
from tests.env import isolated_env
from tests.install.prerequisites import missing

CHECKOUT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def readme_first_command() -> str:
    """The first line of the README's "Try it" block, without its comment."""
    readme = (CHECKOUT / "README.md").read_text()
    block = re.search(r"## Try it.*?```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no ```sh block under its '## Try it' heading"
    return block.group(1).splitlines()[0].split("  #", 1)[0].strip()


def copy_checkout(target: Path) -> Path:
    """The checkout's files (committed, staged or new; not ignored ones) copied to TARGET."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=CHECKOUT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = CHECKOUT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def site_packages() -> dict[str, list[str]]:
    """What the system Python's package folders hold, to see that nothing was added."""
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import site, sys; print('\\n'.join(site.getsitepackages()))"],
        capture_output=True,
        text=True,
        check=True,
    )
    folders = [Path(p) for p in done.stdout.split()]
    return {str(f): sorted(os.listdir(f)) for f in folders if f.is_dir()}


def stock_env(home: Path, bin_dir: Path, *, with_uv: bool = False) -> dict[str, str]:
    """A user's environment with only the system's python3 on PATH (and uv when WITH_UV):
    this machine's settings (certificates, proxies) kept, the suite's own cleared."""
    if not SYSTEM_PYTHON.is_file():
        missing(f"{SYSTEM_PYTHON} (the system's own Python) is not on this machine")
    managed = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not (Path(managed) / "EXTERNALLY-MANAGED").is_file():
        missing(f"{SYSTEM_PYTHON} is not externally managed (no {managed}/EXTERNALLY-MANAGED)")
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "python3").symlink_to(SYSTEM_PYTHON)
    path = [str(bin_dir), "/usr/bin", "/bin"]
    real_uv = shutil.which("uv")
    if with_uv:
        assert real_uv, "uv is not on this process's PATH"
        path.insert(0, str(Path(real_uv).parent))
    else:
        assert shutil.which("uv", path=os.pathsep.join(path)) is None
    env = isolated_env(home)
    for name in list(env):
        if name.startswith(("UV_", "VIRTUAL_ENV", "PYTHON", "SIDECAR_TEST")):
            del env[name]
    env["PATH"] = os.pathsep.join(path)
    if real_uv:
        # The packages uv already fetched, as on a machine where uv ran before; a fresh
        # machine fetches them from PyPI (uv's own download of uv is never cached).
        cache = subprocess.run([real_uv, "cache", "dir"], capture_output=True, text=True)
        if cache.returncode == 0:
            env["UV_CACHE_DIR"] = cache.stdout.strip()
    return env


@pytest.fixture(scope="module")
def first_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, str], dict[str, list[str]]]:
    """The README's first command, run once in a fresh copy by a user without uv."""
    root = tmp_path_factory.mktemp("first-command")
    checkout = copy_checkout(root / "claude-sidecar")
    env = stock_env(root / "home", root / "bin")
    before = site_packages()
    done = subprocess.run(
        ["bash", "-c", readme_first_command()],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
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
    again = subprocess.run(
        ["python3", "bootstrap.py", "--uv"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert again.stdout.strip() == str(checkout / ".bootstrap" / "bin" / "uv")
    assert "downloading" not in again.stderr


def test_bootstrap_uses_the_uv_already_on_path(tmp_path: Path) -> None:
    checkout = tmp_path / "claude-sidecar"
    checkout.mkdir()
    shutil.copy2(CHECKOUT / "bootstrap.py", checkout)
    env = stock_env(tmp_path / "home", tmp_path / "bin", with_uv=True)

    done = subprocess.run(
        ["python3", "bootstrap.py", "--uv"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

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

    done = subprocess.run(
        ["python3", "bootstrap.py", "--uv"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    uv = checkout / ".bootstrap" / "venv" / "bin" / "uv"
    assert done.stdout.strip() == str(uv)
    version = subprocess.run([str(uv), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.split()[1] == bootstrap.UV_VERSION
