"""``build``: every artifact of a release into one directory, with their SHA-256 sums.

Each artifact is built the way its ecosystem builds it: the wheel and sdist with ``uv build``
(PyPI), the VS Code extension with ``npm run package`` (vsce: Marketplace and Open VSX), the
standalone IntelliJ client app with Maven (one runnable jar, on the GitHub release). The
Neovim plugin has no artifact: plugin managers install it from the repository at the release's
tag (editors/nvim/README.md), its build step installing the daemon from the same checkout.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from release import changelog, schema_diff, versions

SUMS = "SHA256SUMS"


def refusals(root: Path) -> list[str]:
    """Why a release of this tree must not be built: a version that disagrees somewhere, no
    CHANGELOG.md section for it, or a protocol that breaks the last release's clients without
    a new protocol version. Empty when it may."""
    version = versions.source_version(root)
    problems = versions.disagreements(root) + schema_diff.refusals(root)
    if not changelog.has_release((root / changelog.PATH).read_text(encoding="utf-8"), version):
        problems.append(
            f'{changelog.PATH} has no "## {version}" section: `set-version {version}` moves '
            f"what is under Unreleased into one"
        )
    return problems


def uncommitted(root: Path) -> list[str]:
    """Why the tree is not what a tag names: its uncommitted changes to tracked files (the
    artifacts would hold them), or that it is no git checkout."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if status.returncode != 0:
        return [f"{root} is not a git checkout: {status.stderr.strip()}"]
    changed = status.stdout.splitlines()
    if not changed:
        return []
    return [
        "uncommitted changes (build from a clean checkout of the tag, or pass "
        "--allow-uncommitted to try a build):\n" + "\n".join(changed)
    ]


def build(root: Path, out: Path, *, allow_uncommitted: bool = False) -> list[Path]:
    """Build every artifact into ``out`` (emptied first) and write ``out/SHA256SUMS``.
    Returns the artifacts, the sums file last. ValueError when ``refusals`` (or, unless
    allowed, ``uncommitted``) has any; CalledProcessError when a build step fails."""
    problems = refusals(root) + ([] if allow_uncommitted else uncommitted(root))
    if problems:
        raise ValueError("\n".join(problems))
    version = versions.source_version(root)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    steps: list[Callable[[Path, Path, str], list[Path]]] = [
        python_packages,
        vscode_extension,
        intellij_app,
    ]
    artifacts = [artifact for step in steps for artifact in step(root, out, version)]
    artifacts.append(write_sums(out, artifacts))
    return artifacts


def python_packages(root: Path, out: Path, version: str) -> list[Path]:
    """The wheel and the sdist (PyPI: ``uv publish``)."""
    _run(["uv", "build", "--out-dir", str(out), str(root)], root)
    return [
        out / f"claude_sidecar-{version}-py3-none-any.whl",
        out / f"claude_sidecar-{version}.tar.gz",
    ]


def vscode_extension(root: Path, out: Path, version: str) -> list[Path]:
    """The .vsix (VS Code Marketplace: ``vsce publish``; Open VSX: ``ovsx publish``)."""
    here = root / "editors" / "vscode"
    installed = here / "node_modules" / ".package-lock.json"
    lock = here / "package-lock.json"
    if not installed.exists() or lock.stat().st_mtime > installed.stat().st_mtime:
        _run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], here)
    _run(["npm", "run", "package"], here)
    return [_copy(here / "dist" / "claude-sidecar.vsix", out / f"claude-sidecar-{version}.vsix")]


def intellij_app(root: Path, out: Path, version: str) -> list[Path]:
    """The standalone IntelliJ client app, one runnable jar (``java -jar``; GitHub release),
    as editors/intellij/scripts/app-jar.sh builds it."""
    here = root / "editors" / "intellij"
    script = here / "scripts" / "app-jar.sh"
    print(f"release: bash {script} {out}", flush=True)
    said = subprocess.run(
        ["bash", str(script), str(out)], cwd=here, stdout=subprocess.PIPE, text=True, check=True
    ).stdout
    jar = Path(said.strip().splitlines()[-1])
    print(f"release: wrote {jar}", flush=True)
    return [jar]


def write_sums(out: Path, artifacts: list[Path]) -> Path:
    """``out/SHA256SUMS`` in sha256sum's format (``sha256sum -c SHA256SUMS`` checks it)."""
    lines = []
    for artifact in artifacts:
        digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
        lines.append(f"{digest}  {artifact.relative_to(out)}\n")
    sums = out / SUMS
    sums.write_text("".join(lines), encoding="utf-8")
    return sums


def _run(command: list[str], cwd: Path) -> None:
    print(f"release: {' '.join(command)}  (in {cwd})", flush=True)
    subprocess.run(command, cwd=cwd, check=True)


def _copy(source: Path, target: Path) -> Path:
    shutil.copyfile(source, target)
    print(f"release: wrote {target}", flush=True)
    return target
