#!/usr/bin/env python3
"""Run claude-sidecar from this checkout on any Python 3.8+, with nothing installed first.

    python3 bootstrap.py demo          # = uv run claude-sidecar demo
    python3 bootstrap.py --uv          # print the path of the uv it uses (getting it if needed)

From any directory: it runs the checkout's claude-sidecar with the current directory kept.

The project runs under uv (`uv.lock` pins every dependency). Most system Pythons may not be
written into (PEP 668: Debian 12, Ubuntu 23.04+, Fedora 38+, Homebrew's), so `pip install uv`
fails there. This script never writes into the Python that runs it. It uses, in order:

1. `uv` on PATH;
2. the uv it got before, in `.bootstrap/` of this checkout;
3. uv's wheel from the package index (`$PIP_INDEX_URL`, else PyPI), checked against the
   SHA-256 pinned below, its `uv` binary unpacked into `.bootstrap/bin`;
4. a virtual environment `.bootstrap/venv` made with this Python and `pip install uv`
   (pip's own configuration: mirrors, proxies, certificates), when 3 cannot be done.

Then `uv run` makes `.venv` with the Python the project needs (3.11+; uv downloads one when
none is installed) and runs the command. Kept to the standard library and Python 3.8 syntax:
it runs before anything else is there (macOS's own python3 is 3.9).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import venv
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import NoReturn

# The uv the project is tested with; bump its wheels below with it.
UV_VERSION = "0.13.9"

# Its wheel per platform (filename, SHA-256), from PyPI. The wheels hold one static binary.
UV_WHEELS: dict[str, tuple[str, str]] = {
    "linux-x86_64": (
        "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19",
    ),
    "linux-x86_64-musl": (
        "uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl",
        "2c45530751517d6c3bbc69a19473f6effe47cce047bede01ffd8af7ea7b36b25",
    ),
    "linux-aarch64": (
        "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
        "5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe",
    ),
    "macos-x86_64": (
        "uv-0.13.9-py3-none-macosx_10_12_x86_64.whl",
        "c16ed11e013557536b3e60065f1b912f6407bd6518e041b961e23ef9e6b4fbf5",
    ),
    "macos-arm64": (
        "uv-0.13.9-py3-none-macosx_11_0_arm64.whl",
        "66c512266d633bef48384a1f53003f41f2a8e7b36fe6e7fbfd3e0fd52d96fa63",
    ),
}

CHECKOUT = Path(__file__).resolve().parent
BOOTSTRAP = CHECKOUT / ".bootstrap"
DEFAULT_INDEX = "https://pypi.org/simple/"


class BootstrapError(Exception):
    """A step that could not be done, with what the user can do about it."""


def say(text: str) -> None:
    """Progress goes to stderr: stdout belongs to the command run (and to --uv's answer)."""
    print("bootstrap: " + text, file=sys.stderr, flush=True)


def platform_key(
    system: str | None = None, machine: str | None = None, libc: str | None = None
) -> str | None:
    """The key of UV_WHEELS for this machine (or the one described), None when none fits."""
    system = system if system is not None else platform.system()
    machine = (machine if machine is not None else platform.machine()).lower()
    if system == "Darwin":
        return {"x86_64": "macos-x86_64", "arm64": "macos-arm64"}.get(machine)
    if system != "Linux":
        return None
    if machine in ("x86_64", "amd64"):
        if libc is None:
            libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
        # No glibc version: musl (Alpine), whose own wheel it needs.
        return "linux-x86_64" if libc else "linux-x86_64-musl"
    if machine in ("aarch64", "arm64"):
        return "linux-aarch64"
    return None


def uv_version(uv: str) -> str | None:
    """The version `uv --version` prints, None when it does not run."""
    try:
        out = subprocess.run(
            [uv, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError:
        return None
    words = out.stdout.split()
    return words[1] if out.returncode == 0 and len(words) > 1 else None


def bootstrapped_uv() -> str | None:
    """The uv this script got before, if it still runs and is the pinned version."""
    for candidate in (BOOTSTRAP / "bin" / "uv", BOOTSTRAP / "venv" / "bin" / "uv"):
        if candidate.is_file() and uv_version(str(candidate)) == UV_VERSION:
            return str(candidate)
    return None


class AnchorPage(HTMLParser):
    """The links of a PEP 503 page: the text of each <a> to its href."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, str] = {}
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None and data.strip():
            self.links[data.strip()] = self._href

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None


def wheel_url(index: str, filename: str) -> str:
    """The download address of FILENAME on a PEP 503/691 simple index."""
    request = urllib.request.Request(
        urllib.parse.urljoin(index.rstrip("/") + "/", "uv/"),
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        page_url = str(response.geturl())
        kind = response.headers.get("Content-Type", "")
    if "json" in kind:
        links = {str(e["filename"]): str(e["url"]) for e in json.loads(body)["files"]}
    else:
        # An index that serves only HTML (PEP 503): <a href="...">filename</a>.
        page = AnchorPage()
        page.feed(body.decode("utf-8", "replace"))
        links = page.links
    if filename in links:
        return urllib.parse.urljoin(page_url, links[filename].split("#", 1)[0])
    raise BootstrapError(f"{filename} is not on the index {index}")


def unpack_uv(wheel: bytes, sha256: str, target: Path) -> str:
    """Check WHEEL against SHA256 and put its uv binary into TARGET; returns its path."""
    digest = hashlib.sha256(wheel).hexdigest()
    if digest != sha256:
        raise BootstrapError(
            f"the downloaded uv wheel's SHA-256 is {digest}, not the pinned {sha256}: not using it"
        )
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        names = [n for n in archive.namelist() if n.endswith(".data/scripts/uv")]
        if not names:
            raise BootstrapError("the uv wheel holds no uv binary")
        data = archive.read(names[0])
    target.mkdir(parents=True, exist_ok=True)
    # Written beside, then renamed: an interrupted download never leaves half a binary.
    partial = target / "uv.partial"
    partial.write_bytes(data)
    partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    final = target / "uv"
    partial.replace(final)
    return str(final)


def download_uv() -> str:
    """Step 3: the pinned wheel from the index, hash-checked."""
    key = platform_key()
    if key is None:
        raise BootstrapError(f"no pinned uv wheel for {platform.system()} {platform.machine()}")
    filename, sha256 = UV_WHEELS[key]
    index = os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX
    say(f"downloading {filename} from {index}")
    try:
        url = wheel_url(index, filename)
        with urllib.request.urlopen(url, timeout=300) as response:
            wheel = response.read()
    except (OSError, ValueError, KeyError, urllib.error.URLError) as e:
        raise BootstrapError(f"could not download uv: {e}") from e
    return unpack_uv(wheel, sha256, BOOTSTRAP / "bin")


def pip_install_uv() -> str:
    """Step 4: a venv of this Python with uv pip-installed into it."""
    env_dir = BOOTSTRAP / "venv"
    say(f"making {env_dir} and installing uv=={UV_VERSION} into it with pip")
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(str(env_dir))
    except (OSError, subprocess.CalledProcessError) as e:
        # Debian and Ubuntu ship venv's pip (ensurepip) in a package of its own.
        raise BootstrapError(
            f"this Python cannot make a virtual environment with pip ({e}); on Debian or "
            "Ubuntu: sudo apt install python3-venv"
        ) from e
    python = env_dir / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "uv==" + UV_VERSION], check=False
    )
    uv = env_dir / "bin" / "uv"
    if done.returncode != 0 or not uv.is_file():
        raise BootstrapError(f"pip could not install uv=={UV_VERSION}")
    return str(uv)


def find_uv() -> str:
    """A uv to run the project with, getting one when there is none (steps 1 to 4)."""
    on_path = shutil.which("uv")
    if on_path and uv_version(on_path):
        return on_path
    got = bootstrapped_uv()
    if got:
        return got
    failures: list[str] = []
    # CLAUDE_SIDECAR_BOOTSTRAP=pip skips the download: for machines where only pip's own
    # configuration reaches an index, and for the tests of step 4.
    steps = [download_uv, pip_install_uv]
    if os.environ.get("CLAUDE_SIDECAR_BOOTSTRAP") == "pip":
        steps = [pip_install_uv]
    for step in steps:
        try:
            uv = step()
        except BootstrapError as e:
            failures.append(str(e))
            say(str(e))
            continue
        if uv_version(uv) == UV_VERSION:
            say(f"using uv {UV_VERSION} from {uv}")
            return uv
        failures.append(f"{uv} does not run")
    raise BootstrapError(
        "no uv could be had ({}). Install uv yourself (https://docs.astral.sh/uv/: "
        "`brew install uv`, `pipx install uv`, or its standalone installer), then run "
        "this again.".format("; ".join(failures))
    )


def fail(error: BootstrapError) -> NoReturn:
    """Stop with the error's text and a non-zero exit."""
    say(str(error))
    sys.exit(1)


def main(argv: list[str]) -> None:
    """`--uv`: print uv's path; anything else: `uv run claude-sidecar ARGS` in the checkout."""
    try:
        uv = find_uv()
    except BootstrapError as e:
        fail(e)
    if argv[:1] == ["--uv"]:
        print(uv)
        return
    command = [uv, "run", "--project", str(CHECKOUT), "claude-sidecar", *argv]
    # What the daemon names in its fixes (`... login`): the command the user has, not the
    # venv's claude-sidecar that `uv run` puts on the daemon's PATH only.
    os.environ["CLAUDE_SIDECAR_LAUNCHER"] = " ".join(
        shlex.quote(part) for part in (sys.executable, str(CHECKOUT / "bootstrap.py"))
    )
    sys.stdout.flush()
    os.execv(uv, command)


if __name__ == "__main__":
    main(sys.argv[1:])
