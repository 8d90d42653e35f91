#!/usr/bin/env python3
"""Generate the Kotlin protocol types of the IntelliJ client from docs/protocol.schema.json.

    python3 scripts/gen_protocol.py           # (re)write core/.../protocol/Protocol.kt
    python3 scripts/gen_protocol.py --check   # exit 1 when Protocol.kt is stale

The schema is the checked-in output of `claude-sidecar schema` (a Python test keeps it equal
to the daemon's types), so Protocol.kt follows the daemon through it. Never edit Protocol.kt
by hand: change the daemon, regenerate the schema, then run this script.

How the schema maps to Kotlin (the same rules for every struct):

- every `$defs` struct is a `data class` whose property names are the wire names;
- a required field is a constructor parameter without default: non-null, or `T?` when the
  schema allows null (such fields carry `@AlwaysWritten`: they are sent as `null`, never
  left out);
- an optional field is `T? = null`: absent and null mean the same (the daemon applies its
  default, named in the KDoc), and a null is left out when sending;
- a string enum is an `enum class` implementing `WireEnum` (its JSON value is `wire`); a
  one-value enum named `type` or `kind` is a discriminator: `val type: String = "<value>"`;
- a free-form object is Gson's `JsonObject`, any JSON value `JsonElement`, a string map
  `Map<String, String>`;
- a union of structs is a `sealed interface` that its members implement, read back by the
  property its schema names as discriminator (`type` or `kind`).

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INTELLIJ = HERE.parent
REPO = INTELLIJ.parent.parent
SCHEMA = REPO / "docs" / "protocol.schema.json"
OUTPUT = (
    INTELLIJ
    / "core"
    / "src"
    / "main"
    / "kotlin"
    / "dev"
    / "claudesidecar"
    / "core"
    / "protocol"
    / "Protocol.kt"
)
PACKAGE = "dev.claudesidecar.core.protocol"
# The output is in ktlint's style (editors/intellij/.editorconfig), which scripts/lint.sh checks.
MAX_LINE = 140

# Names for enums whose values are shared by several fields (by their sorted values).
ENUM_NAMES = {
    ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"): "PermissionMode",
    ("awaitingPermission", "exited", "idle", "running", "starting"): "ChannelState",
    ("high", "low", "max", "medium", "xhigh"): "Effort",
    ("local", "project", "user"): "SettingSource",
    ("allowed", "denied"): "HistoryPermission",
    ("answeredElsewhere", "closed", "interrupted", "withdrawn"): "CancelReason",
    ("allow", "allowAlways", "deny"): "PermissionDecision",
    ("error", "interrupted", "maxBudget", "maxTurns", "success"): "TurnOutcome",
    ("image/gif", "image/jpeg", "image/png", "image/webp"): "ImageMediaType",
    (
        "awaitingPermission",
        "denied",
        "done",
        "failed",
        "interrupted",
        "pending",
        "running",
    ): "ToolStatus",
    ("allowed", "answered", "cancelled", "denied", "pending"): "AskState",
    ("error", "info", "warn"): "NoticeLevel",
}
# Names for unions of structs (by their sorted member names).
UNION_NAMES = {
    ("ImageBlock", "TextBlock"): "ContentBlock",
    ("NoticeEntry", "PromptEntry", "TextEntry", "ThinkingEntry", "ToolEntry", "TurnEntry"): "Entry",
}
KOTLIN_KEYWORDS = {
    "as",
    "break",
    "class",
    "continue",
    "do",
    "else",
    "false",
    "for",
    "fun",
    "if",
    "in",
    "interface",
    "is",
    "null",
    "object",
    "package",
    "return",
    "super",
    "this",
    "throw",
    "true",
    "try",
    "typealias",
    "typeof",
    "val",
    "var",
    "when",
    "while",
}


def pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def constant(value: str) -> str:
    """A wire value as a Kotlin constant: `acceptEdits` -> ACCEPT_EDITS, `image/png` ->
    IMAGE_PNG, `claude/newChannel` -> NEW_CHANNEL."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value)
    snake = re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()
    return snake if not snake[:1].isdigit() else "_" + snake


def ident(name: str) -> str:
    return f"`{name}`" if name in KOTLIN_KEYWORDS else name


def kdoc(text: str | None, indent: str = "") -> list[str]:
    if not text:
        return []
    # `claude/*` would open a nested comment in Kotlin.
    text = text.replace("``", "`").replace("/*", "/…").replace("*/", "*&#47;").strip()
    lines = text.splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *[f"{indent} * {line}".rstrip() for line in lines], f"{indent} */"]


def enum_entries(entries: list[list[str]]) -> list[str]:
    """An enum body's entries (each its KDoc lines and its line, without comma), as ktlint
    writes them: a blank line before each documented one, a trailing comma, then `;`."""
    out: list[str] = []
    for i, lines in enumerate(entries):
        if i and len(lines) > 1:
            out.append("")
        out += [*lines[:-1], lines[-1] + ","]
    return [*out, "    ;"]


def assignment(head: str, value: str) -> list[str]:
    """`head = value` in an object body, wrapped after `=` when too long for one line."""
    line = f"    {head} = {value}"
    return [line] if len(line) <= MAX_LINE else [f"    {head} =", f"        {value}"]


def list_of(head: str, items: list[str]) -> list[str]:
    """`head = listOf(items)` in an object body: one line, wrapped after `=`, or one item a line."""
    value = f"listOf({', '.join(items)})"
    lines = assignment(head, value)
    if max(map(len, lines)) <= MAX_LINE:
        return lines
    return [
        f"    {head} =",
        "        listOf(",
        *[f"            {item}," for item in items],
        "        )",
    ]


def strip_null(prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null alternative of `prop` and whether null is allowed."""
    alternatives = prop.get("anyOf")
    if alternatives is None:
        return prop, False
    others = [a for a in alternatives if a.get("type") != "null"]
    nullable = len(others) < len(alternatives)
    if len(others) == 1:
        return others[0], nullable
    return {"anyOf": others}, nullable


class Generator:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, dict[str, Any]] = schema["$defs"]
        self.enums: dict[tuple[str, ...], str] = {}
        self.unions: dict[tuple[str, ...], str] = {}
        self.union_of: dict[str, list[str]] = {}  # struct -> unions it is part of
        self.union_tags: dict[str, str] = {}  # union -> the property that names its member
        self.name_enums()
        self.name_unions()

    # -- naming ---------------------------------------------------------------------------

    def enum_sites(self) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        """Every enum-typed field: its struct, its name and its values."""
        for struct, definition in self.defs.items():
            for field, prop in definition.get("properties", {}).items():
                inner, _ = strip_null(prop)
                if inner.get("type") == "array":
                    inner, _ = strip_null(inner.get("items", {}))
                if "enum" in inner and not self.is_discriminator(field, inner):
                    yield struct, field, tuple(sorted(inner["enum"]))

    def name_enums(self) -> None:
        fields_of: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        for struct, field, values in self.enum_sites():
            fields_of.setdefault(values, []).append((struct, field))
        plain: dict[str, set[tuple[str, ...]]] = {}
        for values, sites in fields_of.items():
            for _, field in sites:
                plain.setdefault(pascal(field), set()).add(values)
        taken = set(self.defs)
        for values, sites in sorted(fields_of.items()):
            if values in ENUM_NAMES:
                name = ENUM_NAMES[values]
            else:
                struct, field = sites[0]
                name = pascal(field)
                if len(plain[name]) > 1 or name in taken:
                    base = re.sub(r"(Notification|Params|Result)$", "", struct)
                    name = base + pascal(field)
            if name in taken:
                raise SystemExit(
                    f"gen_protocol: enum name {name} is taken twice; add it to ENUM_NAMES"
                )
            taken.add(name)
            self.enums[values] = name

    def name_unions(self) -> None:
        for definition in self.defs.values():
            for prop in definition.get("properties", {}).values():
                self.find_unions(prop)

    def find_unions(self, prop: dict[str, Any]) -> None:
        inner, _ = strip_null(prop)
        if inner.get("type") == "array":
            self.find_unions(inner.get("items", {}))
        elif "anyOf" in inner:
            members = tuple(sorted(a["$ref"].split("/")[-1] for a in inner["anyOf"]))
            if members not in self.unions:
                name = UNION_NAMES.get(members, "Or".join(members))
                self.unions[members] = name
                tagged = prop.get("discriminator") or inner.get("discriminator") or {}
                self.union_tags[name] = tagged.get("propertyName", "type")
                for member in members:
                    self.union_of.setdefault(member, []).append(name)

    @staticmethod
    def is_discriminator(field: str, prop: dict[str, Any]) -> bool:
        return field in ("type", "kind") and len(prop.get("enum", [])) == 1

    # -- types ----------------------------------------------------------------------------

    def kotlin_type(self, prop: dict[str, Any]) -> str:
        inner, nullable = strip_null(prop)
        return self.base_type(inner) + ("?" if nullable else "")

    def base_type(self, prop: dict[str, Any]) -> str:
        if "$ref" in prop:
            return str(prop["$ref"]).split("/")[-1]
        if "anyOf" in prop:
            if all("$ref" in a for a in prop["anyOf"]):
                return self.unions[tuple(sorted(a["$ref"].split("/")[-1] for a in prop["anyOf"]))]
            return "JsonElement"
        if "enum" in prop:
            return self.enums[tuple(sorted(prop["enum"]))]
        kind = prop.get("type")
        if kind == "string":
            return "String"
        if kind == "integer":
            return "Int"
        if kind == "number":
            return "Double"
        if kind == "boolean":
            return "Boolean"
        if kind == "array":
            return f"List<{self.base_type(strip_null(prop.get('items', {}))[0])}>"
        if kind == "object":
            extra = prop.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"Map<String, {self.base_type(extra)}>"
            return "JsonObject"
        return "JsonElement"  # any JSON value

    # -- output ---------------------------------------------------------------------------

    def render(self) -> str:
        version = self.schema.get("x-version", "?")
        out = [
            "// GENERATED by editors/intellij/scripts/gen_protocol.py"
            " from docs/protocol.schema.json.",
            "// Do not edit: change the daemon's types, regenerate the schema, run the script.",
            '@file:Suppress("unused", "KDocUnresolvedReference")',
            "",
            f"package {PACKAGE}",
            "",
            "import com.google.gson.JsonElement",
            "import com.google.gson.JsonObject",
            "",
            "/** The daemon version whose schema these types were generated from. */",
            f'const val DAEMON_VERSION: String = "{version}"',
            "",
            "/** The version of that daemon's protocol: rises only on a breaking change. */",
            f"const val PROTOCOL_VERSION: Int = {self.schema['x-protocolVersion']}",
            "",
            "/** The oldest client protocol that daemon serves. */",
            f"const val OLDEST_CLIENT_PROTOCOL: Int = {self.schema['x-oldestClientProtocol']}",
            "",
            "/** The optional features a daemon may list in `claudeSidecar.features`. */",
            # One per line: the list outgrows ktlint's line length as features are added.
            "val FEATURE_NAMES: List<String> =",
            "    listOf(",
            *(f'        "{name}",' for name in sorted(self.schema["x-features"])),
            "    )",
            "",
        ]
        for values, name in sorted(self.enums.items(), key=lambda item: item[1]):
            out += [f"enum class {name}(override val wire: String) : WireEnum {{"]
            out += enum_entries([[f'    {constant(v)}("{v}")'] for v in values])
            out += [
                "",
                "    companion object {",
                f"        fun of(wire: String): {name}? ="
                " entries.firstOrNull { it.wire == wire }",
                "    }",
                "}",
                "",
            ]
        for members, name in sorted(self.unions.items(), key=lambda item: item[1]):
            out += [
                f"/** One of: {', '.join(f'[{m}]' for m in members)}"
                " (told apart by their `type`). */"
            ]
            out += [f"sealed interface {name}", ""]
        for name in sorted(self.defs):
            out += self.render_struct(name, self.defs[name])
        out += self.render_tables()
        return "\n".join(out).rstrip() + "\n"

    def render_struct(self, name: str, definition: dict[str, Any]) -> list[str]:
        required = set(definition.get("required", []))
        props = definition.get("properties", {})
        params: list[tuple[int, list[str]]] = []
        for field, prop in props.items():
            inner, nullable = strip_null(prop)
            doc = prop.get("description")
            notes = []
            if field not in required and "default" in prop and prop["default"] is not None:
                notes.append(f"Absent: the daemon's default, `{json.dumps(prop['default'])}`.")
            lines = kdoc(" ".join(filter(None, [doc, *notes])), "    ")
            if self.is_discriminator(field, inner):
                lines.append(f'    val {ident(field)}: String = "{inner["enum"][0]}",')
                params.append((3, lines))
            elif field in required and not nullable:
                lines.append(f"    val {ident(field)}: {self.kotlin_type(prop)},")
                params.append((0, lines))
            elif field in required:
                lines.append(
                    f"    @field:AlwaysWritten val {ident(field)}: {self.kotlin_type(prop)},"
                )
                params.append((1, lines))
            else:
                kotlin = self.base_type(inner) + "?"
                lines.append(f"    val {ident(field)}: {kotlin} = null,")
                params.append((2, lines))
        params.sort(key=lambda item: item[0])  # stable: required first, then schema order
        supertypes = self.union_of.get(name, [])
        suffix = f" : {', '.join(supertypes)}" if supertypes else ""
        out = kdoc(definition.get("description"))
        if (
            len(params) == 1 and len(params[0][1]) == 1
        ):  # ktlint: one undocumented parameter on one line
            line = f"data class {name}({params[0][1][0].strip().removesuffix(',')}){suffix}"
            if len(line) <= MAX_LINE:
                return [*out, line, ""]
        if not params:
            return [
                *out,
                f"class {name}{suffix} {{",
                "    override fun equals(other: Any?): Boolean = other is " + name,
                f"    override fun hashCode(): Int = {json.dumps(name)}.hashCode()",
                f'    override fun toString(): String = "{name}()"',
                "}",
                "",
            ]
        out.append(f"data class {name}(")
        for _, lines in params:
            out += lines
        out += [f"){suffix}", ""]
        return out

    def _table(self, key: str, doc: str, obj: str, kind: str, tail: list[str]) -> list[str]:
        """One `object` listing the schema's `key` entries as `kind` constants
        (`Method<P, R>` when `kind` is "Method", `NotificationType<P>` otherwise)."""

        def ref(node: dict[str, Any]) -> str:
            return str(node["$ref"]).split("/")[-1]

        out = [f"/** {doc} */", f"object {obj} {{"]
        names: list[str] = []
        for method, entry in sorted(self.schema[key].items()):
            const = constant(method.removeprefix("claude/"))
            params = ref(entry["params"])
            summary = kdoc(entry.get("summary"), "    ")
            if names and summary:  # ktlint: a blank line before a documented declaration
                out.append("")
            names.append(const)
            out += summary
            if kind == "Method":
                result = ref(entry["result"]) if "$ref" in entry["result"] else "JsonElement"
                out += assignment(
                    f"val {const}: Method<{params}, {result}>",
                    f'Method("{method}", {params}::class.java, {result}::class.java)',
                )
            else:
                out += assignment(
                    f"val {const}: NotificationType<{params}>",
                    f'NotificationType("{method}", {params}::class.java)',
                )
        star = "Method<*, *>" if kind == "Method" else "NotificationType<*>"
        return [*out, *list_of(f"val ALL: List<{star}>", names), *tail, "}", ""]

    def render_tables(self) -> list[str]:
        def by_name(kind: str) -> list[str]:
            return [
                "",
                f"    fun byName(name: String): {kind}? = ALL.firstOrNull {{ it.name == name }}",
            ]

        out = self._table(
            "x-methods",
            "Every `claude/…` request of the daemon: name, params and result types.",
            "Methods",
            "Method",
            by_name("Method<*, *>"),
        )
        out += self._table(
            "x-notifications",
            "Every `claude/…` notification the daemon sends: name and params type.",
            "Notifications",
            "NotificationType",
            by_name("NotificationType<*>"),
        )
        out += self._table(
            "x-clientRequests",
            "Every request the daemon sends the client: name, params and result types.",
            "ClientRequests",
            "Method",
            [],
        )
        out += [
            "/** The members of each struct union by their tag, for reading them back. */",
            "val UNION_MEMBERS: Map<Class<*>, Map<String, Class<*>>> = mapOf(",
        ]
        for members, name in sorted(self.unions.items(), key=lambda item: item[1]):
            pairs = []
            for member in members:
                tag = self.defs[member]["properties"][self.union_tags[name]]["enum"][0]
                pairs.append(f'"{tag}" to {member}::class.java')
            line = f"    {name}::class.java to mapOf({', '.join(pairs)}),"
            if len(line) <= MAX_LINE:
                out.append(line)
            else:  # ktlint's wrapping of a long argument
                out += [
                    f"    {name}::class.java to",
                    "        mapOf(",
                    *(f"            {pair}," for pair in pairs),
                    "        ),",
                ]
        out += [")", ""]
        out += [
            "/** The property whose value names the member of each struct union. */",
            "val UNION_TAGS: Map<Class<*>, String> = mapOf(",
        ]
        for name in sorted(self.unions.values()):
            out.append(f'    {name}::class.java to "{self.union_tags[name]}",')
        out += [")", ""]
        out += [
            "/**",
            " * The daemon's errors by `data.name`, with their JSON-RPC `code` and the fields"
            " of their `data`.",
            " */",
            "enum class ErrorName(",
            "    override val wire: String,",
            "    val code: Int,",
            "    val dataFields: List<String>,",
            ") : WireEnum {",
        ]
        entries = []
        for name, entry in sorted(self.schema["x-errors"].items()):
            fields = ", ".join(f'"{f}"' for f in entry["data"].get("properties", {}) if f != "name")
            line = f'    {constant(name)}("{name}", {entry["code"]}, listOf({fields}))'
            if len(line) + 1 > MAX_LINE:
                # As ktlint wraps a call too long for one line: one argument a line.
                arguments = [f'"{name}"', str(entry["code"]), f"listOf({fields})"]
                wrapped = [
                    f"    {constant(name)}(",
                    *[f"        {argument}," for argument in arguments],
                    "    )",
                ]
            else:
                wrapped = [line]
            entries.append([*kdoc(entry.get("summary"), "    "), *wrapped])
        out += enum_entries(entries)
        out += [
            "",
            "    companion object {",
            "        fun of(wire: String?): ErrorName? = entries.firstOrNull { it.wire == wire }",
            "    }",
            "}",
            "",
        ]
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when Protocol.kt is not what the schema gives"
    )
    parser.add_argument("--schema", type=Path, default=SCHEMA)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    text = Generator(json.loads(args.schema.read_text(encoding="utf-8"))).render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        if current != text:
            what = (
                "is missing"
                if current is None
                else "is stale (it differs from what the schema gives)"
            )
            print(
                f"{args.output} {what}: {args.schema} changed since it was generated.\n"
                "Regenerate it: python3 editors/intellij/scripts/gen_protocol.py"
                " (never edit it by hand).",
                file=sys.stderr,
            )
            return 1
        print(f"{args.output.name} is up to date with {args.schema.name}")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
