"""Channel options become CLI flags in --flag=value form, and a clean environment."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.cli.launch import build_launch
from claude_sidecar.protocol.api import NewChannelParams


def test_options_become_flags_with_values_attached(tmp_path: Path) -> None:
    options = NewChannelParams(
        cwd=str(tmp_path),
        model="opus",
        permission_mode="acceptEdits",
        append_system_prompt="--be-brief",
        allowed_tools=["Read", "Bash(git log:*)"],
        add_dirs=[str(tmp_path)],
        max_thinking_tokens=0,
    )

    spec = build_launch("/bin/claude", options, "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", {})

    assert spec.argv[:6] == [
        "/bin/claude",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
    ]
    assert "--session-id=0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d" in spec.argv
    assert "--append-system-prompt=--be-brief" in spec.argv
    assert "--allowedTools=Read,Bash(git log:*)" in spec.argv
    assert f"--add-dir={tmp_path}" in spec.argv
    assert "--max-thinking-tokens=0" in spec.argv
    assert spec.cwd == str(tmp_path)


def test_resume_replaces_the_new_session_id(tmp_path: Path) -> None:
    options = NewChannelParams(cwd=str(tmp_path), resume="6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")

    spec = build_launch("/bin/claude", options, "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", {})

    assert "--resume=6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b" in spec.argv
    assert not [a for a in spec.argv if a.startswith("--session-id")]


def test_environment_drops_claudecode_and_enables_checkpointing(tmp_path: Path) -> None:
    options = NewChannelParams(cwd=str(tmp_path), env={"FOO": "bar"})

    spec = build_launch(
        "/bin/claude",
        options,
        "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d",
        {"CLAUDECODE": "1", "PATH": "/bin"},
    )

    assert "CLAUDECODE" not in spec.env
    assert spec.env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] == "true"
    assert spec.env["CLAUDE_CODE_ENTRYPOINT"] == "claude-sidecar"
    assert spec.env["FOO"] == "bar" and spec.env["PATH"] == "/bin"


def test_mcp_servers_go_in_a_private_file_not_on_the_command_line(tmp_path: Path) -> None:
    import json
    import os
    import stat

    secret = {"weather": {"command": "srv", "env": {"TOKEN": "s3cret"}}}
    options = NewChannelParams(cwd=str(tmp_path), mcp_servers=secret, strict_mcp_config=True)

    spec = build_launch(
        "/bin/claude",
        options,
        "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d",
        {},
        sdk_servers={"editor": ["mcp__editor__getDiagnostics"]},
    )

    assert not any("s3cret" in arg for arg in spec.argv)
    (config_arg,) = [a for a in spec.argv if a.startswith("--mcp-config=")]
    path = config_arg.split("=", 1)[1]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(Path(path).read_text())["mcpServers"] == {
        "editor": {"type": "sdk", "name": "editor"},
        **secret,
    }
    assert "--strict-mcp-config" in spec.argv
    assert "--allowedTools=mcp__editor__getDiagnostics" in spec.argv
    spec.remove_files()
    assert not os.path.exists(path)


def test_turn_limits_effort_agent_and_sources_become_flags(tmp_path: Path) -> None:
    options = NewChannelParams(
        cwd=str(tmp_path),
        effort="xhigh",
        max_turns=12,
        max_budget_usd=2.5,
        fallback_model="haiku",
        agent="reviewer",
        setting_sources=["user", "local"],
    )

    spec = build_launch("/bin/claude", options, "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", {})

    assert {
        "--effort=xhigh",
        "--max-turns=12",
        "--max-budget-usd=2.5",
        "--fallback-model=haiku",
        "--agent=reviewer",
        "--setting-sources=user,local",
    } <= set(spec.argv)
    assert not [a for a in spec.argv if a.startswith("--settings")]


def test_empty_setting_sources_read_no_settings_files(tmp_path: Path) -> None:
    spec = build_launch(
        "/bin/claude",
        NewChannelParams(cwd=str(tmp_path), setting_sources=[]),
        "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d",
        {},
    )

    assert "--setting-sources=" in spec.argv


def test_settings_and_output_style_go_in_one_private_settings_file(tmp_path: Path) -> None:
    import json
    import os
    import stat

    options = NewChannelParams(
        cwd=str(tmp_path), output_style="Explanatory", settings={"env": {"TOKEN": "s3cret"}}
    )

    spec = build_launch("/bin/claude", options, "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", {})

    (settings_arg,) = [a for a in spec.argv if a.startswith("--settings=")]
    path = settings_arg.split("=", 1)[1]
    assert not any("s3cret" in arg for arg in spec.argv)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as f:
        assert json.load(f) == {"env": {"TOKEN": "s3cret"}, "outputStyle": "Explanatory"}
    spec.remove_files()
    assert not os.path.exists(path)
