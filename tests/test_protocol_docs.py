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
import pydantic
import pytest
from acp import schema as acp_schema
from claude_sidecar.protocol import api, schema

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
ACP_DOC = DOC.with_name("acp.md")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
SCHEMA = schema.build()


def closed(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with every struct closed to keys it does not define.

    The published schema leaves what the daemon sends open (a newer daemon may add a
    field an older client's validator must let through); the examples in the reference
    show this daemon, so a key it never sends (a stale field) is an error there.
    """
    defs = {
        name: {"additionalProperties": False, **node} if "properties" in node else node
        for name, node in document["$defs"].items()
    }
    return {**document, "$defs": defs}


STRICT = closed(SCHEMA)


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


def refs_in(node: dict[str, Any], seen: set[str] | None = None) -> set[str]:
    """The ``$ref``s a schema node names, and those of the nodes they name, at any depth."""
    seen = set() if seen is None else seen
    if (ref := node.get("$ref")) is not None and ref not in seen:
        seen.add(ref)
        refs_in(SCHEMA["$defs"][ref.rsplit("/", 1)[1]], seen)
    for child in node.get("properties", {}).values():
        refs_in(child, seen)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            refs_in(node[key], seen)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in node.get(key, []):
            refs_in(child, seen)
    return seen


def missing_in(text: str, names: list[str]) -> list[str]:
    return [n for n in dict.fromkeys(names) if f"`{n}`" not in text and f'`"{n}"`' not in text]


def anchor(name: str) -> str:
    """The Markdown anchor of a method's heading: `claude/channelInfo` -> #claudechannelinfo."""
    return "#" + name.replace("/", "").lower()


ENTRY_KINDS = [
    ref["$ref"] for ref in SCHEMA["$defs"]["Transcript"]["properties"]["entries"]["items"]["anyOf"]
]


def documented_elsewhere(text: str, method: str) -> set[str]:
    """The ``$ref``s of other methods' whole results where ``text`` (``method``'s section)
    links to that method's section: their fields are documented there (e.g. newChannel's
    ``info`` is claude/channelInfo's result, watchChannels answers as listChannels does);
    and the entries, where it links to "The conversation". A result's own structs (the
    channels of listChannels' answer) are documented with it."""
    refs: set[str] = set()
    for name, entry in SCHEMA["x-methods"].items():
        if name != method and anchor(name) in text:
            refs |= refs_in(entry["result"])
    if "(#the-conversation)" in text:
        refs.update(ENTRY_KINDS)
    return refs


@pytest.mark.parametrize("method", SCHEMA["x-methods"])
def test_every_method_has_a_section_with_every_param_and_result_field(method: str) -> None:
    entry = SCHEMA["x-methods"][method]
    text = section(method)
    skip = documented_elsewhere(text, method)

    missing = missing_in(text, names_in(entry["params"]) + names_in(entry["result"], skip))

    assert not missing, f"{method}: fields not documented in its section: {missing}"


@pytest.mark.parametrize("name", SCHEMA["x-notifications"])
def test_every_notification_has_a_section_with_every_field(name: str) -> None:
    text = section(name)
    skip = documented_elsewhere(text, name)

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


# ---------------------------------------------------------------- the contents and capabilities

DECLARED = {
    "Requests": [m.name for m in api.METHODS],
    "Notifications": list(api.NOTIFICATIONS),
    "Requests from the daemon to the client": list(api.CLIENT_REQUESTS),
}
"""What the daemon declares (api's method table), by the part of the reference for it."""
CLAUDE_NAME = re.compile(r"`(claude/[A-Za-z]+)`")


def contents() -> dict[str, list[str]]:
    """The ``claude/*`` names each item of the contents list names, by the item's title."""
    intro = doc_text().split("\n## ", 1)[0]
    assert "\nContents:\n" in intro, "docs/protocol.md has no contents list"
    listed: dict[str, list[str]] = {}
    for item in re.split(r"^- ", intro.split("\nContents:\n", 1)[1], flags=re.MULTILINE):
        if not item.strip():
            continue
        title = re.match(r"\s*(?:- )?\[([^\]]+)\]", item)
        assert title, f"a contents item without a link to its part: {item[:60]!r}"
        listed[title.group(1)] = CLAUDE_NAME.findall(item)
    return listed


@pytest.mark.parametrize("part", DECLARED)
def test_the_contents_list_names_exactly_what_the_daemon_declares(part: str) -> None:
    listed = contents().get(part)

    assert listed is not None, f"the contents list has no item for {part}"
    missing = [n for n in DECLARED[part] if n not in listed]
    extra = [n for n in listed if n not in DECLARED[part]]
    assert not missing and not extra, (
        f"contents item {part}: missing {missing}, listed but not declared there {extra}"
    )


def test_no_other_contents_item_names_a_claude_method() -> None:
    stray = {title: names for title, names in contents().items() if title not in DECLARED and names}

    assert not stray, f"contents items naming claude/* methods outside their part: {stray}"


@pytest.mark.parametrize("part", DECLARED)
def test_every_declared_name_has_its_own_heading_in_its_part(part: str) -> None:
    text = section(part)
    headed = [
        m.group(2).replace("`", "")
        for line in text.splitlines()
        if (m := HEADING.match(line)) and len(m.group(1)) == 3
    ]

    missing = [n for n in DECLARED[part] if n not in headed]
    assert not missing, f"{part}: no ### heading for {missing}"


def test_the_requests_are_documented_in_the_order_initialize_lists_them() -> None:
    """``claudeSidecar.methods`` of ``initialize`` lists them in the order of the reference."""
    headed = [
        name
        for line in section("Requests").splitlines()
        if (m := HEADING.match(line))
        and (name := m.group(2).replace("`", "")) in DECLARED["Requests"]
    ]

    assert headed == DECLARED["Requests"], (
        "the ### sections of Requests are not in api.METHODS order (what initialize sends): "
        f"documented {headed}, declared {DECLARED['Requests']}"
    )


def test_the_capabilities_shown_for_initialize_are_what_the_daemon_declares() -> None:
    """The lists of ``claudeSidecar`` in initialize's example answer: in order, a ``"..."``
    item standing for names left out; a list without one is the whole list."""
    answers = [
        e.message["result"]["capabilities"]["experimental"]["claudeSidecar"]
        for e in EXAMPLES
        if e.section == "initialize" and e.what == "initialize result"
    ]
    assert answers, "the initialize section shows no answer with capabilities.experimental"
    problems = []
    for shown in answers:
        for key, declared in zip(
            ("methods", "notifications", "clientRequests"), DECLARED.values(), strict=True
        ):
            names = shown.get(key, [])
            if TRIMMED in names:
                kept = [n for n in names if n != TRIMMED]
                ok = kept == [n for n in declared if n in kept] and set(kept) <= set(declared)
            else:
                ok = names == declared
            if not ok:
                missing = [n for n in declared if n not in names]
                extra = [n for n in names if n not in declared and n != TRIMMED]
                problems.append(f"{key}: missing {missing}, extra {extra}, or out of order")

    assert not problems, "initialize's example answer in docs/protocol.md: " + "; ".join(problems)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_every_link_to_a_section_of_the_reference_leads_to_a_heading() -> None:
    anchors = {
        github_anchor(m.group(2)) for line in doc_text().splitlines() if (m := HEADING.match(line))
    }
    linked = set(re.findall(r"\]\(#([^)]+)\)", doc_text()))

    assert linked <= anchors, f"links to no heading: {sorted(linked - anchors)}"


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
    code block (``<-``/``->`` arrows dropped); lines that are not JSON are skipped
    (:func:`not_json` names them)."""
    for offset, value in parsed(block):
        if value is not NOT_JSON:
            yield offset, value


NOT_JSON = object()


def parsed(block: str) -> Iterator[tuple[int, Any]]:
    """``(line in the block, value)`` of every JSON value, and ``NOT_JSON`` for each
    non-blank line where no JSON value starts."""
    text = ARROW.sub("", block)
    decoder = json.JSONDecoder()
    at = 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            yield text.count("\n", 0, at), NOT_JSON
            newline = text.find("\n", at)
            if newline < 0:
                return
            at = newline + 1
            continue
        yield text.count("\n", 0, at), value
        at = end


def not_json(block: str) -> list[int]:
    """The lines of ``block`` (from 0) that hold no JSON value."""
    return [offset for offset, value in parsed(block) if value is NOT_JSON]


@dataclass(frozen=True)
class Block:
    """One fenced code block of a document."""

    line: int
    """The number of its first line (the one after the opening fence)."""
    info: tuple[str, ...]
    """The words after the opening fence: the language, then a marker (see MARKERS)."""
    section: str
    text: str

    @property
    def language(self) -> str:
        return self.info[0] if self.info else ""

    @property
    def marker(self) -> str | None:
        return self.info[1] if len(self.info) > 1 else None


def code_blocks(text: str | None = None) -> Iterator[Block]:
    """Every fenced block of ``text`` (the reference by default); ``section`` is the
    heading of level 1 to 3 above it (``####`` examples belong to the method above them)."""
    section_title, start = "", 0
    info: tuple[str, ...] = ()
    block: list[str] | None = None
    for number, line in enumerate((doc_text() if text is None else text).splitlines(), 1):
        if block is not None:
            if FENCE.match(line):
                yield Block(start, info, section_title, "\n".join(block))
                block = None
            else:
                block.append(line)
        elif FENCE.match(line):
            block, start, info = [], number + 1, tuple(line[3:].split())
        elif (m := HEADING.match(line)) and len(m.group(1)) <= 3:
            section_title = m.group(2).replace("`", "")


def examples() -> list[Example]:
    """Every ``claude/*`` message and every error response of the reference, each with
    the part of the schema it must match. A response is matched to the request with
    its id shown before it in the same section, else to the section's method."""
    found: list[Example] = []
    asked: dict[tuple[str, Any], str] = {}
    for block in code_blocks():
        first, title = block.line, block.section
        for offset, message in json_values(block.text):
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
                    part = "result", SCHEMA["x-initializeResult"]
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


def only_missing(error: jsonschema.ValidationError) -> bool:
    """Whether ``error`` is only of fields left out: a required one, or an ``anyOf`` (an
    optional object, ``null`` otherwise) of which one branch lacks only required fields."""
    if error.validator == "required":
        return True
    if error.validator not in ("anyOf", "oneOf"):
        return False
    branches: dict[Any, list[jsonschema.ValidationError]] = {}
    for inner in error.context or ():
        branches.setdefault(inner.relative_schema_path[0], []).append(inner)
    return any(all(only_missing(e) for e in errors) for errors in branches.values())


EXAMPLES = examples()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"line {e.line}: {e.what}")
def test_every_example_in_the_reference_validates_against_the_schema(example: Example) -> None:
    value = instance(example)
    trimmed = is_trimmed(value)
    validator = jsonschema.Draft202012Validator({**STRICT, **example.schema})

    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
        for e in validator.iter_errors(untrimmed(value))
        # A trimmed message may lack required fields; what it shows must be right.
        if not (trimmed and only_missing(e))
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


# ---------------------------------------------------------------- every JSON block
#
# A ```json block holds whole JSON-RPC messages, each checked above. A block that holds
# something else says what after the language, so that nothing is skipped unsaid:
#
#   ```json <Type>     values of the schema's $defs type <Type>, one after the other, or
#                      members of one (`"cli": {...}`); checked against that type
#   ```json external   JSON of another program (the CLI's settings, an editor's
#                      configuration); checked to be JSON only
#
# In both, `"...": "..."` and `"..."` items trim a value, as in the messages.

EXTERNAL = "external"
LSP_METHODS = {
    "initialize",
    "initialized",
    "shutdown",
    "exit",
    "window/showMessage",
    "$/cancelRequest",
}
"""LSP's own messages: the schema covers ``claude/*`` only (and initialize's options and
result, checked above)."""
STANDARD_CODES = {-32700, -32600, -32601, -32602, -32603}
"""JSON-RPC's own errors, sent without ``data.name`` (see the Errors section)."""


def typed_values(block: Block) -> list[tuple[int, Any]]:
    """The values of a ``json <Type>`` block; members (``"cli": {...}``) as one object."""
    if block.text.lstrip().startswith('"'):
        return [(0, json.loads("{" + block.text + "}"))]
    return list(json_values(block.text))


def unchecked(document: str, blocks: list[Block], checked: set[int]) -> list[str]:
    """What the blocks of ``document`` show that no check covers: a JSON line of a
    ``json`` block that is not JSON, a value that is not a JSON-RPC message, a message
    that is neither checked (``checked`` holds their lines) nor one of LSP's or
    JSON-RPC's own. ``text`` blocks are looked at only where they hold messages."""
    problems = []
    asked: dict[Any, str] = {}
    for block in blocks:
        if block.marker is not None or block.language not in ("json", "text"):
            continue
        values = list(parsed(block.text))
        if block.language == "text" and not any(is_message(v) for _, v in values):
            continue
        loose = [
            block.line + offset
            for offset, value in values
            if block.language == "json" and (value is NOT_JSON or not is_message(value))
        ]
        if loose:
            problems.append(
                f"{document} line {loose[0]} ({block.section}): a ```json block of other "
                f"JSON than whole JSON-RPC messages; mark it ```json <Type> (values or members "
                f"of a type of the schema's $defs) or ```json {EXTERNAL}"
            )
            continue
        for offset, value in values:
            line = block.line + offset
            if is_message(value) and "method" in value and "id" in value:
                asked[value["id"]] = value["method"]
            if is_message(value) and line not in checked and not own(value, asked):
                problems.append(f"{document} line {line} ({block.section}): {value} is not checked")
    return problems


def is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("jsonrpc") == "2.0"


def own(message: dict[str, Any], asked: dict[Any, str]) -> bool:
    """True for a message of LSP or JSON-RPC itself, or a client's answer to a request of
    the daemon (any JSON: the schema does not type it)."""
    if "method" in message:
        return message["method"] in LSP_METHODS
    if "error" in message:
        error = message["error"]
        return error.get("code") in STANDARD_CODES and "name" not in (error.get("data") or {})
    return asked.get(message.get("id")) in LSP_METHODS | set(SCHEMA["x-clientRequests"])


def test_every_json_block_of_the_reference_is_checked_or_says_what_it_is() -> None:
    problems = unchecked("docs/protocol.md", list(code_blocks()), {e.line for e in EXAMPLES})

    assert not problems, "\n".join(problems)


def marked(text: str) -> list[Block]:
    return [b for b in code_blocks(text) if b.language == "json" and b.marker is not None]


@pytest.mark.parametrize("block", marked(doc_text()), ids=lambda b: f"line {b.line}: {b.marker}")
def test_every_marked_json_block_of_the_reference_is_what_its_marker_says(block: Block) -> None:
    if block.marker == EXTERNAL:
        assert typed_values(block), f"line {block.line}: an empty block"
        return
    assert block.marker in SCHEMA["$defs"], (
        f"line {block.line}: ```json {block.marker}: no such type in the schema's $defs; "
        f"name one, or mark JSON of another program ```json {EXTERNAL}"
    )
    validator = jsonschema.Draft202012Validator({**STRICT, "$ref": f"#/$defs/{block.marker}"})
    problems = [
        f"line {block.line + offset}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: "
        f"{e.message[:300]}"
        for offset, value in typed_values(block)
        for e in validator.iter_errors(untrimmed(value))
        # Members of a type, or a trimmed value, may leave required fields out.
        if not (
            (block.text.lstrip().startswith('"') or is_trimmed(value)) and e.validator == "required"
        )
    ]

    assert not problems, problems


# ---------------------------------------------------------------- docs/acp.md
#
# The same rules for the ACP agent's document: its JSON-RPC messages are checked against
# the types of the ACP SDK (agent-client-protocol, pydantic models), with no key the
# types do not know; its other ```json blocks say what they are.

ACP_TYPES: dict[str, tuple[type[pydantic.BaseModel], type[pydantic.BaseModel] | None]] = {
    "initialize": (acp_schema.InitializeRequest, acp_schema.InitializeResponse),
    "authenticate": (acp_schema.AuthenticateRequest, acp_schema.AuthenticateResponse),
    "session/new": (acp_schema.NewSessionRequest, acp_schema.NewSessionResponse),
    "session/load": (acp_schema.LoadSessionRequest, acp_schema.LoadSessionResponse),
    "session/resume": (acp_schema.ResumeSessionRequest, acp_schema.ResumeSessionResponse),
    "session/fork": (acp_schema.ForkSessionRequest, acp_schema.ForkSessionResponse),
    "session/list": (acp_schema.ListSessionsRequest, acp_schema.ListSessionsResponse),
    "session/close": (acp_schema.CloseSessionRequest, acp_schema.CloseSessionResponse),
    "session/set_mode": (acp_schema.SetSessionModeRequest, acp_schema.SetSessionModeResponse),
    "session/prompt": (acp_schema.PromptRequest, acp_schema.PromptResponse),
    "session/cancel": (acp_schema.CancelNotification, None),
    "session/update": (acp_schema.SessionNotification, None),
    "session/request_permission": (
        acp_schema.RequestPermissionRequest,
        acp_schema.RequestPermissionResponse,
    ),
}
"""The SDK's type of each ACP method's params and result, for the methods acp.md shows."""


@dataclass(frozen=True)
class AcpExample:
    """One JSON-RPC message of docs/acp.md, with the SDK type it must match."""

    line: int
    section: str
    value: Any
    model: type[pydantic.BaseModel] | None
    what: str


def acp_examples() -> list[AcpExample]:
    """Every JSON-RPC message of docs/acp.md; a response is matched to its request by id."""
    found: list[AcpExample] = []
    asked: dict[Any, str] = {}
    for block in code_blocks(ACP_DOC.read_text(encoding="utf-8")):
        for offset, message in json_values(block.text):
            if not is_message(message):
                continue
            line = block.line + offset
            if "method" in message:
                method = message["method"]
                if "id" in message:
                    asked[message["id"]] = method
                model, value = ACP_TYPES.get(method, (None, None))[0], message.get("params")
                what = f"{method} params"
            elif "error" in message:
                method, model, value = "", acp_schema.Error, message["error"]
                what = "error"
            else:
                method = asked.get(message.get("id"), "")
                model, value = ACP_TYPES.get(method, (None, None))[1], message["result"]
                what = f"{method} result"
            found.append(AcpExample(line, block.section, value, model, what))
    return found


ACP_EXAMPLES = acp_examples()


def unknown_keys(given: Any, known: Any, at: str = "") -> list[str]:
    """The keys of ``given`` that ``known`` (the same value as the SDK's type dumps it,
    without what it ignored) lacks, as paths."""
    if isinstance(given, dict) and isinstance(known, dict):
        return [
            path
            for key, value in given.items()
            for path in (
                [f"{at}{key}"]
                if key not in known
                else unknown_keys(value, known[key], f"{at}{key}.")
            )
        ]
    if isinstance(given, list) and isinstance(known, list):
        return [
            path
            for i, (g, k) in enumerate(zip(given, known, strict=False))
            for path in unknown_keys(g, k, f"{at}{i}.")
        ]
    return []


@pytest.mark.parametrize("example", ACP_EXAMPLES, ids=lambda e: f"line {e.line}: {e.what}")
def test_every_acp_message_in_acp_md_matches_the_sdk_types(example: AcpExample) -> None:
    assert example.model is not None, (
        f"docs/acp.md line {example.line}: no SDK type for {example.what!r}; add the method "
        f"to ACP_TYPES"
    )
    value = untrimmed(example.value)
    try:
        parsed_value = example.model.model_validate(value)
    except pydantic.ValidationError as e:
        raise AssertionError(f"docs/acp.md line {example.line} ({example.what}): {e}") from None
    known = parsed_value.model_dump(mode="json", by_alias=True, exclude_unset=True)

    extra = unknown_keys(value, known)
    assert not extra, f"docs/acp.md line {example.line} ({example.what}): unknown keys {extra}"


def test_every_json_block_of_acp_md_is_checked_or_says_what_it_is() -> None:
    blocks = list(code_blocks(ACP_DOC.read_text(encoding="utf-8")))

    problems = unchecked("docs/acp.md", blocks, {e.line for e in ACP_EXAMPLES})

    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "block", marked(ACP_DOC.read_text(encoding="utf-8")), ids=lambda b: f"line {b.line}"
)
def test_every_marked_json_block_of_acp_md_is_external_json(block: Block) -> None:
    assert block.marker == EXTERNAL, (
        f"docs/acp.md line {block.line}: ```json {block.marker}: acp.md's JSON of other "
        f"programs is marked ```json {EXTERNAL}"
    )
    json.loads(block.text)


def census(text: str, checked: set[int]) -> tuple[int, int, int]:
    """How many code blocks of a document hold checked messages, how many messages, and
    how many blocks are marked."""
    blocks = list(code_blocks(text))
    with_messages = [
        b for b in blocks if any(b.line + offset in checked for offset, _ in json_values(b.text))
    ]
    messages = sum(
        1 for b in blocks for offset, _ in json_values(b.text) if b.line + offset in checked
    )
    return len(with_messages), messages, sum(1 for b in blocks if b.marker is not None)


def test_the_checks_cover_the_blocks_of_both_documents() -> None:
    """The checks above must not pass by finding nothing to check."""
    reference = census(doc_text(), {e.line for e in EXAMPLES})
    acp = census(ACP_DOC.read_text(encoding="utf-8"), {e.line for e in ACP_EXAMPLES})

    assert reference[0] >= 90 and reference[1] >= 250 and reference[2] >= 5, reference
    assert acp[0] >= 4 and acp[1] >= 20 and acp[2] >= 2, acp
