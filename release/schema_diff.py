"""Breaking changes of the claude/* protocol between two of its schemas (``claude-sidecar
schema``, committed as docs/protocol.schema.json), as a client of the older one meets them.

What a client sends (request params, ``initializationOptions``, its answers to the daemon's
requests) breaks it when the newer daemon no longer takes it: a field removed or renamed (the
params forbid unknown fields), a field newly required, a type changed, a value of an enum
dropped, null no longer taken. What the daemon sends (results, notifications, the daemon's
requests, errors) breaks it when the older client no longer finds what it reads: a field,
method, notification or error removed or renamed, a field no longer always there, a type
changed, null where there was none. Adding is never breaking: clients ignore what they do not
know, and a daemon serves the clients that do not send a new optional field.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from release import history

SCHEMA_PATH = "docs/protocol.schema.json"
Schema = dict[str, Any]
Direction = Literal["sent", "received"]
"""``sent``: the client sends it (the daemon must still take it); ``received``: the daemon
sends it (the client must still read it)."""

# The tables of the schema: (key, direction of the params, direction of the result).
TABLES: tuple[tuple[str, Direction, Direction | None], ...] = (
    ("x-methods", "sent", "received"),
    ("x-notifications", "received", None),
    ("x-clientRequests", "received", "sent"),
)

# initialize's own parts: (key, direction, how a change names it).
INITIALIZE: tuple[tuple[str, Direction, str], ...] = (
    ("x-initializationOptions", "sent", "initialize initializationOptions"),
    ("x-initializeResult", "received", "initialize result"),
)


@dataclass
class _Walk:
    old_root: Schema
    new_root: Schema
    found: list[str] = field(default_factory=list)
    seen: set[tuple[str, str, Direction]] = field(default_factory=set)

    def resolve(self, schema: Schema, root: Schema) -> tuple[Schema, str | None]:
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema, None
        name = ref.rsplit("/", 1)[-1]
        return root["$defs"][name], name

    def compare(self, old: Schema, new: Schema, direction: Direction, where: str) -> None:
        old, old_ref = self.resolve(old, self.old_root)
        new, new_ref = self.resolve(new, self.new_root)
        if old_ref and new_ref:
            # A type met again (recursive, or shared by several methods) is compared once.
            key = (old_ref, new_ref, direction)
            if key in self.seen:
                return
            self.seen.add(key)
        old, old_null = _nullable(old, self.old_root)
        new, new_null = _nullable(new, self.new_root)
        if direction == "received" and new_null and not old_null:
            self.found.append(f"{where}: may now be null")
        if direction == "sent" and old_null and not new_null:
            self.found.append(f"{where}: no longer takes null")
        old_kind, new_kind = _kind(old), _kind(new)
        if "any" not in (old_kind, new_kind) and old_kind != new_kind:
            self.found.append(f"{where}: type changed from {old_kind} to {new_kind}")
            return
        if old_kind == "object":
            self.compare_objects(old, new, direction, where)
        elif old_kind == "array" and "items" in old and "items" in new:
            self.compare(old["items"], new["items"], direction, f"{where}[]")
        elif direction == "sent" and "enum" in old and "enum" in new:
            dropped = sorted(set(map(str, old["enum"])) - set(map(str, new["enum"])))
            if dropped:
                self.found.append(f"{where}: no longer takes {', '.join(dropped)}")

    def compare_objects(self, old: Schema, new: Schema, direction: Direction, where: str) -> None:
        old_props: Schema = old.get("properties", {})
        new_props: Schema = new.get("properties", {})
        old_required = set(old.get("required", []))
        new_required = set(new.get("required", []))
        for name, old_prop in old_props.items():
            at = f"{where}.{name}"
            if name not in new_props:
                self.found.append(f"{at}: removed")
                continue
            if direction == "received" and name in old_required and name not in new_required:
                self.found.append(f"{at}: no longer always sent")
            if direction == "sent" and name in new_required and name not in old_required:
                self.found.append(f"{at}: now required")
            self.compare(old_prop, new_props[name], direction, at)
        for name in sorted(new_required - set(old_props)):
            if direction == "sent":
                self.found.append(f"{where}.{name}: new and required")
        old_map, new_map = old.get("additionalProperties"), new.get("additionalProperties")
        if isinstance(old_map, dict) and isinstance(new_map, dict):
            self.compare(old_map, new_map, direction, f"{where}{{}}")


def _nullable(schema: Schema, root: Schema) -> tuple[Schema, bool]:
    """The schema without its null alternative (``X | None``), and whether it had one."""
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema, schema.get("type") == "null"
    rest = [o for o in options if o.get("type") != "null"]
    if len(rest) == 1 and len(rest) < len(options):
        inner = rest[0]
        if "$ref" in inner:
            inner = root["$defs"][inner["$ref"].rsplit("/", 1)[-1]]
        return inner, True
    return schema, False


def _kind(schema: Schema) -> str:
    """What kind of JSON value a schema describes: object, array, a scalar type, or any."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return "|".join(sorted(kind))
    if "properties" in schema:
        return "object"
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values:
        return "|".join(sorted({type(v).__name__.replace("str", "string") for v in values}))
    return "any"


def breaking_changes(old: Schema, new: Schema) -> list[str]:
    """Every change from ``old`` to ``new`` that breaks a client of ``old``, one line each
    naming where (``claude/newChannel params.cwd: removed``)."""
    walk = _Walk(old, new)
    for table, params, result in TABLES:
        new_table = new.get(table, {})
        for name, entry in old.get(table, {}).items():
            if name not in new_table:
                walk.found.append(f"{name}: removed")
                continue
            walk.compare(entry["params"], new_table[name]["params"], params, f"{name} params")
            if result is not None and "result" in entry:
                walk.compare(entry["result"], new_table[name]["result"], result, f"{name} result")
    for key, direction, label in INITIALIZE:
        if key in old and key in new:
            walk.compare(old[key], new[key], direction, label)
    new_errors = new.get("x-errors", {})
    for name, error in old.get("x-errors", {}).items():
        if name not in new_errors:
            walk.found.append(f"error {name}: removed")
        elif new_errors[name].get("code") != error.get("code"):
            walk.found.append(
                f"error {name}: code {error.get('code')} is now {new_errors[name].get('code')}"
            )
    return list(_unique(walk.found))


def _unique(lines: list[str]) -> Iterator[str]:
    seen: set[str] = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            yield line


def protocol_version(schema: Schema) -> int:
    """The protocol a schema states (a schema from before the handshake: 1)."""
    return int(schema.get("x-protocolVersion", 1))


def released_schema(root: Path, revision: str) -> Schema:
    """docs/protocol.schema.json as the release at ``revision`` (its tag or commit) committed
    it."""
    shown = subprocess.run(
        ["git", "show", f"{revision}:{SCHEMA_PATH}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: Schema = json.loads(shown.stdout)
    return loaded


def refusals(root: Path, against: str | None = None) -> list[str]:
    """Why the protocol of the tree at ``root`` must not be released: breaking changes since
    the release ``against`` (its tag or commit; default: the last release) while the protocol
    version stayed the same. Empty when there is nothing to compare with (before the first
    release)."""
    if against is not None:
        tag = revision = against
    else:
        last = history.last_release(root)
        if last is None:
            return []
        tag, revision = last
    old = released_schema(root, revision)
    new: Schema = json.loads((root / SCHEMA_PATH).read_text(encoding="utf-8"))
    changes = breaking_changes(old, new)
    if not changes or protocol_version(new) > protocol_version(old):
        return []
    return [
        f"the protocol breaks clients of {tag} (protocol {protocol_version(old)}) but its "
        "version did not rise: raise PROTOCOL_VERSION in claude_sidecar/protocol/api.py (and "
        "OLDEST_CLIENT_PROTOCOL when the daemon can no longer serve those clients), then "
        f"regenerate the schema, or keep what they use:\n"
        + "".join(f"  {change}\n" for change in changes).rstrip("\n")
    ]
