"""Where the version is stated, and checking or writing it there.

pyproject.toml's ``[project] version`` is the one source: the daemon reads it at run time
(importlib.metadata), and every other file that states it (the clients' manifests, the
generated protocol files, the docs' examples, CHANGELOG's newest release) is checked against
it here and written by ``set-version``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from release import changelog

SOURCE = "pyproject.toml"
VERSION_FORM = re.compile(r"\d+\.\d+\.\d+")
"""X.Y.Z: what PyPI, the VS Code Marketplace (no pre-release suffix) and Maven all accept."""

_V = r"(?P<version>\d+\.\d+\.\d+)"


@dataclass(frozen=True)
class VersionPlace:
    """One statement of the version in a file of the repository."""

    path: str
    """Relative to the repository root."""
    what: str
    """What states it there, for messages."""
    pattern: re.Pattern[str]
    """Matches the statement; its group ``version`` is the version."""
    count: int = 1
    """How many times the statement is in the file (all must agree)."""


def _place(path: str, what: str, pattern: str, count: int = 1) -> VersionPlace:
    return VersionPlace(path, what, re.compile(pattern.replace("{V}", _V), re.MULTILINE), count)


PLACES: tuple[VersionPlace, ...] = (
    _place(SOURCE, "[project] version", r'^version = "{V}"$'),
    _place("uv.lock", "the project's own entry", r'^name = "claude-sidecar"\nversion = "{V}"\n'),
    _place("editors/vscode/package.json", '"version"', r'^  "version": "{V}",$'),
    _place(
        "editors/vscode/package-lock.json",
        'top-level "version"',
        r'\A\{\n  "name": .*\n  "version": "{V}",$',
    ),
    _place(
        "editors/vscode/package-lock.json",
        'packages[""].version',
        r'^    "": \{\n      "name": .*\n      "version": "{V}",$',
    ),
    # Three literals rather than one ${revision}: Maven 3 installs a child pom with its parent
    # still `${revision}` (unless flatten-maven-plugin rewrites it), which no one can resolve,
    # and the IntelliJ plugin's Gradle build resolves claude-sidecar-ui from ~/.m2.
    _place(
        "editors/intellij/pom.xml",
        "the project's <version>",
        r"^  <artifactId>claude-sidecar-intellij</artifactId>\n  <version>{V}</version>$",
    ),
    *(
        _place(
            f"editors/intellij/{module}/pom.xml",
            "the parent's <version>",
            r"^    <artifactId>claude-sidecar-intellij</artifactId>\n    <version>{V}</version>$",
        )
        for module in ("core", "ui")
    ),
    _place("editors/intellij/plugin/gradle.properties", "pluginVersion", r"^pluginVersion={V}$"),
    _place("editors/intellij/plugin/gradle.properties", "sidecarVersion", r"^sidecarVersion={V}$"),
    # Generated: `claude-sidecar schema`, then each client's generator, which copy x-version.
    _place("docs/protocol.schema.json", '"x-version"', r'^  "x-version": "{V}"$'),
    _place(
        "editors/vscode/src/core/protocol.generated.ts",
        "the header",
        r"^// \(claude-sidecar {V}\)\. ",
    ),
    _place(
        "editors/vscode/src/core/protocol.generated.ts",
        "DAEMON_VERSION",
        r'^export const DAEMON_VERSION = "{V}";$',
    ),
    _place(
        "editors/intellij/core/src/main/kotlin/dev/claudesidecar/core/protocol/Protocol.kt",
        "DAEMON_VERSION",
        r'^const val DAEMON_VERSION: String = "{V}"$',
    ),
    _place(
        "editors/nvim/lua/claude_sidecar/protocol.lua",
        "the plugin's CLIENT_VERSION",
        r'^M\.CLIENT_VERSION = "{V}"$',
    ),
    # The docs' examples of what this version prints.
    _place("docs/protocol.md", "`doctor`'s first line", r"^claude-sidecar {V}, Python "),
    # At the start of a line: the protocolMismatch examples carry daemonVersions of their own.
    _place("docs/protocol.md", "`doctor --json`'s daemonVersion", r'^\{"daemonVersion": "{V}", '),
    _place(
        "docs/protocol.md",
        "initialize's serverInfo",
        r'"serverInfo": \{"name": "claude-sidecar", "version": "{V}"\}',
        count=3,
    ),
    _place(
        "docs/acp.md",
        "initialize's agentInfo",
        r'"agentInfo": \{"name": "claude-sidecar", "title": "Claude Code \(claude-sidecar\)", '
        r'"version": "{V}"\}',
    ),
    _place(
        "editors/intellij/README.md",
        "the plugin zip's name",
        r"claude-sidecar-intellij-plugin-{V}\.zip",
    ),
)
"""Every statement of the version but the CHANGELOG's (see ``changelog``)."""


def source_version(root: Path) -> str:
    """The version in pyproject.toml's ``[project]`` table."""
    with (root / SOURCE).open("rb") as file:
        version = tomllib.load(file)["project"]["version"]
    assert isinstance(version, str)
    return version


def misshapen(root: Path) -> list[str]:
    """The places whose statement is not found as often as expected (the file changed its
    form, so this module's pattern for it must follow)."""
    problems = []
    for place in PLACES:
        found = len(place.pattern.findall((root / place.path).read_text(encoding="utf-8")))
        if found != place.count:
            problems.append(
                f"{place.path}: {place.what} found {found} times, expected {place.count} "
                f"(pattern {place.pattern.pattern!r} in release/versions.py)"
            )
    return problems


def disagreements(root: Path) -> list[str]:
    """Every statement of the version that differs from pyproject.toml's, each naming its
    file and both values; and the misshapen places. Empty when all agree."""
    version = source_version(root)
    problems = misshapen(root)
    for place in PLACES:
        text = (root / place.path).read_text(encoding="utf-8")
        for match in place.pattern.finditer(text):
            if match["version"] != version:
                problems.append(
                    f"{place.path} ({place.what}) says {match['version']}, {SOURCE} says {version}"
                )
    newest = changelog.newest_release((root / changelog.PATH).read_text(encoding="utf-8"))
    if newest != version:
        problems.append(
            f"{changelog.PATH}'s newest released section is {newest or 'missing'}, "
            f"{SOURCE} says {version}"
        )
    return problems


def write_version(root: Path, version: str) -> None:
    """Write ``version`` into every place (not CHANGELOG.md: see ``changelog.release``).
    Writes nothing when a place is misshapen (ValueError)."""
    if not VERSION_FORM.fullmatch(version):
        raise ValueError(f"{version!r} is not a version of the form X.Y.Z")
    problems = misshapen(root)
    if problems:
        raise ValueError("\n".join(problems))
    texts: dict[str, str] = {}
    for place in PLACES:
        text = texts.get(place.path) or (root / place.path).read_text(encoding="utf-8")
        texts[place.path] = place.pattern.sub(lambda match: _with_version(match, version), text)
    for path, text in texts.items():
        (root / path).write_text(text, encoding="utf-8")


def _with_version(match: re.Match[str], version: str) -> str:
    start, end = match.span("version")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + version + whole[end - offset :]
