"""A stock system as a new user has it: the system's own python3, externally managed (PEP 668),
first on PATH, and no uv anywhere on it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.env import isolated_env
from tests.install.prerequisites import missing

SYSTEM_PYTHON = Path("/usr/bin/python3")


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
    # Its own temporary folder beside HOME: what the demo leaves for the user stays in it.
    tmp = home.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    if real_uv:
        # The packages uv already fetched, as on a machine where uv ran before; a fresh
        # machine fetches them from PyPI (uv's own download of uv is never cached).
        cache = subprocess.run([real_uv, "cache", "dir"], capture_output=True, text=True)
        if cache.returncode == 0:
            env["UV_CACHE_DIR"] = cache.stdout.strip()
    return env
