"""`claude-sidecar demo` plays a whole session on the stand-in model, as an editor shows it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def user_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config dir of the user running the demo (which must stay as it is)."""
    return tmp_path_factory.mktemp("user-claude-config")


@pytest.fixture(scope="module")
def temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's temporary folder (TMPDIR): what it leaves there is checked."""
    return tmp_path_factory.mktemp("tmp")


@pytest.fixture(scope="module")
def demo(user_config: Path, temp_dir: Path) -> subprocess.CompletedProcess[str]:
    """One run of the demo, shared by the tests below (it takes a few seconds), by a user
    with Claude settings of their own: a config dir, a key and a provider."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        TMPDIR=str(temp_dir),
        CLAUDE_CONFIG_DIR=str(user_config),
        ANTHROPIC_API_KEY="sk-ant-the-users-own",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        CLAUDE_CODE_USE_BEDROCK="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_demo_streams_thinking_text_and_real_tool_calls(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert demo.returncode == 0, demo.stderr[-2000:]
    out = demo.stdout
    assert "thinking…" in out and "claude:" in out
    assert "tool call Write" in out and "tool result: File created successfully" in out
    assert "tool call Edit" in out and "has been updated successfully" in out
    assert out.count("turn success") == 2
    assert "the tools really ran" in out and "  tests turn green by noon\n" in out


def test_demo_shows_each_permission_request_with_its_preview_and_answers_it(
    demo: subprocess.CompletedProcess[str],
) -> None:
    out = demo.stdout

    assert "? permission request: Write haiku.txt" in out
    assert "? permission request: Edit haiku.txt" in out
    assert out.count("→ allowed (the demo answers for you)") == 2
    request = out.index("? permission request: Write")
    assert out.index("  +Cursor blinks at dawn", request) < out.index("→ allowed", request)


def test_demo_shows_the_diff_of_every_file_update(demo: subprocess.CompletedProcess[str]) -> None:
    out = demo.stdout
    write = out.index("✎ file updated by Write: ")
    edit = out.index("✎ file updated by Edit: ")

    assert out.index("  +Cursor blinks at dawn\n", write) < edit
    assert out.index("  -code wakes, line by line\n", edit) < out.index(
        "  +tests turn green by noon\n", edit
    )
    assert "\033[" not in out  # colours only on a terminal


def test_demo_client_knows_every_notification_the_daemon_sends(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert "Ignoring notification" not in demo.stderr
    assert "unknown method" not in demo.stderr


def test_demo_leaves_the_users_claude_settings_and_config_dir_alone(
    demo: subprocess.CompletedProcess[str], user_config: Path
) -> None:
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert list(user_config.iterdir()) == [], "the demo wrote into the user's config dir"


def test_demo_keeps_the_workspace_it_names_and_removes_the_cli_home(
    demo: subprocess.CompletedProcess[str], temp_dir: Path
) -> None:
    assert demo.returncode == 0, demo.stderr[-2000:]
    left = sorted(p.name for p in temp_dir.glob("claude-sidecar-demo-*"))
    assert len(left) == 1 and not left[0].startswith("claude-sidecar-demo-home-"), left
    assert f"{temp_dir / left[0] / 'haiku.txt'} now reads" in demo.stdout
