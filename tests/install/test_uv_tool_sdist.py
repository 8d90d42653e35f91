"""The sdist installed with ``uv tool install``: it builds (what a platform without a
matching wheel, or ``--no-binary``, does) and the command it installs runs."""

from __future__ import annotations

from tests.install.conftest import VERSION, Packages, Scratch, run


def test_sdist_installed_with_uv_tool_builds_and_says_the_pyproject_version(
    uv: str, packages: Packages, scratch: Scratch
) -> None:
    run([uv, "tool", "install", str(packages.sdist)], cwd=scratch.dir, env=scratch.env)

    said = run([str(scratch.bin / "claude-sidecar"), "--version"], cwd=scratch.dir, env=scratch.env)

    assert said.stdout == f"claude-sidecar {VERSION}\n"
