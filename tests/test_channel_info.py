"""What a client learns about the daemon and each channel without parsing CLI output."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_sidecar import __version__
from claude_sidecar.protocol import api

from tests.conftest import cli_under_test
from tests.harness import RawClient, Sidecar, StartSidecar


async def test_initialize_names_the_cli_and_its_version(sidecar: Sidecar) -> None:
    cli = sidecar.features["cli"]

    assert (cli["path"], cli["error"]) == (cli_under_test()[0], None)
    assert cli["version"] == cli_under_test()[1]


async def test_initialize_says_where_the_cli_was_found_and_that_its_version_is_tested(
    sidecar: Sidecar,
) -> None:
    cli = sidecar.features["cli"]

    assert cli["source"] in {"--cli", "$CLAUDE_SIDECAR_CLI", "PATH", "claude-agent-sdk bundle"}
    assert cli["tested"] is True
    assert cli_under_test()[1] in cli["testedVersions"]


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_initialize_advertises_only_the_claude_surface(daemon_env: dict[str, str]) -> None:
    client = RawClient(daemon_env)
    try:
        client.send(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}
        )
        result = client.reply_to(0)["result"]
    finally:
        client.process.kill()
        client.process.wait()

    capabilities = result["capabilities"]
    features = capabilities["experimental"]["claudeSidecar"]
    assert set(capabilities) == {"experimental"}, "no LSP document features"
    assert features["methods"] == [m.name for m in api.METHODS]
    assert set(features["notifications"]) == set(api.NOTIFICATIONS)
    assert features["clientRequests"] == ["claude/callEditorTool"]
    assert result["serverInfo"] == {"name": "claude-sidecar", "version": __version__}


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_initialize_says_why_no_cli_was_found(
    sidecar_with: StartSidecar, daemon_env: dict[str, str], tmp_path: Path
) -> None:
    daemon_env["PATH"] = str(tmp_path)  # no `claude` here
    missing = tmp_path / "nothing-here"

    daemon = await sidecar_with({"cliPath": str(missing)})
    cli = daemon.features["cli"]

    assert cli["path"] is None and cli["version"] is None
    assert "not found" in cli["error"] and str(missing) in cli["error"]


async def test_new_channel_result_carries_the_channel_info(
    sidecar: Sidecar, workspace: Path
) -> None:
    opened = await sidecar.open_channel(cwd=str(workspace))

    info = opened["info"]

    assert info["cliVersion"] == cli_under_test()[1]
    assert info == await sidecar.request("claude/channelInfo", {"channelId": opened["channelId"]})


async def test_channel_info_lists_slash_commands_models_agents_and_styles(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    info = await sidecar.request("claude/channelInfo", {"channelId": channel})

    commands = {c["name"]: c for c in info["commands"]}
    assert "compact" in commands and commands["compact"]["description"]
    models = {m["value"]: m for m in info["models"]}
    assert {"default", "sonnet", "haiku"} <= models.keys()
    assert models["sonnet"]["displayName"] == "Sonnet"
    assert "low" in models["sonnet"]["supportedEffortLevels"]
    assert "Explore" in {a["name"] for a in info["agents"]}
    assert info["outputStyle"] == "default" and "Explanatory" in info["availableOutputStyles"]
    assert info["permissionMode"] == "default"
    assert info["fastModeState"] == "off"


async def test_channel_info_shows_the_account_source_but_never_the_key(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    info = await sidecar.request("claude/channelInfo", {"channelId": channel})

    assert info["account"]["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert sidecar.env["ANTHROPIC_API_KEY"] not in repr(info)


async def test_channel_info_follows_set_model_and_set_permission_mode(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    await sidecar.request("claude/setModel", {"channelId": channel, "model": "haiku"})
    await sidecar.request("claude/setPermissionMode", {"channelId": channel, "mode": "acceptEdits"})
    info = await sidecar.request("claude/channelInfo", {"channelId": channel})

    assert info["model"] == "haiku" and info["permissionMode"] == "acceptEdits"


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_channel_info_of_an_unknown_channel_is_channel_not_found(sidecar: Sidecar) -> None:
    error = await sidecar.error("claude/channelInfo", {"channelId": "ch-404"})

    assert error.code == -32001


async def test_context_usage_breaks_the_window_down_by_category(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))
    await sidecar.turn(channel, "hello")

    usage = await sidecar.request("claude/contextUsage", {"channelId": channel})

    categories = {c["name"]: c for c in usage["categories"]}
    assert usage["maxTokens"] > usage["totalTokens"] > 0
    assert 0 <= usage["percentage"] <= 100
    assert categories["System prompt"]["tokens"] > 0
    assert categories["Messages"]["tokens"] > 0, "the chat so far takes room"
    assert "gridRows" not in usage, "the terminal's drawing is left out"
