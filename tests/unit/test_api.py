"""Client params decode once into typed structs, or fail naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from claude_sidecar.protocol import api
from claude_sidecar.protocol.errors import InvalidParams


def test_new_channel_params_decode_camel_case(tmp_path: Path) -> None:
    params = api.decode_params(
        "claude/newChannel",
        api.NewChannelParams,
        {
            "cwd": str(tmp_path),
            "permissionMode": "plan",
            "allowedTools": ["Read"],
            "maxThinkingTokens": 2048,
            "env": {"A": "1"},
        },
    )

    assert params.permission_mode == "plan"
    assert params.allowed_tools == ["Read"]
    assert params.max_thinking_tokens == 2048


@pytest.mark.parametrize(
    ("raw", "field", "phrase"),
    [
        (None, "cwd", "is required"),
        ([], "params", "Expected `object`"),
        ({"cwd": True}, "cwd", "Expected `str`"),
        ({"cwd": "/", "model": ["x"]}, "model", "Expected `str | null`"),
        ({"cwd": "/", "bogus": 1}, "bogus", "not a known parameter"),
    ],
)
def test_bad_params_name_the_field(raw: Any, field: str, phrase: str) -> None:
    with pytest.raises(InvalidParams) as raised:
        api.decode_params("claude/newChannel", api.NewChannelParams, raw)

    assert raised.value.data["field"] == field
    assert phrase in raised.value.message
    assert "docs/protocol.md" in raised.value.message or "directory" in raised.value.message


def test_send_message_turns_blocks_into_the_cli_content_shape() -> None:
    params = api.decode_params(
        "claude/sendMessage",
        api.SendMessageParams,
        {
            "channelId": "ch-1",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "mediaType": "image/png", "data": "AAAA"},
            ],
        },
    )

    assert params.cli_content() == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]


def test_every_method_has_params_and_result_types() -> None:
    names = [m.name for m in api.METHODS]
    assert len(names) == len(set(names))
    assert all(name.startswith("claude/") for name in names)


@pytest.mark.parametrize(
    ("servers", "field"),
    [
        ({"x": {"type": ["stdio"]}}, "mcpServers.x.type"),
        ({"x": {"command": "srv", "args": [1]}}, "mcpServers.x.args"),
        ({"x": {"command": "srv", "env": {"A": 1}}}, "mcpServers.x.env"),
        ({"x": {"type": "http", "url": "http://h", "headers": "oops"}}, "mcpServers.x.headers"),
        ({"x": {"type": "sse"}}, "mcpServers.x.url"),
    ],
)
def test_mcp_server_configs_are_checked_field_by_field(
    tmp_path: Path, servers: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidParams) as raised:
        api.decode_params(
            "claude/newChannel", api.NewChannelParams, {"cwd": str(tmp_path), "mcpServers": servers}
        )
    assert raised.value.data["field"] == field


@pytest.mark.parametrize(
    "options, field",
    [
        ({"coalesceDeltasMs": -1}, "initializationOptions.coalesceDeltasMs"),
        ({"coalesceDeltasMs": 5000}, "initializationOptions.coalesceDeltasMs"),
        ({"warmPool": {"size": 9}}, "initializationOptions.warmPool.size"),
        ({"warmPool": {"idleSeconds": 0}}, "initializationOptions.warmPool.idleSeconds"),
        ({"warmPool": {"cwd": "relative/dir"}}, "initializationOptions.warmPool.cwd"),
    ],
)
def test_bad_performance_options_name_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        api.decode_params(
            "initialize", api.InitializationOptions, options, "initializationOptions."
        )

    assert caught.value.data["field"] == field


def test_unknown_initialization_options_are_left_out_and_named_at_any_depth() -> None:
    ignored: list[str] = []
    options = api.decode_params(
        "initialize",
        api.InitializationOptions,
        {"warmPool": {"size": 2, "max": 4}, "editorTools": [{"name": "a"}, {"name": "b", "x": 1}]},
        "initializationOptions.",
        ignored=ignored,
    )

    assert ignored == [
        "initializationOptions.warmPool.max",
        "initializationOptions.editorTools[1].x",
    ]
    assert options.warm_pool.size == 2
    assert [tool.name for tool in options.editor_tools] == ["a", "b"]


def test_without_ignoring_an_unknown_option_is_invalid_params() -> None:
    with pytest.raises(InvalidParams) as caught:
        api.decode_params(
            "initialize",
            api.InitializationOptions,
            {"warmPool": {"max": 2}},
            "initializationOptions.",
        )

    assert caught.value.data["field"] == "initializationOptions.warmPool.max"


def test_performance_options_default_to_no_coalescing_and_one_spare() -> None:
    options = api.decode_params("initialize", api.InitializationOptions, None)

    assert options.coalesce_deltas_ms == 0
    assert (options.warm_pool.size, options.warm_pool.idle_seconds) == (1, 300.0)


def test_params_with_a_lone_surrogate_are_invalid_params() -> None:
    with pytest.raises(InvalidParams) as caught:
        api.decode_params("claude/newChannel", api.NewChannelParams, "\udc80bad")

    assert caught.value.data["field"] == "params"


def test_the_initialize_answer_of_a_daemon_from_before_the_handshake_reads_as_protocol_1() -> None:
    # What 0.1.0 answered (`claude-sidecar connect` reads it to retire an old daemon).
    answer = {
        "capabilities": {
            "experimental": {
                "claudeSidecar": {
                    "methods": ["claude/newChannel"],
                    "notifications": ["claude/delta"],
                    "clientRequests": ["claude/callEditorTool"],
                    "cli": {
                        "path": None,
                        "version": None,
                        "error": "not found",
                        "source": None,
                        "tested": None,
                        "testedVersions": ["2.1.330"],
                    },
                }
            }
        },
        "serverInfo": {"name": "claude-sidecar", "version": "0.1.0"},
    }

    features = msgspec.convert(
        answer, api.InitializeResult
    ).capabilities.experimental.claude_sidecar

    assert (features.protocol_version, features.oldest_client_protocol) == (1, 1)
    assert (features.features, features.ignored_options) == ([], [])
