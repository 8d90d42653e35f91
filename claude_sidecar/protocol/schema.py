"""The JSON Schema document of the whole ``claude/*`` surface, generated from api.py.

One JSON Schema (draft 2020-12) document: every struct of the surface under ``$defs``
with its wire names (camelCase, as msgspec encodes them), and a machine-readable index
that code generators and tests walk instead of parsing docs/protocol.md:

- ``x-methods``: ``{name: {summary, params, result}}`` for every request the client sends;
- ``x-notifications``: ``{name: {summary, params}}`` for every notification the daemon sends;
- ``x-clientRequests``: ``{name: {summary, params, result}}`` for the requests the daemon
  sends the client;
- ``x-initializationOptions``: the ``initializationOptions`` of ``initialize``;
- ``x-initializeResult``: the result of ``initialize``;
- ``x-doctor``: what ``claude-sidecar doctor --json`` prints;
- ``x-errors``: ``{data.name: {code, summary, data}}`` for every error code;
- ``x-version``: the daemon version the document describes;
- ``x-protocolVersion``: the ``claude/*`` protocol it speaks (an integer that rises only on
  a breaking change), and ``x-oldestClientProtocol``: the oldest client protocol it serves;
- ``x-features``: ``{name: summary}`` of the optional features a connection may have.

Everything is derived from ``api.METHODS``, ``api.NOTIFICATIONS``, ``api.CLIENT_REQUESTS``,
``api.InitializationOptions`` and ``errors.ERROR_CODES``: adding a method there adds it here.
"""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

import msgspec

from claude_sidecar import __version__
from claude_sidecar.protocol import api, errors

DIALECT = "https://json-schema.org/draft/2020-12/schema"
REF_TEMPLATE = "#/$defs/{name}"
REGENERATE = "uv run claude-sidecar schema --output docs/protocol.schema.json"

_ANY_JSON = "Any JSON value, passed on verbatim."


def build() -> dict[str, Any]:
    """The schema document of the ``claude/*`` surface, as a JSON-ready dict."""
    inputs = [m.params for m in api.METHODS] + [api.InitializationOptions]
    outputs = (
        [m.result for m in api.METHODS]
        + list(api.NOTIFICATIONS.values())
        + list(api.CLIENT_REQUESTS.values())
        + [api.InitializeResult, api.DoctorReport]
    )
    received = _structs(inputs)
    sent = _structs(outputs)
    structs = list({s.cls: s for s in received + sent}.values())
    refs, defs = msgspec.json.schema_components([s.cls for s in structs], ref_template=REF_TEMPLATE)
    ref: dict[type, dict[str, str]] = {s.cls: r for s, r in zip(structs, refs, strict=True)}
    schema_of = {cls: defs[r["$ref"].rsplit("/", 1)[1]] for cls, r in ref.items()}
    _dedent_descriptions(structs, schema_of)
    _describe_raw_fields(structs, schema_of)
    _require_what_is_always_sent(received, sent, schema_of)
    return {
        "$schema": DIALECT,
        "title": "claude-sidecar claude/* protocol",
        "description": (
            "The claude/* JSON-RPC surface of claude-sidecar, generated from "
            "claude_sidecar/protocol/api.py (regenerate: " + REGENERATE + "). Every struct is in "
            "$defs; x-methods, x-notifications and x-clientRequests index them by method "
            "name; x-errors lists the error codes and their `data`. docs/protocol.md "
            "explains every field."
        ),
        "x-version": __version__,
        "x-protocolVersion": api.PROTOCOL_VERSION,
        "x-oldestClientProtocol": api.OLDEST_CLIENT_PROTOCOL,
        "x-features": dict(api.FEATURES),
        "x-methods": {
            m.name: {"summary": m.summary, "params": ref[m.params], "result": ref[m.result]}
            for m in api.METHODS
        },
        "x-notifications": {
            name: {"summary": _summary(tp), "params": ref[tp]}
            for name, tp in api.NOTIFICATIONS.items()
        },
        # api.py types only the params of client requests: the client's answer is free.
        "x-clientRequests": {
            name: {"summary": _summary(tp), "params": ref[tp], "result": {"description": _ANY_JSON}}
            for name, tp in api.CLIENT_REQUESTS.items()
        },
        "x-initializationOptions": ref[api.InitializationOptions],
        "x-initializeResult": ref[api.InitializeResult],
        "x-doctor": ref[api.DoctorReport],
        "x-errors": {
            error.NAME: {"code": error.CODE, "summary": _summary(error), "data": _error_data(error)}
            for error in errors.ERROR_CODES
        },
        "$defs": defs,
    }


def render(document: dict[str, Any]) -> str:
    """The document as deterministic JSON text (sorted keys, 2-space indent, final newline)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _summary(tp: type) -> str:
    """The first paragraph of a type's docstring, in Markdown backticks."""
    doc = inspect.getdoc(tp) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "`")


def _dedent_descriptions(
    structs: list[msgspec.inspect.StructType], schema_of: dict[type, dict[str, Any]]
) -> None:
    """Docstrings without their source indentation (msgspec keeps it after line one)."""
    for struct in structs:
        schema = schema_of[struct.cls]
        if "description" in schema:
            schema["description"] = inspect.cleandoc(schema["description"])


def _describe_raw_fields(
    structs: list[msgspec.inspect.StructType], schema_of: dict[type, dict[str, Any]]
) -> None:
    """Say what a ``msgspec.Raw`` field holds: msgspec gives it the bare schema ``{}``."""
    for struct in structs:
        for field in struct.fields:
            if isinstance(field.type, msgspec.inspect.RawType):
                schema_of[struct.cls]["properties"][field.encode_name] = {"description": _ANY_JSON}


def _require_what_is_always_sent(
    received: list[msgspec.inspect.StructType],
    sent: list[msgspec.inspect.StructType],
    schema_of: dict[type, dict[str, Any]],
) -> None:
    """Mark as required what the daemon always sends, so generated types need no checks.

    msgspec marks a field with a default as optional, which is right for what a client
    sends. What the daemon sends is stricter: a struct that does not omit defaults sends
    every field, and every notification carries ``channelId`` and ``seq`` (a protocol
    rule; ``claude/permissionRequest`` only has defaults for them to extend its base).
    """
    client_sent = {s.cls for s in received}
    for struct in sent:
        if struct.cls not in client_sent and not struct.cls.__struct_config__.omit_defaults:
            schema_of[struct.cls]["required"] = [f.encode_name for f in struct.fields]
    for tp in api.NOTIFICATIONS.values():
        schema = schema_of[tp]
        for name in ("channelId", "seq"):
            if name in schema["properties"] and name not in schema["required"]:
                schema["required"].append(name)


def _structs(types: list[Any]) -> list[msgspec.inspect.StructType]:
    """Every struct in ``types`` or reachable from their fields, each once, in order."""
    found: dict[type, msgspec.inspect.StructType] = {}

    def walk(info: msgspec.inspect.Type) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls not in found:
                found[info.cls] = info
                for field in info.fields:
                    walk(field.type)
        elif isinstance(info, msgspec.inspect.UnionType):
            for member in info.types:
                walk(member)
        elif isinstance(info, msgspec.inspect.Metadata):
            walk(info.type)
        elif isinstance(
            info,
            (
                msgspec.inspect.ListType,
                msgspec.inspect.SetType,
                msgspec.inspect.FrozenSetType,
                msgspec.inspect.VarTupleType,
            ),
        ):
            walk(info.item_type)
        elif isinstance(info, msgspec.inspect.DictType):
            walk(info.value_type)

    for info in msgspec.inspect.multi_type_info(types):
        walk(info)
    return list(found.values())


def _error_data(error: type[errors.SidecarError]) -> dict[str, Any]:
    """The schema of an error's ``data`` object.

    The error classes build ``data`` in their constructors under names of their own
    (``timeout`` becomes ``timeoutSeconds``), so the fields are found by building one
    error with a recognisable sample value per argument and looking where each landed;
    the field then has the schema of that argument's annotation.
    """
    hints = typing.get_type_hints(error.__init__)
    names = [
        p.name
        for p in inspect.signature(error.__init__).parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    samples = {name: _sample(hints.get(name, str), i) for i, name in enumerate(names)}
    data = error(**samples).data
    properties: dict[str, Any] = {"name": {"const": error.NAME}}
    for key, value in data.items():
        if key == "name":
            continue
        source = next(
            (n for n, s in samples.items() if s == value and type(s) is type(value)), None
        )
        properties[key] = (
            msgspec.json.schema(hints[source]) if source in hints else {"description": _ANY_JSON}
        )
    return {"type": "object", "properties": properties, "required": list(data)}


def _sample(annotation: Any, index: int) -> Any:
    """A value of ``annotation`` that no other argument of the same error has."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is list:
        return [_sample(args[0] if args else str, index)]
    if args:
        return _sample(args[0], index)  # X | None: a value of X
    if annotation is bool:
        return True
    if annotation is int:
        return 7_000 + index
    if annotation is float:
        return 7_000.5 + index
    return f"<sample {index}>"
