"""The release tool's check of the protocol: what breaks a client of the last release."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.protocol import schema

from release import schema_diff

Schema = dict[str, Any]


@pytest.fixture(scope="module")
def current() -> Schema:
    built: Schema = json.loads(json.dumps(schema.build()))
    return built


def changed(base: Schema, edit: Any) -> Schema:
    new = copy.deepcopy(base)
    edit(new["$defs"], new)
    return new


def test_the_schema_compared_with_itself_breaks_nothing(current: Schema) -> None:
    assert schema_diff.breaking_changes(current, current) == []


def test_a_removed_method_breaks_its_callers(current: Schema) -> None:
    new = changed(current, lambda defs, root: root["x-methods"].pop("claude/interrupt"))

    assert schema_diff.breaking_changes(current, new) == ["claude/interrupt: removed"]


def test_a_param_renamed_breaks_clients_that_send_it(current: Schema) -> None:
    def rename(defs: Schema, root: Schema) -> None:
        props = defs["NewChannelParams"]["properties"]
        props["workingDirectory"] = props.pop("cwd")
        required = defs["NewChannelParams"]["required"]
        required[required.index("cwd")] = "workingDirectory"

    found = schema_diff.breaking_changes(current, changed(current, rename))

    assert "claude/newChannel params.cwd: removed" in found
    assert "claude/newChannel params.workingDirectory: new and required" in found


def test_an_optional_param_made_required_breaks_clients_that_leave_it_out(
    current: Schema,
) -> None:
    def require_model(defs: Schema, root: Schema) -> None:
        defs["NewChannelParams"]["required"].append("model")

    found = schema_diff.breaking_changes(current, changed(current, require_model))

    assert found == ["claude/newChannel params.model: now required"]


def test_a_new_optional_param_and_a_new_result_field_break_nothing(current: Schema) -> None:
    def add(defs: Schema, root: Schema) -> None:
        defs["NewChannelParams"]["properties"]["sandbox"] = {"type": "object"}
        defs["NewChannelResult"]["properties"]["sandbox"] = {"type": "string"}

    assert schema_diff.breaking_changes(current, changed(current, add)) == []


def test_a_result_field_removed_or_no_longer_always_sent_breaks_readers(current: Schema) -> None:
    result = current["x-methods"]["claude/newChannel"]["result"]["$ref"].rsplit("/", 1)[-1]
    first_required = current["$defs"][result]["required"][0]

    def loosen(defs: Schema, root: Schema) -> None:
        defs[result]["required"].remove(first_required)

    found = schema_diff.breaking_changes(current, changed(current, loosen))

    assert found == [f"claude/newChannel result.{first_required}: no longer always sent"]


def test_a_notification_field_whose_type_changed_breaks_readers() -> None:
    old: Schema = {
        "$defs": {"Status": {"type": "object", "properties": {"seq": {"type": "integer"}}}},
        "x-notifications": {"claude/status": {"params": {"$ref": "#/$defs/Status"}}},
    }
    new = copy.deepcopy(old)
    new["$defs"]["Status"]["properties"]["seq"] = {"type": "string"}

    assert schema_diff.breaking_changes(old, new) == [
        "claude/status params.seq: type changed from integer to string"
    ]


def test_a_sent_enum_that_drops_a_value_breaks_clients_that_send_it() -> None:
    old: Schema = {
        "$defs": {"P": {"type": "object", "properties": {"mode": {"enum": ["a", "b"]}}}},
        "x-methods": {"claude/setMode": {"params": {"$ref": "#/$defs/P"}, "result": {}}},
    }
    new = copy.deepcopy(old)
    new["$defs"]["P"]["properties"]["mode"] = {"enum": ["a", "c"]}

    found = schema_diff.breaking_changes(old, new)

    assert found == ["claude/setMode params.mode: no longer takes b"]


def test_a_result_that_may_now_be_null_breaks_readers() -> None:
    old: Schema = {
        "$defs": {"R": {"type": "object", "properties": {"path": {"type": "string"}}}},
        "x-methods": {"claude/x": {"params": {}, "result": {"$ref": "#/$defs/R"}}},
    }
    new = copy.deepcopy(old)
    new["$defs"]["R"]["properties"]["path"] = {"anyOf": [{"type": "string"}, {"type": "null"}]}

    assert schema_diff.breaking_changes(old, new) == ["claude/x result.path: may now be null"]


def test_an_error_whose_code_changed_breaks_clients_that_match_it(current: Schema) -> None:
    def recode(defs: Schema, root: Schema) -> None:
        root["x-errors"]["authRequired"]["code"] = -32099

    found = schema_diff.breaking_changes(current, changed(current, recode))

    assert found == ["error authRequired: code -32015 is now -32099"]


def released_repository(tmp_path: Path, current: Schema) -> Path:
    """A repository whose v1.0.0 tag committed the current schema."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (tmp_path / "docs").mkdir()
    (tmp_path / schema_diff.SCHEMA_PATH).write_text(json.dumps(current))
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "1.0.0"], ["tag", "v1.0.0"]):
        subprocess.run([*git, *command], cwd=tmp_path, check=True)
    return tmp_path


def test_release_refuses_a_breaking_change_under_the_same_protocol_version(
    tmp_path: Path, current: Schema
) -> None:
    root = released_repository(tmp_path, current)
    broken = changed(current, lambda defs, r: r["x-methods"].pop("claude/interrupt"))
    (root / schema_diff.SCHEMA_PATH).write_text(json.dumps(broken))

    (refusal,) = schema_diff.refusals(root)

    assert "breaks clients of v1.0.0" in refusal and "raise PROTOCOL_VERSION" in refusal
    assert "  claude/interrupt: removed" in refusal


def test_release_takes_a_breaking_change_that_raises_the_protocol_version(
    tmp_path: Path, current: Schema
) -> None:
    root = released_repository(tmp_path, current)

    def break_and_bump(defs: Schema, r: Schema) -> None:
        r["x-methods"].pop("claude/interrupt")
        r["x-protocolVersion"] = schema_diff.protocol_version(current) + 1

    (root / schema_diff.SCHEMA_PATH).write_text(json.dumps(changed(current, break_and_bump)))

    assert schema_diff.refusals(root) == []
