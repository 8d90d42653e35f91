"""`claude-sidecar doctor` reports the CLI a channel would run and how it authenticates,
asking the real CLI in the daemon's environment, and never prints a secret."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from claude_agent_sdk._cli_version import __cli_version__

from tests.env import isolated_env

SECRET = "sk-ant-test-never-print-me"


def doctor(env: dict[str, str], *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return done.returncode, done.stdout


def doctor_json(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out = doctor(env, "--json", *args)
    return code, json.loads(out)


def without_credentials(home: Path) -> dict[str, str]:
    # No `claude` on this PATH: the doctor finds the bundled CLI.
    return isolated_env(home, PATH="/usr/bin:/bin")


def test_doctor_names_the_bundled_cli_its_version_and_the_key_source(home: Path) -> None:
    env = {
        **without_credentials(home),
        "ANTHROPIC_API_KEY": SECRET,
        "ANTHROPIC_BASE_URL": "http://user:pw@127.0.0.1:9/v",
    }

    code, report = doctor_json(env)

    assert code == 0, report["problems"]
    assert report["cli"]["source"] == "claude-agent-sdk bundle"
    assert report["cli"]["version"] == __cli_version__
    assert report["cli"]["tested"] is True
    assert report["auth"] == {
        "loggedIn": True,
        "method": "api_key",
        "source": "ANTHROPIC_API_KEY",
        "provider": "firstParty",
        "baseUrl": "http://127.0.0.1:9/v",
        "error": None,
    }
    assert report["configDir"] == str(home / ".claude")


def test_doctor_never_prints_the_key_or_a_url_password(home: Path) -> None:
    env = {
        **without_credentials(home),
        "ANTHROPIC_API_KEY": SECRET,
        "ANTHROPIC_BASE_URL": "http://user:hunter2@127.0.0.1:9/v",
    }

    outputs = [doctor(env)[1], doctor(env, "--json")[1]]

    for out in outputs:
        assert SECRET not in out and "hunter2" not in out


def test_doctor_without_credentials_fails_and_says_how_to_log_in(home: Path) -> None:
    code, out = doctor(without_credentials(home))

    assert code == 1
    assert "auth:     not logged in" in out
    assert "problem:  the CLI has no credentials: sign in with a Claude account: run `" in out
    assert "or use an API key: set ANTHROPIC_API_KEY" in out


def test_doctor_warns_about_a_cli_outside_the_tested_range(home: Path, tmp_path: Path) -> None:
    old = tmp_path / "claude"
    old.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "1.0.3 (Claude Code)"; exit 0; fi\n'
        "echo 'error: unknown command auth' >&2; exit 1\n"
    )
    old.chmod(0o755)
    env = {**without_credentials(home), "CLAUDE_SIDECAR_CLI": str(old)}

    code, report = doctor_json(env)

    assert report["cli"]["source"] == "$CLAUDE_SIDECAR_CLI"
    assert report["cli"]["tested"] is False
    assert any("1.0.3 is outside the tested range" in w for w in report["warnings"])
    assert report["auth"]["loggedIn"] is None
    assert "cannot report its authentication" in report["auth"]["error"]
    assert code == 0, "an untested CLI is a warning, not a failure"


def test_doctor_with_a_wrong_cli_path_fails_naming_it(home: Path, tmp_path: Path) -> None:
    env = {**without_credentials(home), "ANTHROPIC_API_KEY": SECRET}

    code, report = doctor_json(env, "--cli", str(tmp_path / "missing"))

    assert code == 1
    assert report["cli"]["path"] is None
    assert str(tmp_path / "missing") in report["problems"][0]


def test_doctor_states_the_platform_and_that_it_is_supported(home: Path) -> None:
    env = without_credentials(home)
    here = {"system": platform.system(), "machine": platform.machine(), "support": "supported"}

    _, report = doctor_json(env)
    _, text = doctor(env)

    assert report["platform"] == here, "this machine is Linux on x86-64 or arm64"
    assert f"platform: {here['system']} {here['machine']} (supported)\n" in text
