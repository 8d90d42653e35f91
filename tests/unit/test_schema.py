"""`claude-sidecar schema`: one JSON Schema document of the whole claude/* surface.

Code generators (the VS Code and IntelliJ clients) read it, so it must be a valid draft
2020-12 document, name every method, notification, client request and error, use the wire
names, keep the constraints, describe what the daemon really encodes, and be
byte-for-byte stable so the committed copy in docs/protocol.schema.json can be diffed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from claude_sidecar import __version__
from claude_sidecar.protocol import api, errors, schema

from tests.harness import json_object

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "protocol.schema.json"
SCHEMA = schema.build()


def validator_for(node: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for one part of the document (its ``$ref``s resolve in the document)."""
    return jsonschema.Draft202012Validator({**SCHEMA, **node})


def problems(node: dict[str, Any], value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in validator_for(node).iter_errors(value)
    ]


def definition(ref: dict[str, str]) -> dict[str, Any]:
    return json_object(SCHEMA["$defs"][ref["$ref"].removeprefix("#/$defs/")])


def refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if isinstance(node.get("$ref"), str) else []) + [
            r for value in node.values() for r in refs_in(value)
        ]
    if isinstance(node, list):
        return [r for value in node for r in refs_in(value)]
    return []


def encoded(value: msgspec.Struct) -> Any:
    """What the daemon puts on the wire for ``value``."""
    return json.loads(msgspec.json.encode(value))


def test_schema_is_a_valid_draft_2020_12_document() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"

    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_ref_points_at_a_definition() -> None:
    dangling = [r for r in refs_in(SCHEMA) if r.removeprefix("#/$defs/") not in SCHEMA["$defs"]]

    assert not dangling


def test_schema_names_every_method_with_params_and_result() -> None:
    assert list(SCHEMA["x-methods"]) == [m.name for m in api.METHODS]
    for method in api.METHODS:
        entry = SCHEMA["x-methods"][method.name]
        assert entry["summary"] == method.summary
        assert definition(entry["params"])["title"] == method.params.__name__
        assert definition(entry["result"])["title"] == method.result.__name__


def test_schema_names_every_notification_and_request_to_the_client() -> None:
    for index, table in (
        ("x-notifications", api.NOTIFICATIONS),
        ("x-clientRequests", api.CLIENT_REQUESTS),
    ):
        assert list(SCHEMA[index]) == list(table)
        for name, tp in table.items():
            assert definition(SCHEMA[index][name]["params"])["title"] == tp.__name__
            assert SCHEMA[index][name]["summary"]


def test_schema_points_at_the_initialization_options() -> None:
    options = definition(SCHEMA["x-initializationOptions"])

    assert options["title"] == "InitializationOptions"
    assert {"clientName", "editorTools", "warmPool", "coalesceDeltasMs"} <= set(
        options["properties"]
    )


def test_properties_are_the_wire_names() -> None:
    for name, node in SCHEMA["$defs"].items():
        cls = getattr(api, name)
        config = cls.__struct_config__
        wire = {f.encode_name for f in msgspec.structs.fields(cls)}
        if config.tag is not None:
            wire.add(config.tag_field)

        assert set(node["properties"]) == wire, name


def test_constraints_of_the_types_survive() -> None:
    options = SCHEMA["x-initializationOptions"]

    assert problems(options, {"editorTools": [{"name": "get diagnostics"}]})
    assert problems(options, {"warmPool": {"size": 9}})
    assert problems(options, {"editorToolTimeout": 0})
    assert problems(options, {"coalesceDeltasMs": 1001})
    assert problems(options, {"autoAllowTools": [""]})
    assert not problems(
        options,
        {
            "editorTools": [{"name": "getDiagnostics"}],
            "warmPool": {"size": 8, "idleSeconds": 0.5},
            "editorToolTimeout": 600,
            "coalesceDeltasMs": 16,
        },
    )


def test_params_reject_unknown_keys_and_wrong_values() -> None:
    send = SCHEMA["x-methods"]["claude/sendMessage"]["params"]
    mode = SCHEMA["x-methods"]["claude/setPermissionMode"]["params"]

    assert problems(send, {"channelId": "ch-1", "text": "hi", "txt": "typo"})
    assert problems(send, {"channelId": "", "text": "hi"})
    assert problems(send, {"channelId": "ch-1", "content": [{"type": "video", "data": "x"}]})
    assert problems(mode, {"channelId": "ch-1", "mode": "yolo"})
    assert not problems(
        send,
        {
            "channelId": "ch-1",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image", "mediaType": "image/png", "data": "iVBORw0KGgo="},
            ],
        },
    )


def test_results_and_notifications_accept_fields_a_newer_daemon_adds() -> None:
    status = SCHEMA["x-notifications"]["claude/status"]["params"]

    assert not problems(
        status,
        {"channelId": "ch-1", "seq": 1, "state": "idle", "sessionId": "s", "somethingNew": 1},
    )


@pytest.mark.parametrize(
    "message", [{"type": "result", "is_error": False}, [1, "two"], 3, "text", None]
)
def test_a_raw_cli_message_may_be_any_json_value(message: Any) -> None:
    params = SCHEMA["x-notifications"]["claude/message"]["params"]

    assert not problems(params, {"channelId": "ch-1", "seq": 4, "message": message})
    assert definition(params)["properties"]["message"]["description"]


def test_every_notification_about_a_channel_requires_channel_id_and_seq() -> None:
    """All but claude/sessionsChanged (about stored sessions) and claude/channelsChanged
    (about every chat), which have neither."""
    for name, entry in SCHEMA["x-notifications"].items():
        params = definition(entry["params"])
        if name in ("claude/sessionsChanged", "claude/channelsChanged"):
            assert not {"channelId", "seq"} & set(params["properties"]), name
        else:
            assert {"channelId", "seq"} <= set(params["required"]), name


def test_fields_the_daemon_always_sends_are_required() -> None:
    file_updated = definition(SCHEMA["x-notifications"]["claude/fileUpdated"]["params"])
    permission = definition(SCHEMA["x-notifications"]["claude/permissionRequest"]["params"])

    assert set(file_updated["required"]) == set(file_updated["properties"])
    assert "toolUseId" in permission["required"]
    assert "preview" not in permission["required"]


def test_what_the_daemon_encodes_validates_against_the_schema() -> None:
    request: dict[str, Any] = {
        "request_id": "257c5aeb-4ba5-4623-b3f3-e83575afe46c",
        "tool_name": "Write",
        "tool_use_id": None,
        "input": {"file_path": "/w/a.txt", "content": "hi\n"},
        "suggestions": [],
        "preview": "--- /dev/null\n+++ /w/a.txt\n@@ -0,0 +1 @@\n+hi\n",
    }
    exit_info = api.ExitInfo(code=None, signal=9, stderr_tail="")
    sent = [
        (
            "x-notifications",
            "claude/permissionRequest",
            api.PermissionRequestNotification(**request, channel_id="ch-1", seq=3),
        ),
        (
            "x-notifications",
            "claude/fileUpdated",
            api.FileUpdatedNotification(
                channel_id="ch-1",
                seq=5,
                path="/w/a.txt",
                tool_name="Write",
                tool_use_id="t1",
                message_id=None,
                old_content=None,
                new_content="hi\n",
                diff="+hi\n",
            ),
        ),
        (
            "x-notifications",
            "claude/message",
            api.MessageNotification(
                channel_id="ch-1", seq=6, message=msgspec.Raw(b'{"type":"result"}')
            ),
        ),
        (
            "x-notifications",
            "claude/status",
            api.StatusNotification(
                channel_id="ch-1", seq=7, state="exited", session_id="s", exit=exit_info
            ),
        ),
        (
            "x-methods",
            "claude/listChannels",
            api.ListChannelsResult(
                channels=[
                    api.ChannelSummary(
                        channel_id="ch-1",
                        pid=1,
                        session_id="s",
                        cwd="/w",
                        state="awaitingPermission",
                        pending_permissions=[api.PermissionRequest(**request)],
                    )
                ]
            ),
        ),
        (
            "x-methods",
            "claude/rewindFiles",
            api.RewindFilesResult(
                can_rewind=True,
                files_changed=["/w/a.txt"],
                insertions=0,
                deletions=1,
                diffs=[api.FileDiff(path="/w/a.txt", diff="-hi\n")],
            ),
        ),
        ("x-methods", "claude/closeChannel", api.CloseChannelResult(exit=exit_info)),
        ("x-methods", "claude/interrupt", api.Ok()),
    ]
    for index, name, value in sent:
        part = "params" if index == "x-notifications" else "result"

        assert not problems(SCHEMA[index][name][part], encoded(value)), name


def test_errors_give_the_code_and_data_fields_of_every_error() -> None:
    assert {n: e["code"] for n, e in SCHEMA["x-errors"].items()} == {
        e.NAME: e.CODE for e in errors.ERROR_CODES
    }
    exited = SCHEMA["x-errors"]["channelExited"]["data"]
    timeout = SCHEMA["x-errors"]["controlRequestTimeout"]["data"]

    assert exited["required"] == ["name", "channelId", "exitCode", "signal"]
    assert timeout["properties"]["timeoutSeconds"] == {"type": "number"}
    assert not problems(exited, errors.ChannelExited("ch-2", None, 9).data)
    assert not problems(timeout, errors.ControlRequestTimeout("interrupt", 30).data)
    assert problems(exited, errors.ChannelNotFound("ch-2").data)


def test_schema_carries_the_daemon_version() -> None:
    assert SCHEMA["x-version"] == __version__


def test_rendering_is_deterministic_with_sorted_keys() -> None:
    text = schema.render(schema.build())

    assert text == schema.render(schema.build())
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_committed_schema_is_current() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == schema.render(SCHEMA), (
        f"docs/protocol.schema.json is stale; regenerate it with `{schema.REGENERATE}`"
    )


def test_schema_command_prints_the_schema_or_writes_it_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "protocol.schema.json"

    printed = subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "schema"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "schema", "--output", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert printed.stdout == schema.render(SCHEMA)
    assert target.read_text(encoding="utf-8") == printed.stdout
