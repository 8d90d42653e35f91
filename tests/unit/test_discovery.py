"""The CLI is found in a fixed order; when it is nowhere, every place is named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_sidecar.cli import discovery
from claude_sidecar.protocol.errors import CliNotFound


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    os.chmod(path, 0o755)
    return path


def test_explicit_path_wins(tmp_path: Path) -> None:
    explicit = _executable(tmp_path / "mine" / "claude")
    _executable(tmp_path / "bin" / "claude")

    found = discovery.find_cli(str(explicit), {"PATH": str(tmp_path / "bin")})

    assert found == str(explicit)


def test_a_wrong_explicit_path_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    _executable(tmp_path / "bin" / "claude")

    with pytest.raises(CliNotFound) as raised:
        discovery.find_cli(str(tmp_path / "missing"), {"PATH": str(tmp_path / "bin")})

    assert str(tmp_path / "missing") in raised.value.message


def test_env_var_comes_before_path(tmp_path: Path) -> None:
    from_env = _executable(tmp_path / "env" / "claude")
    _executable(tmp_path / "bin" / "claude")

    found = discovery.find_cli(
        None, {"CLAUDE_SIDECAR_CLI": str(from_env), "PATH": str(tmp_path / "bin")}
    )

    assert found == str(from_env)


def test_path_comes_before_the_bundled_binary(tmp_path: Path) -> None:
    on_path = _executable(tmp_path / "bin" / "claude")

    assert discovery.find_cli(None, {"PATH": str(tmp_path / "bin")}) == str(on_path)


def test_the_bundled_binary_is_found_without_path(tmp_path: Path) -> None:
    found = discovery.find_cli(None, {"PATH": str(tmp_path), "HOME": str(tmp_path)})

    assert found.endswith("claude_agent_sdk/_bundled/claude")


def test_nothing_found_names_every_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "_bundled_binary", lambda: None)

    with pytest.raises(CliNotFound) as raised:
        discovery.find_cli(None, {"PATH": str(tmp_path), "HOME": str(tmp_path)})

    looked = raised.value.data["looked"]
    assert [entry.split(" (")[0] for entry in looked] == [
        "PATH",
        "claude-agent-sdk bundle",
        "~/.claude/local",
    ]
    assert raised.value.code == -32004
