"""Bad input gets a JSON-RPC error that names the field and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Sidecar, exchange

MISSING_DIR = "/nonexistent/claude-sidecar-test"


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("claude/newChannel", {}, "cwd"),
        ("claude/newChannel", {"cwd": 42}, "cwd"),
        ("claude/newChannel", {"cwd": "relative/path"}, "cwd"),
        ("claude/newChannel", {"cwd": MISSING_DIR}, "cwd"),
        ("claude/newChannel", {"cwd": "{ws}", "permissionMode": "yolo"}, "permissionMode"),
        ("claude/newChannel", {"cwd": "{ws}", "resume": "not-a-uuid"}, "resume"),
        ("claude/newChannel", {"cwd": "{ws}", "maxThinkingTokens": -1}, "maxThinkingTokens"),
        ("claude/newChannel", {"cwd": "{ws}", "addDirs": [MISSING_DIR]}, "addDirs[0]"),
        ("claude/newChannel", {"cwd": "{ws}", "env": {"A": 1}}, "env"),
        ("claude/newChannel", {"cwd": "{ws}", "cwdd": "/tmp"}, "cwdd"),
        (
            "claude/newChannel",
            {"cwd": "{ws}", "systemPrompt": "a", "appendSystemPrompt": "b"},
            "appendSystemPrompt",
        ),
        ("claude/sendMessage", {"channelId": "ch-1"}, "text"),
        ("claude/sendMessage", {"channelId": "ch-1", "text": "a", "content": []}, "text"),
        ("claude/sendMessage", {"text": "hi"}, "channelId"),
        (
            "claude/sendMessage",
            {"channelId": "ch-1", "content": [{"type": "video"}]},
            "content[0].type",
        ),
        (
            "claude/sendMessage",
            {
                "channelId": "ch-1",
                "content": [{"type": "image", "mediaType": "image/bmp", "data": "AA=="}],
            },
            "content[0].mediaType",
        ),
        ("claude/sendMessage", {"channelId": "ch-1", "text": "hi", "uuid": "123"}, "uuid"),
        ("claude/interrupt", {}, "channelId"),
        ("claude/setPermissionMode", {"channelId": "ch-1", "mode": "yolo"}, "mode"),
        ("claude/setModel", {"channelId": "ch-1", "model": 5}, "model"),
    ],
)
@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_invalid_params_are_rejected_naming_the_field(
    sidecar: Sidecar, workspace: Path, method: str, params: dict[str, Any], field: str
) -> None:
    params = json.loads(json.dumps(params).replace("{ws}", str(workspace)))

    error = await sidecar.error(method, params)

    assert error.code == -32602
    assert error.data == {"name": "invalidParams", "field": field}
    assert f"`{field}`" in error.message
    assert sidecar.pids == [] and (await sidecar.request("claude/listChannels"))["channels"] == []


@pytest.mark.parametrize(
    "method",
    [
        "claude/sendMessage",
        "claude/interrupt",
        "claude/closeChannel",
        "claude/setModel",
        "claude/setPermissionMode",
    ],
)
@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_unknown_channel_is_reported_with_the_channel_id(
    sidecar: Sidecar, method: str
) -> None:
    params = {"channelId": "ch-404", "text": "hi", "model": None, "mode": "plan"}
    allowed = {
        "claude/sendMessage": {"channelId", "text"},
        "claude/setModel": {"channelId", "model"},
        "claude/setPermissionMode": {"channelId", "mode"},
    }
    params = {k: v for k, v in params.items() if k in allowed.get(method, {"channelId"})}

    error = await sidecar.error(method, params)

    assert error.code == -32001
    assert error.data == {"name": "channelNotFound", "channelId": "ch-404"}
    assert "claude/listChannels" in error.message


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_a_cli_that_cannot_be_found_names_every_place_looked(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    daemon = Sidecar(daemon_env)
    await daemon.start({"cliPath": "/nowhere/claude"})
    try:
        error = await daemon.error("claude/newChannel", {"cwd": str(workspace)})
    finally:
        await daemon.stop()

    assert error.code == -32004
    assert error.data["name"] == "cliNotFound"
    assert "/nowhere/claude" in error.message and "install" in error.message


async def test_a_cli_that_dies_at_start_up_is_reported_with_its_stderr(
    daemon_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken-claude"
    broken.write_text("#!/bin/sh\necho 'fatal: cannot read settings' >&2\nexit 3\n")
    broken.chmod(0o755)
    daemon = Sidecar(daemon_env)
    await daemon.start({"cliPath": str(broken)})
    try:
        error = await daemon.error("claude/newChannel", {"cwd": str(workspace)})
        listed = await daemon.request("claude/listChannels")
    finally:
        await daemon.stop()

    assert error.code == -32005
    assert error.data["name"] == "cliStartFailed"
    assert error.data["reason"] == "it exited during start-up (exit code 3)"
    assert "fatal: cannot read settings" in error.data["stderrTail"]
    assert listed == {"channels": []}
    assert daemon.notes == [], "a channel that never started is never announced"


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_bypass_permissions_is_refused_unless_the_client_opted_in(
    sidecar: Sidecar, workspace: Path
) -> None:
    channel = await sidecar.new_channel(str(workspace))

    switch = await sidecar.error(
        "claude/setPermissionMode", {"channelId": channel, "mode": "bypassPermissions"}
    )
    start = await sidecar.error(
        "claude/newChannel", {"cwd": str(workspace), "permissionMode": "bypassPermissions"}
    )

    assert (switch.code, switch.data["field"]) == (-32602, "mode")
    assert (start.code, start.data["field"]) == (-32602, "permissionMode")
    assert "allowDangerouslySkipPermissions" in switch.message


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_unknown_methods_get_method_not_found_and_the_daemon_keeps_serving(
    sidecar: Sidecar,
) -> None:
    error = await sidecar.error("claude/doesNotExist", {})

    assert error.code == -32601
    assert (await sidecar.request("claude/listChannels")) == {"channels": []}


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "initialize",
    "params": {"capabilities": {}, "initializationOptions": {"clientName": "raw"}},
}
SHUTDOWN_AND_EXIT: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 99, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_requests_before_initialize_are_refused_and_stdout_carries_only_json_rpc(
    daemon_env: dict[str, str],
) -> None:
    replies, done = exchange(
        daemon_env,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "claude/listChannels", "params": {}},
            INITIALIZE,
            {"jsonrpc": "2.0", "id": 3, "method": "claude/listChannels", "params": {}},
            *SHUTDOWN_AND_EXIT,
        ],
    )

    assert replies[1]["error"]["code"] == -32002
    assert "initialize" in replies[1]["error"]["message"]
    assert replies[2]["result"]["serverInfo"]["name"] == "claude-sidecar"
    assert replies[3]["result"] == {"channels": []}
    assert done.returncode == 0
    assert b"initialized by raw" in done.stderr, "logs go to stderr"


@pytest.mark.parametrize(
    "options, field",
    [
        ({"cliPath": 7}, "initializationOptions.cliPath"),
        ({"warmPool": {"cwd": "not/absolute"}}, "initializationOptions.warmPool.cwd"),
        ({"coalesceDeltasMs": -16}, "initializationOptions.coalesceDeltasMs"),
        # What a Lua client sends for an empty table: the CLI would silently drop the tool.
        (
            {"editorTools": [{"name": "t", "inputSchema": {"type": "object", "properties": []}}]},
            "initializationOptions.editorTools[0].inputSchema.properties",
        ),
        (
            {"editorTools": [{"name": "t", "inputSchema": {"type": "string"}}]},
            "initializationOptions.editorTools[0].inputSchema.type",
        ),
        (
            {
                "editorTools": [
                    {"name": "a"},
                    {
                        "name": "t",
                        "inputSchema": {"type": "object", "properties": {"uri": "string"}},
                    },
                ]
            },
            "initializationOptions.editorTools[1].inputSchema.properties.uri",
        ),
        (
            {
                "editorTools": [
                    {
                        "name": "t",
                        "inputSchema": {"type": "object", "properties": {}, "required": ["uri"]},
                    }
                ]
            },
            "initializationOptions.editorTools[0].inputSchema.required",
        ),
    ],
)
@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_bad_initialization_options_are_rejected_naming_the_field(
    daemon_env: dict[str, str], options: dict[str, Any], field: str
) -> None:
    bad = {**INITIALIZE, "params": {"capabilities": {}, "initializationOptions": options}}
    replies, _done = exchange(daemon_env, [bad, *SHUTDOWN_AND_EXIT])

    error = replies[2]["error"]
    assert error["code"] == -32602
    assert error["data"] == {"name": "invalidParams", "field": field}


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_a_request_without_params_is_answered(daemon_env: dict[str, str]) -> None:
    replies, _ = exchange(
        daemon_env,
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "id": 3, "method": "claude/listChannels"},
            *SHUTDOWN_AND_EXIT,
        ],
    )

    assert replies[3]["result"] == {"channels": []}


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_params_holding_an_object_with_a_jsonrpc_key_get_an_answer_naming_the_field(
    daemon_env: dict[str, str],
) -> None:
    replies, _ = exchange(
        daemon_env,
        [
            INITIALIZE,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "claude/listSessions",
                "params": {"cwd": "/tmp", "limit": {"jsonrpc": []}},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "claude/listChannels", "params": {"jsonrpc": 1}},
            *SHUTDOWN_AND_EXIT,
        ],
    )

    assert replies[3]["error"]["code"] == -32602
    assert replies[3]["error"]["data"]["field"] == "limit"
    assert "error" in replies[4] or replies[4]["result"] == {"channels": []}


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_requests_after_shutdown_are_refused_not_ignored(daemon_env: dict[str, str]) -> None:
    replies, done = exchange(
        daemon_env,
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "id": 99, "method": "shutdown"},
            {"jsonrpc": "2.0", "id": 5, "method": "claude/listChannels", "params": {}},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
    )

    assert replies[5]["error"]["code"] == -32600
    assert "shutting down" in replies[5]["error"]["message"]
    assert done.returncode == 0


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_an_expected_error_is_logged_as_one_line_not_a_traceback(
    daemon_env: dict[str, str],
) -> None:
    replies, done = exchange(
        daemon_env,
        [
            INITIALIZE,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "claude/closeChannel",
                "params": {"channelId": "ch-nope"},
            },
            *SHUTDOWN_AND_EXIT,
        ],
    )

    assert replies[3]["error"]["code"] == -32001
    assert b"channelNotFound (-32001)" in done.stderr
    assert b"Traceback" not in done.stderr
