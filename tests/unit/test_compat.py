"""The tested CLI range: versions compare as numbers, not as text."""

from __future__ import annotations

import pytest
from claude_sidecar.cli import compat


def test_versions_compare_numerically() -> None:
    newer, older = compat.version_key("2.1.330"), compat.version_key("2.1.99")
    assert newer is not None and older is not None and newer > older
    assert compat.version_key("2.1.330 (Claude Code)") == (2, 1, 330)
    assert compat.version_key("no version here") is None


def test_the_pinned_cli_is_in_the_tested_range_and_others_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compat, "TESTED_CLI_VERSIONS", ("2.0.76", "2.1.330"))

    assert compat.in_tested_range("2.1.330")
    assert compat.in_tested_range("2.1.5")
    assert not compat.in_tested_range("2.1.331")
    assert not compat.in_tested_range("1.0.3")
    assert not compat.in_tested_range("garbage")
    assert compat.tested_range() == "2.0.76 … 2.1.330"


def test_the_bundled_cli_version_is_a_tested_one() -> None:
    from claude_agent_sdk._cli_version import __cli_version__

    assert __cli_version__ in compat.TESTED_CLI_VERSIONS


def test_the_pinned_version_is_the_bundled_cli_and_the_compat_one_is_older() -> None:
    from claude_agent_sdk._cli_version import __cli_version__

    assert __cli_version__ == compat.PINNED_CLI_VERSION
    assert compat.older_than(compat.COMPAT_CLI_VERSION, compat.PINNED_CLI_VERSION)
    assert set(compat.TESTED_CLI_VERSIONS) == {compat.COMPAT_CLI_VERSION, compat.PINNED_CLI_VERSION}


def test_an_unknown_version_counts_as_current() -> None:
    assert compat.older_than("2.1.233", "2.1.330")
    assert not compat.older_than("2.1.330", "2.1.330")
    assert not compat.older_than(None, "2.1.330")
    assert not compat.older_than("garbage", "2.1.330")
