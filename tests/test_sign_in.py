"""Signing in: a chat whose CLI has no credentials, or whose key the API refuses, ends its
turn with one `authRequired` error naming the fix (not the CLI's "Please run /login");
`claude-sidecar login` runs the CLI's own sign-in; `doctor` names only commands the user
has. All against the real CLI (no credentials: a temp HOME and none in the environment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.protocol.errors import AuthRequired
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import isolated_env
from tests.harness import Sidecar, StartSidecar

# The daemon's PATH: no `claude` (the bundled CLI runs) and no `claude-sidecar`.
BARE_PATH = "/usr/bin:/bin"
RIGHT_KEY = "sk-ant-the-right-key"


def notices(sidecar: Sidecar, channel: str) -> list[dict[str, Any]]:
    return [
        n.params["entry"]
        for n in sidecar.of(channel, "claude/entry")
        if n.params["entry"]["kind"] == "notice"
    ]


class TestWithoutCredentials:
    @pytest.fixture
    def daemon_env(self, home: Path) -> dict[str, str]:
        # No model URL and no key: the CLI has no credentials at all (and makes no request).
        return isolated_env(home, PATH=BARE_PATH)

    async def test_a_chat_ends_its_turn_with_auth_required_and_the_fix(
        self, sidecar: Sidecar, workspace: Path
    ) -> None:
        assert "ANTHROPIC_API_KEY" not in sidecar.env
        channel = await sidecar.new_channel(str(workspace))

        ended = (await sidecar.turn(channel, "hello")).ended

        assert ended["outcome"] == "error"
        error = ended["error"]
        assert error["kind"] == "authRequired" and error["code"] == AuthRequired.CODE
        data = error["data"]
        assert data["name"] == "authRequired" and data["reason"] == "noCredentials"
        assert data["how"] == f"{sys.executable} -m claude_sidecar login"
        assert data["how"] in data["fix"] and "ANTHROPIC_API_KEY" in data["fix"]
        assert error["message"].startswith("Claude Code has no credentials; sign in")
        assert "/login" in data["cliText"], "the CLI's own words are kept, apart"
        assert "/login" not in error["message"]
        (notice,) = notices(sidecar, channel)
        assert notice["subtype"] == "authRequired" and notice["level"] == "error"
        assert notice["text"] == error["message"]


class TestWithARefusedKey:
    @pytest.fixture
    def daemon_env(self, home: Path, model: ScriptedModel) -> dict[str, str]:
        # The stand-in model takes only RIGHT_KEY; the daemon's CLI sends another.
        model.set_scenario(load_scenario({"api_keys": [RIGHT_KEY]}))
        return isolated_env(home, model.url, PATH=BARE_PATH)

    async def test_the_turn_ends_with_auth_required_and_the_status(
        self, sidecar: Sidecar, workspace: Path
    ) -> None:
        channel = await sidecar.new_channel(str(workspace))

        ended = (await sidecar.turn(channel, "hello")).ended

        error = ended["error"]
        assert error["kind"] == "authRequired" and error["status"] == 401
        assert error["data"]["reason"] == "refused" and error["data"]["status"] == 401
        assert error["message"].startswith(
            "the model API refused Claude Code's credentials (HTTP 401); sign in"
        )
        notice = await sidecar.wait_for(
            lambda n: n.method == "claude/entry"
            and n.params["entry"].get("subtype") == "authRequired"
            and n.params["entry"]["text"] == error["message"]
        )
        assert notice.params["entry"]["level"] == "error", "the notice says it too"

    async def test_the_right_key_is_taken_by_the_stand_in_model(
        self, sidecar_with: StartSidecar, workspace: Path
    ) -> None:
        sidecar = await sidecar_with({}, ANTHROPIC_API_KEY=RIGHT_KEY)
        channel = await sidecar.new_channel(str(workspace))

        ended = (await sidecar.turn(channel, "hello")).ended

        assert ended["outcome"] == "success", ended


# ---------------------------------------------------------------- claude-sidecar login


def sidecar_command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "claude_sidecar", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def recording_cli(folder: Path, exit_code: int) -> Path:
    """A stand-in CLI that writes its arguments to `args` and exits with ``exit_code``."""
    cli = folder / "claude"
    cli.write_text(f'#!/bin/sh\necho "$@" > {folder / "args"}\nexit {exit_code}\n')
    cli.chmod(0o755)
    return cli


def test_login_runs_the_resolved_cli_s_auth_login_and_passes_its_exit_code_on(
    home: Path, tmp_path: Path
) -> None:
    cli = recording_cli(tmp_path, 3)
    env = isolated_env(home, PATH=BARE_PATH, CLAUDE_SIDECAR_CLI=str(cli))

    done = sidecar_command(env, "login", "--console", "--email", "ada@example.com")

    assert done.returncode == 3
    assert (tmp_path / "args").read_text() == "auth login --console --email=ada@example.com\n"
    assert f"running the Claude Code CLI at {cli} (found via $CLAUDE_SIDECAR_CLI)" in done.stderr


def test_logout_runs_the_bundled_cli_when_no_claude_is_on_path(home: Path) -> None:
    done = sidecar_command(isolated_env(home, PATH=BARE_PATH), "logout")

    assert done.returncode == 0, done.stderr
    assert "(found via claude-agent-sdk bundle)" in done.stderr
    assert "logged out" in done.stdout


def test_login_with_api_key_says_where_the_daemon_finds_the_key(home: Path) -> None:
    done = sidecar_command(isolated_env(home, PATH=BARE_PATH), "login", "--api-key")

    assert done.returncode == 0
    for place in ("~/.bashrc", "~/.config/environment.d/anthropic.conf", "claude-sidecar stop"):
        assert place in done.stdout


# ---------------------------------------------------------------- doctor's fix


def problems(env: dict[str, str]) -> list[str]:
    done = sidecar_command(env, "doctor")
    return [line for line in done.stdout.splitlines() if line.startswith("problem:")]


def test_doctor_without_claude_on_path_names_only_claude_sidecar_login(
    home: Path, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude-sidecar").symlink_to(Path(sys.executable).parent / "claude-sidecar")
    env = isolated_env(home, PATH=f"{bin_dir}:{BARE_PATH}")

    (problem,) = problems(env)

    assert "run `claude-sidecar login` in a terminal" in problem
    assert "claude auth login" not in problem
    assert "ANTHROPIC_API_KEY" in problem


def test_doctor_without_claude_sidecar_on_path_names_the_module_command(home: Path) -> None:
    (problem,) = problems(isolated_env(home, PATH=BARE_PATH))

    assert f"run `{sys.executable} -m claude_sidecar login` in a terminal" in problem
    assert "claude auth login" not in problem


def test_doctor_with_claude_on_path_names_claude_auth_login_too(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # The doctor asks this `claude`: a CLI that is not logged in.
    (bin_dir / "claude").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi\n'
        'echo \'{"loggedIn": false, "authMethod": "none"}\'; exit 1\n'
    )
    (bin_dir / "claude").chmod(0o755)
    env = isolated_env(home, PATH=f"{bin_dir}:{BARE_PATH}")

    (problem,) = problems(env)

    assert "(or `claude auth login`)" in problem
