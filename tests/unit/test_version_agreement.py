"""One version: pyproject.toml's, which every other statement of it agrees with."""

from __future__ import annotations

from pathlib import Path

import claude_sidecar

from release import versions

ROOT = Path(__file__).resolve().parents[2]


def test_every_statement_of_the_version_agrees_with_pyproject() -> None:
    problems = versions.disagreements(ROOT)

    assert problems == [], (
        "\n"
        + "\n".join(problems)
        + ("\n(`uv run python -m release set-version X.Y.Z` writes one version everywhere)")
    )


def test_the_daemon_reports_the_pyproject_version() -> None:
    assert claude_sidecar.__version__ == versions.source_version(ROOT)
