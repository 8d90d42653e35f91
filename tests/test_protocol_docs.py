"""docs/protocol.md documents every method, notification, field and error that exists.

The msgspec types in ``claude_sidecar.api`` and the table in ``claude_sidecar.errors``
are the single source of truth; this test fails as soon as the reference drifts from
them (a field added, renamed or removed without updating the docs).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from claude_sidecar import api, errors

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


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
            end = next((j for j in range(i + 1, len(lines))
                        if (h := HEADING.match(lines[j])) and len(h.group(1)) <= level),
                       len(lines))
            return "\n".join(lines[i:end])
    raise AssertionError(f"docs/protocol.md has no heading `{title}`")


def structs_in(tp: type) -> list[type[msgspec.Struct]]:
    """``tp`` and every struct type reachable from its fields (lists, unions, ...)."""
    found: list[type[msgspec.Struct]] = []

    def walk(info: msgspec.inspect.Type) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls in found:
                return
            found.append(info.cls)
            for field in info.fields:
                walk(field.type)
        elif isinstance(info, msgspec.inspect.UnionType):
            for member in info.types:
                walk(member)
        elif isinstance(info, msgspec.inspect.Metadata):
            walk(info.type)
        elif isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.SetType,
                               msgspec.inspect.FrozenSetType,
                               msgspec.inspect.VarTupleType)):
            walk(info.item_type)
        elif isinstance(info, msgspec.inspect.DictType):
            walk(info.value_type)

    walk(msgspec.inspect.type_info(tp))
    return found


def required_names(tp: type, skip: set[type] = frozenset()) -> list[str]:
    """The JSON names that must appear in backticks: every field of ``tp`` and of the
    structs nested in it, plus the tag field and tag value of tagged structs. Structs in
    ``skip`` (and those only reachable through them) are documented elsewhere."""
    names: list[str] = []
    skipped = {inner for s in skip for inner in structs_in(s)} - {tp}
    for struct in structs_in(tp):
        if struct in skipped:
            continue
        names += [f.encode_name for f in msgspec.structs.fields(struct)]
        config = struct.__struct_config__
        if config.tag is not None:
            names += [config.tag_field, str(config.tag)]
    return names


def missing_in(text: str, names: list[str]) -> list[str]:
    return [n for n in dict.fromkeys(names)
            if f"`{n}`" not in text and f'`"{n}"`' not in text]


def anchor(name: str) -> str:
    """The Markdown anchor of a method's heading: `claude/channelInfo` -> #claudechannelinfo."""
    return "#" + name.replace("/", "").lower()


def documented_elsewhere(text: str, root: type) -> set[type]:
    """Structs nested in ``root`` that are another method's whole result, where ``text``
    links to that method's section (e.g. newChannel's ``info`` is claude/channelInfo's)."""
    return {m.result for m in api.METHODS
            if m.result is not root and anchor(m.name) in text and m.result in structs_in(root)}


@pytest.mark.parametrize("method", api.METHODS, ids=lambda m: m.name)
def test_every_method_has_a_section_with_every_param_and_result_field(
        method: api.Method) -> None:
    text = section(method.name)
    skip = documented_elsewhere(text, method.result)

    missing = missing_in(text, required_names(method.params)
                         + required_names(method.result, skip))

    assert not missing, f"{method.name}: fields not documented in its section: {missing}"


@pytest.mark.parametrize("name", api.NOTIFICATIONS)
def test_every_notification_has_a_section_with_every_field(name: str) -> None:
    text = section(name)

    missing = missing_in(text, required_names(api.NOTIFICATIONS[name]))

    assert not missing, f"{name}: fields not documented in its section: {missing}"


@pytest.mark.parametrize("name", api.CLIENT_REQUESTS)
def test_every_request_to_the_client_has_a_section_with_every_field(name: str) -> None:
    text = section(name)

    missing = missing_in(text, required_names(api.CLIENT_REQUESTS[name]))

    assert not missing, f"{name}: fields not documented in its section: {missing}"


def test_every_initialization_option_is_documented() -> None:
    text = section("initialize")

    missing = missing_in(text, required_names(api.InitializationOptions))

    assert not missing, f"initializationOptions not documented: {missing}"


@pytest.mark.parametrize("error", errors.ERROR_CODES, ids=lambda e: e.NAME)
def test_every_error_code_is_documented(error: type[errors.SidecarError]) -> None:
    text = section("Errors")

    assert str(error.CODE) in text, f"{error.NAME}: code {error.CODE} not in the Errors section"
    assert f"`{error.NAME}`" in text, f"{error.NAME}: name not in the Errors section"


def test_standard_json_rpc_codes_are_documented() -> None:
    text = section("Errors")

    for code in ("-32601", "-32603"):
        assert code in text, f"standard code {code} not in the Errors section"


def test_every_claude_method_named_in_a_heading_exists() -> None:
    """The reverse direction: no section documents a method that is not implemented
    (planned methods are listed in the Planned section, not as headings)."""
    known = {m.name for m in api.METHODS} | set(api.NOTIFICATIONS) | set(api.CLIENT_REQUESTS)
    headed = {m.group(2).replace("`", "") for line in doc_text().splitlines()
              if (m := HEADING.match(line))}
    documented = {h for h in headed if h.startswith("claude/")}

    assert documented <= known, f"headings for unknown methods: {sorted(documented - known)}"
