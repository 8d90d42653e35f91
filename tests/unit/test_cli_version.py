"""Asking a CLI binary its version (cli/discovery.py)."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.cli import discovery


def flaky_cli(tmp_path: Path) -> Path:
    """A CLI whose first `--version` fails (as one that timed out on a loaded machine) and
    whose later ones answer."""
    cli = tmp_path / "claude"
    asked = tmp_path / "asked"
    cli.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{asked}" ]; then echo "2.1.999 (Claude Code)"; exit 0; fi\n'
        f'touch "{asked}"; echo "busy" >&2; exit 1\n'
    )
    cli.chmod(0o755)
    return cli


def test_a_cli_that_could_not_tell_its_version_is_asked_again(tmp_path: Path) -> None:
    cli = flaky_cli(tmp_path)

    assert discovery.known_cli_version(str(cli)) is None
    assert discovery.known_cli_version(str(cli)) == "2.1.999"


def test_a_version_the_daemon_learned_at_initialize_is_not_asked_again(tmp_path: Path) -> None:
    cli = flaky_cli(tmp_path)
    (tmp_path / "asked").touch()

    described = discovery.describe_cli(str(cli))
    (tmp_path / "asked").unlink()  # a new `--version` would now fail

    assert described.version == "2.1.999"
    assert discovery.known_cli_version(str(cli)) == "2.1.999"
