"""The version handshake of ``initialize``: the protocol a client speaks, the features a
connection has, options a newer client sends, and one clear error when the two sides are
too far apart, naming the side to upgrade and the command. A real daemon over --stdio."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar import __version__
from claude_sidecar.protocol import api
from pygls.exceptions import JsonRpcException

from tests.harness import StartSidecar, exchange

CHECKOUT = Path(__file__).resolve().parent.parent
SHUTDOWN_AND_EXIT: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 99, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]


def initialize(params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


async def refused(sidecar_with: StartSidecar, options: dict[str, Any]) -> JsonRpcException:
    """The error ``initialize`` with ``options`` gets from a real daemon."""
    with pytest.raises(JsonRpcException) as caught:
        await sidecar_with(options)
    return caught.value


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_a_client_without_a_protocol_is_served_as_protocol_1(
    sidecar_with: StartSidecar,
) -> None:
    daemon = await sidecar_with({})

    assert daemon.features["protocolVersion"] == api.PROTOCOL_VERSION == 1
    assert daemon.features["oldestClientProtocol"] == 1
    assert daemon.features["ignoredOptions"] == []
    assert daemon.initialized.server_info is not None
    assert daemon.initialized.server_info.version == __version__
    assert (await daemon.request("claude/listChannels")) == {"channels": []}


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_the_private_daemon_lists_its_features_but_not_the_shared_daemons(
    sidecar_with: StartSidecar,
) -> None:
    daemon = await sidecar_with({"protocol": {"version": 1}})

    assert daemon.features["features"] == [
        "editorTools",
        "signIn",
        "rewind",
        "fork",
        "transcriptPaging",
        "partialListing",
        "watchChannels",
        "worktrees",
    ]
    # What "attach" stands for is refused here, as the missing feature said.
    error = await daemon.error("claude/attach", {"channelId": "ch-1"})
    assert error.data["name"] == "notShared"


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_unknown_initialization_options_at_any_depth_are_ignored_and_reported(
    sidecar_with: StartSidecar, tmp_path: Path
) -> None:
    log = tmp_path / "daemon.log"
    daemon = await sidecar_with(
        {
            "protocol": {"version": 2, "oldest": 1, "client": {"name": "pytest", "build": 7}},
            "someNewKey": {"x": 1},
            "warmPool": {"size": 0, "newer": True},
            "editorTools": [{"name": "getSelection", "annotations": {"readOnly": True}}],
            "coalesceDeltasMs": 16,
        },
        args=("--log-file", str(log)),
    )

    assert daemon.features["ignoredOptions"] == [
        "initializationOptions.editorTools[0].annotations",
        "initializationOptions.protocol.client.build",
        "initializationOptions.someNewKey",
        "initializationOptions.warmPool.newer",
    ]
    warnings = [line for line in log.read_text().splitlines() if "ignoring options" in line]
    assert len(warnings) == 1
    assert "WARNING" in warnings[0]
    assert "initializationOptions.someNewKey" in warnings[0]


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_a_known_option_with_a_bad_value_is_still_invalid_params(
    sidecar_with: StartSidecar,
) -> None:
    error = await refused(
        sidecar_with, {"protocol": {"version": 1}, "newKey": 1, "coalesceDeltasMs": -1}
    )

    assert error.code == -32602
    assert error.data == {
        "name": "invalidParams",
        "field": "initializationOptions.coalesceDeltasMs",
    }


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_a_client_too_old_for_the_daemon_is_refused_with_how_to_upgrade_it(
    sidecar_with: StartSidecar,
) -> None:
    error = await refused(
        sidecar_with,
        {"protocol": {"version": 0, "client": {"name": "claude_sidecar.nvim", "version": "0.0.1"}}},
    )

    assert error.code == -32016
    assert error.data == {
        "name": "protocolMismatch",
        "upgrade": "client",
        "daemonProtocol": 1,
        "oldestClientProtocol": 1,
        "clientProtocol": 0,
        "clientOldest": 0,
        "daemonVersion": __version__,
        "fix": "update the Neovim plugin with your plugin manager (e.g. `:Lazy update "
        "claude_sidecar`), then restart Neovim",
    }
    assert error.message.startswith(
        f"This claude-sidecar daemon ({__version__}, protocol 1) no longer serves clients of "
        "protocol 0"
    )
    assert "upgrade claude_sidecar.nvim: update the Neovim plugin" in error.message


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_a_client_that_needs_a_newer_daemon_is_refused_with_the_upgrade_command(
    sidecar_with: StartSidecar,
) -> None:
    launcher = "python3 /home/ada/claude-sidecar/bootstrap.py"
    with pytest.raises(JsonRpcException) as caught:
        await sidecar_with(
            {"protocol": {"version": 3, "oldest": 2, "client": {"name": "VS Code"}}},
            CLAUDE_SIDECAR_LAUNCHER=launcher,
        )
    error = caught.value

    assert error.code == -32016
    # The tests run the checkout's package: the fix is the checkout's.
    fix = f"git -C {shlex.quote(str(CHECKOUT))} pull && {launcher} doctor"
    assert error.data == {
        "name": "protocolMismatch",
        "upgrade": "daemon",
        "daemonProtocol": 1,
        "oldestClientProtocol": 1,
        "clientProtocol": 3,
        "clientOldest": 2,
        "daemonVersion": __version__,
        "fix": fix,
    }
    assert error.message == (
        f"VS Code needs a claude-sidecar daemon of protocol 2 or newer; this daemon "
        f"({__version__}) speaks protocol 1: upgrade claude-sidecar: {fix}, then restart "
        "the editor"
    )


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
def test_a_refused_client_may_initialize_again_and_unknown_capabilities_are_ignored(
    daemon_env: dict[str, str],
) -> None:
    too_new = {
        "capabilities": {},
        "initializationOptions": {"protocol": {"version": 9, "oldest": 9}},
    }
    newer_capabilities = {
        "capabilities": {"claudeSidecarFuture": {"inlineDiffs": True}, "experimental": {"x": 1}},
        "initializationOptions": {"protocol": {"version": 1}},
    }
    replies, _ = exchange(
        daemon_env,
        [
            initialize(too_new, 1),
            {"jsonrpc": "2.0", "id": 2, "method": "claude/listChannels", "params": {}},
            initialize(newer_capabilities, 3),
            {"jsonrpc": "2.0", "id": 4, "method": "claude/listChannels", "params": {}},
            *SHUTDOWN_AND_EXIT,
        ],
    )

    assert replies[1]["error"]["data"]["name"] == "protocolMismatch"
    assert replies[2]["error"]["data"]["name"] == "serverNotInitialized"
    assert (
        replies[3]["result"]["capabilities"]["experimental"]["claudeSidecar"]["protocolVersion"]
        == 1
    )
    assert replies[4]["result"] == {"channels": []}
