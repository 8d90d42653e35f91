"""CHANGELOG.md's sections: ``## Unreleased``, then one ``## X.Y.Z (YYYY-MM-DD)`` per release,
newest first."""

from __future__ import annotations

import re

PATH = "CHANGELOG.md"
UNRELEASED = "## Unreleased"
_RELEASE = re.compile(r"^## (?P<version>\d+\.\d+\.\d+)(?: \(.*\))?$", re.MULTILINE)


def newest_release(text: str) -> str | None:
    """The version of the first released section, or None when there is none."""
    match = _RELEASE.search(text)
    return match["version"] if match else None


def has_release(text: str, version: str) -> bool:
    """Whether a ``## <version>`` section is there."""
    return any(match["version"] == version for match in _RELEASE.finditer(text))


def release(text: str, version: str, date: str) -> str:
    """The changelog with what is under Unreleased moved to a new ``## <version> (<date>)``
    section, and an empty Unreleased above it. ValueError when there is no Unreleased
    section, nothing under it, or the version already has a section."""
    if has_release(text, version):
        raise ValueError(f"{PATH} already has a section for {version}")
    heading = re.search(rf"^{UNRELEASED}\n", text, re.MULTILINE)
    if heading is None:
        raise ValueError(f'{PATH} has no "{UNRELEASED}" section to release')
    following = _RELEASE.search(text, heading.end())
    body = text[heading.end() : following.start() if following else len(text)]
    if not body.strip():
        raise ValueError(f'{PATH}: nothing under "{UNRELEASED}": a release says what changed')
    return (
        text[: heading.start()] + f"{UNRELEASED}\n\n## {version} ({date})\n" + text[heading.end() :]
    )
