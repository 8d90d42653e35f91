"""docs/protocol.md documents every method, notification, field and error that exists.

The JSON Schema that ``claude_sidecar.protocol.schema`` generates from
``claude_sidecar.protocol.api`` and ``claude_sidecar.protocol.errors`` (the one
``claude-sidecar schema`` prints and docs/protocol.schema.json keeps) is the source
here: every name in it must be in the reference, every ``claude/*`` heading of the
reference must be in it, and every JSON-RPC example in the reference must validate
against it. So the reference, the schema and the types cannot drift apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from claude_sidecar.protocol import schema

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
SCHEMA = schema.build()


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text under the heading whose text is ``title`` (backticks ignored), up to
    the next heading of the same or a higher level; subsections are included."""
    lines = doc_text().splitlines()
    for i, line in enumerate(lines):
        m = HEADING.match(line)
        if m and m.group(2).replace("`", "") == title:
            level = len(m.group(1))
            end = next(
                (
                    j
                    for j in range(i + 1, len(lines))
                    if (h := HEADING.match(lines[j])) and len(h.group(1)) <= level
                ),
                len(lines),
            )
            return "\n".join(lines[i:end])
    raise AssertionError(f"docs/protocol.md has no heading `{title}`")


def names_in(node: dict[str, Any], seen: set[str] | None = None) -> list[str]:
    """The JSON names a schema node defines, following ``$ref``s into ``$defs``: every
    property name, and the tag name and tag values of tagged unions."""
    seen = set() if seen is None else seen
    names: list[str] = []
    if (ref := node.get("$ref")) is not None and ref not in seen:
        seen.add(ref)
        names += names_in(SCHEMA["$defs"][ref.rsplit("/", 1)[1]], seen)
    if (tags := node.get("discriminator")) is not None:
        names += [tags["propertyName"], *tags["mapping"]]
    children = list(node.get("properties", {}).values())
    names += list(node.get("properties", {}))
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            children.append(node[key])
    for key in ("anyOf", "oneOf", "allOf"):
        children += node.get(key, [])
    for child in children:
        names += names_in(child, seen)
    return names


def missing_in(text: str, names: list[str]) -> list[str]:
    return [n for n in dict.fromkeys(names) if f"`{n}`" not in text and f'`"{n}"`' not in text]


def anchor(name: str) -> str:
    """The Markdown anchor of a method's heading: `claude/channelInfo` -> #claudechannelinfo."""
    return "#" + name.replace("/", "").lower()


ENTRY_KINDS = [
    ref["$ref"] for ref in SCHEMA["$defs"]["Transcript"]["properties"]["entries"]["items"]["anyOf"]
]


def documented_elsewhere(text: str, root: dict[str, str]) -> set[str]:
    """The ``$ref``s of other methods' whole results where ``text`` links to that method's
    section: their fields are documented there (e.g. newChannel's ``info`` is
    claude/channelInfo's result); and the entries, where it links to "The conversation"."""
    refs = {
        entry["result"]["$ref"]
        for name, entry in SCHEMA["x-methods"].items()
        if entry["result"] != root and anchor(name) in text
    }
    if "(#the-conversation)" in text:
        refs.update(ENTRY_KINDS)
    return refs


@pytest.mark.parametrize("method", SCHEMA["x-methods"])
def test_every_method_has_a_section_with_every_param_and_result_field(method: str) -> None:
    entry = SCHEMA["x-methods"][method]
    text = section(method)
    skip = documented_elsewhere(text, entry["result"])

    missing = missing_in(text, names_in(entry["params"]) + names_in(entry["result"], skip))

    assert not missing, f"{method}: fields not documented in its section: {missing}"


@pytest.mark.parametrize("name", SCHEMA["x-notifications"])
def test_every_notification_has_a_section_with_every_field(name: str) -> None:
    text = section(name)
    skip = documented_elsewhere(text, SCHEMA["x-notifications"][name]["params"])

    missing = missing_in(text, names_in(SCHEMA["x-notifications"][name]["params"], skip))

    assert not missing, f"{name}: fields not documented in its section: {missing}"


def test_the_conversation_section_documents_every_kind_of_entry_and_its_fields() -> None:
    text = section("The conversation")
    kinds = SCHEMA["$defs"]["Transcript"]["properties"]["entries"]["items"]

    missing = missing_in(text, names_in(kinds))

    assert not missing, f"entry fields not documented in The conversation: {missing}"


@pytest.mark.parametrize("name", SCHEMA["x-clientRequests"])
def test_every_request_to_the_client_has_a_section_with_every_field(name: str) -> None:
    text = section(name)

    missing = missing_in(text, names_in(SCHEMA["x-clientRequests"][name]["params"]))

    assert not missing, f"{name}: fields not documented in its section: {missing}"


def test_every_initialization_option_is_documented() -> None:
    text = section("initialize")

    missing = missing_in(text, names_in(SCHEMA["x-initializationOptions"]))

    assert not missing, f"initializationOptions not documented: {missing}"


@pytest.mark.parametrize("name", SCHEMA["x-errors"])
def test_every_error_code_is_documented_with_its_data_fields(name: str) -> None:
    error = SCHEMA["x-errors"][name]
    row = next(
        (
            line
            for line in section("Errors").splitlines()
            if line.startswith("|") and f"`{name}`" in line
        ),
        None,
    )

    assert row is not None, f"{name}: no row in the Errors table"
    assert str(error["code"]) in row, f"{name}: code {error['code']} not in its row"
    missing = missing_in(row, [k for k in error["data"]["properties"] if k != "name"])
    assert not missing, f"{name}: `data` fields not in its row of the Errors table: {missing}"


def test_standard_json_rpc_codes_are_documented() -> None:
    text = section("Errors")

    for code in ("-32601", "-32603"):
        assert code in text, f"standard code {code} not in the Errors section"


def test_every_claude_method_named_in_a_heading_is_in_the_schema() -> None:
    """The reverse direction: no section documents a method that is not implemented
    (planned methods are listed in the Planned section, not as headings)."""
    known = (
        set(SCHEMA["x-methods"]) | set(SCHEMA["x-notifications"]) | set(SCHEMA["x-clientRequests"])
    )
    headed = {
        m.group(2).replace("`", "")
        for line in doc_text().splitlines()
        if (m := HEADING.match(line))
    }
    documented = {h for h in headed if h.startswith("claude/")}

    assert documented <= known, f"headings for unknown methods: {sorted(documented - known)}"


def test_the_reference_says_how_to_get_the_schema() -> None:
    intro = doc_text().split("\n## ", 1)[0]

    assert "claude-sidecar schema" in intro and "docs/protocol.schema.json" in intro


# ---------------------------------------------------------------- the examples

FENCE = re.compile(r"^```")
ARROW = re.compile(r"^(<-|->) ?", re.MULTILINE)
# The reference trims long messages: `"...": "..."` stands for more fields, a `"..."` item
# for more items.
TRIMMED = "..."


@dataclass(frozen=True)
class Example:
    """One JSON-RPC message shown in a code block of the reference."""

    line: int
    section: str
    message: dict[str, Any]
    schema: dict[str, Any]
    what: str


def json_values(block: str) -> Iterator[tuple[int, Any]]:
    """``(line in the block, value)`` of the JSON values written one after the other in a
    code block (``<-``/``->`` arrows dropped); lines that are not JSON are skipped."""
    text = ARROW.sub("", block)
    decoder = json.JSONDecoder()
    at = 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            newline = text.find("\n", at)
            if newline < 0:
                return
            at = newline + 1
            continue
        yield text.count("\n", 0, at), value
        at = end


def code_blocks() -> Iterator[tuple[int, str, str]]:
    """``(first line, section, text)`` of every fenced block; ``section`` is the heading
    of level 1 to 3 above it (``####`` examples belong to the method above them)."""
    section_title, start = "", 0
    block: list[str] | None = None
    for number, line in enumerate(doc_text().splitlines(), 1):
        if block is not None:
            if FENCE.match(line):
                yield start, section_title, "\n".join(block)
                block = None
            else:
                block.append(line)
        elif FENCE.match(line):
            block, start = [], number + 1
        elif (m := HEADING.match(line)) and len(m.group(1)) <= 3:
            section_title = m.group(2).replace("`", "")


def examples() -> list[Example]:
    """Every ``claude/*`` message and every error response of the reference, each with
    the part of the schema it must match. A response is matched to the request with
    its id shown before it in the same section, else to the section's method."""
    found: list[Example] = []
    asked: dict[tuple[str, Any], str] = {}
    for first, title, text in code_blocks():
        for offset, message in json_values(text):
            if not isinstance(message, dict) or "jsonrpc" not in message:
                continue
            method = message.get("method")
            if method is not None:
                asked[title, message.get("id")] = method
                part = schema_of_call(method, message)
            elif "result" in message:
                method = asked.get((title, message["id"]), title)
                entry = SCHEMA["x-methods"].get(method)
                part = None if entry is None else ("result", entry["result"])
                if method == "initialize":
                    part = ("result", SCHEMA["x-initializeResult"])
            else:
                part = schema_of_error(message["error"])
            if part is not None:
                what = f"{method or message['error'].get('data', {}).get('name')} {part[0]}"
                found.append(Example(first + offset, title, message, part[1], what))
    return found


def schema_of_call(method: str, message: dict[str, Any]) -> tuple[str, Any] | None:
    if method in SCHEMA["x-methods"]:
        return "params", SCHEMA["x-methods"][method]["params"]
    if method in SCHEMA["x-notifications"]:
        return "params", SCHEMA["x-notifications"][method]["params"]
    if method in SCHEMA["x-clientRequests"]:
        return "params", SCHEMA["x-clientRequests"][method]["params"]
    if method == "initialize" and (message.get("params") or {}).get("initializationOptions"):
        return "initializationOptions", SCHEMA["x-initializationOptions"]
    return None


def schema_of_error(error: dict[str, Any]) -> tuple[str, Any] | None:
    name = (error.get("data") or {}).get("name")
    if name not in SCHEMA["x-errors"]:
        return None  # a standard JSON-RPC error (-32601, ...): no `data.name`
    return "error", {
        "type": "object",
        "required": ["code", "data"],
        "properties": {
            "code": {"const": SCHEMA["x-errors"][name]["code"]},
            "data": SCHEMA["x-errors"][name]["data"],
        },
    }


def instance(example: Example) -> Any:
    if example.what.endswith("initializationOptions"):
        return example.message["params"]["initializationOptions"]
    if example.what.endswith("params"):
        return example.message.get("params") or {}
    if example.what.endswith("result"):
        return example.message["result"]
    return example.message["error"]


def is_trimmed(value: Any) -> bool:
    if isinstance(value, dict):
        return TRIMMED in value or any(is_trimmed(v) for v in value.values())
    if isinstance(value, list):
        return TRIMMED in value or any(is_trimmed(v) for v in value)
    return False


def untrimmed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untrimmed(v) for k, v in value.items() if k != TRIMMED}
    if isinstance(value, list):
        return [untrimmed(v) for v in value if v != TRIMMED]
    return value


EXAMPLES = examples()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"line {e.line}: {e.what}")
def test_every_example_in_the_reference_validates_against_the_schema(example: Example) -> None:
    value = instance(example)
    trimmed = is_trimmed(value)
    validator = jsonschema.Draft202012Validator({**SCHEMA, **example.schema})

    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
        for e in validator.iter_errors(untrimmed(value))
        # A trimmed message may lack required fields; what it shows must be right.
        if not (trimmed and e.validator == "required")
    ]

    assert not problems, f"docs/protocol.md line {example.line} ({example.section}): {problems}"


def test_the_reference_has_examples_of_every_kind_of_message() -> None:
    """The example check above must not pass by finding nothing to check."""
    kinds = {e.what.split(" ")[1] for e in EXAMPLES}

    assert kinds == {"params", "result", "error", "initializationOptions"}
    assert len(EXAMPLES) > 200


def test_the_initialize_result_is_documented_field_by_field() -> None:
    text = section("initialize")

    missing = missing_in(text, names_in(SCHEMA["x-initializeResult"]))

    assert not missing, f"initialize result fields not documented: {missing}"


def test_the_doctor_report_is_documented_field_by_field() -> None:
    text = section("Checking a set-up: claude-sidecar doctor")

    missing = missing_in(text, names_in(SCHEMA["x-doctor"]))

    assert not missing, f"DoctorReport fields not documented: {missing}"


def test_the_doctor_reports_json_example_validates_against_the_schema() -> None:
    text = section("Checking a set-up: claude-sidecar doctor")
    (example,) = re.findall(r"```json\n(.*?)```", text, re.DOTALL)
    validator = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["x-doctor"]})

    problems = [e.message[:300] for e in validator.iter_errors(json.loads(example))]

    assert not problems, problems
