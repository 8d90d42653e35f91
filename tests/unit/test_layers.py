"""The import contracts of pyproject.toml (``uv run lint-imports``, in the Python static
checks) break on what they forbid. Each test copies the package, adds one import the
contracts forbid and runs import-linter on the copy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_with(tmp_path: Path, module: str, added: str) -> subprocess.CompletedProcess[str]:
    """import-linter's verdict on a copy of the package in which ``module`` (a path under
    claude_sidecar/) ends with the lines ``added``."""
    shutil.copytree(ROOT / "claude_sidecar", tmp_path / "claude_sidecar")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / "claude_sidecar" / module).open("a") as f:
        f.write("\n" + added)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tmp_path,
        # The copy, not the checkout, is the package import-linter finds.
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_as_it_is_keeps_every_contract(tmp_path: Path) -> None:
    verdict = _lint_with(tmp_path, "channel/routing.py", "# nothing added\n")

    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert "BROKEN" not in verdict.stdout


def test_a_type_level_cycle_between_two_modules_breaks_the_no_cycle_contract(
    tmp_path: Path,
) -> None:
    # The cycle routing.Routed broke: the router naming its channel's class again.
    verdict = _lint_with(
        tmp_path,
        "channel/routing.py",
        "if TYPE_CHECKING:\n    from claude_sidecar.channel.channel import Channel  # noqa\n",
    )

    assert verdict.returncode != 0
    assert "No import cycle between the modules of any package BROKEN" in verdict.stdout
    assert ".routing -> .channel" in verdict.stdout


def test_the_cli_side_importing_a_front_end_breaks_the_layers(tmp_path: Path) -> None:
    verdict = _lint_with(
        tmp_path, "cli/transport.py", "from claude_sidecar.frontends.server import outbox\n"
    )

    assert verdict.returncode != 0
    assert "The CLI side knows nothing of channels, the hub or front ends BROKEN" in verdict.stdout
    assert "claude_sidecar.cli.transport -> claude_sidecar.frontends.server.outbox" in (
        verdict.stdout.replace("\n", " ").replace("  ", " ")
    )


def test_the_acp_agent_importing_the_claude_server_breaks_their_independence(
    tmp_path: Path,
) -> None:
    verdict = _lint_with(
        tmp_path, "frontends/acp/meter.py", "from claude_sidecar.frontends.server import attach\n"
    )

    assert verdict.returncode != 0
    assert (
        "Front ends: the ACP agent and the claude/* server know nothing of each other BROKEN"
        in verdict.stdout
    )
