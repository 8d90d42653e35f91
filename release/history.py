"""Which release came last: its tag and commit, in a clone with tags or only with history.

A tag is the release, but a clone does not always carry tags: pushing a branch does not push
them, and CI systems clone branches. So every release is also recorded in a tracked file,
``release/releases.tsv`` (``vX.Y.Z<TAB>commit``), written by ``python -m release tag``; the
commit is in any full clone of a branch the release is part of.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import NamedTuple

RECORD = Path("release/releases.tsv")
TAG_PATTERN = "v[0-9]*.[0-9]*.[0-9]*"


class Release(NamedTuple):
    """A release: its tag name (``vX.Y.Z``) and the full hash of its commit."""

    tag: str
    commit: str


def version_key(tag: str) -> tuple[int, ...]:
    """``v1.10.0`` sorts after ``v1.9.3``."""
    return tuple(int(part) for part in tag.removeprefix("v").split("."))


def recorded(root: Path) -> list[Release]:
    """The releases ``release/releases.tsv`` lists, oldest first (blank and ``#`` lines
    skipped). ValueError names the line when one is malformed."""
    path = root / RECORD
    if not path.exists():
        return []
    releases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].startswith("v") or len(fields[1]) != 40:
            raise ValueError(f"{RECORD}:{number}: expected 'vX.Y.Z<TAB>40-hex commit': {line!r}")
        try:
            version_key(fields[0])
        except ValueError as e:
            raise ValueError(f"{RECORD}:{number}: {fields[0]!r} is no vX.Y.Z") from e
        releases.append(Release(fields[0], fields[1]))
    return sorted(releases, key=lambda release: version_key(release.tag))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def tagged(root: Path) -> list[Release]:
    """The ``vX.Y.Z`` tags reachable from HEAD, oldest first (none outside a git checkout)."""
    listed = _git(root, "tag", "--merged", "HEAD", "--list", TAG_PATTERN)
    releases = []
    for tag in listed.stdout.split() if listed.returncode == 0 else []:
        try:
            version_key(tag)
        except ValueError:
            continue
        commit = _git(root, "rev-parse", "--verify", f"{tag}^{{commit}}").stdout.strip()
        releases.append(Release(tag, commit))
    return sorted(releases, key=lambda release: version_key(release.tag))


def has_commit(root: Path, commit: str) -> bool:
    """Whether this clone holds ``commit`` (a shallow clone may not)."""
    return _git(root, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def last_release(root: Path) -> Release | None:
    """The newest release, from the tags or the record, whichever knows a newer one; None
    before the first. ValueError when the record names a commit this clone lacks (a shallow
    clone: ``git fetch --unshallow``) or a tag disagrees with the record."""
    by_tag = {release.tag: release for release in tagged(root)}
    for release in recorded(root):
        tag = by_tag.get(release.tag)
        if tag is not None and tag.commit != release.commit:
            raise ValueError(
                f"tag {release.tag} is commit {tag.commit}, but {RECORD} records "
                f"{release.commit}: correct the record or the tag"
            )
        by_tag[release.tag] = release
    if not by_tag:
        return None
    newest = by_tag[max(by_tag, key=version_key)]
    if not has_commit(root, newest.commit):
        raise ValueError(
            f"{newest.tag}'s commit {newest.commit} is not in this clone (a shallow one?): "
            "run `git fetch --unshallow origin`"
        )
    return newest


def tag_head(root: Path, version: str) -> Release:
    """Tag HEAD as the release ``version`` (an annotated ``vX.Y.Z``), then commit its line in
    ``release/releases.tsv``. ValueError, with nothing changed, when the release is known."""
    tag = f"v{version}"
    known = {release.tag for release in [*tagged(root), *recorded(root)]}
    if tag in known or _git(root, "rev-parse", "--verify", "--quiet", tag).returncode == 0:
        raise ValueError(f"{tag} exists already: set a new version first (set-version X.Y.Z)")
    commit = _git(root, "rev-parse", "HEAD").stdout.strip()
    _run(root, "tag", "-a", tag, "-m", f"claude-sidecar {version}")
    path = root / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = path.read_text(encoding="utf-8") if path.exists() else RECORD_HEADER
    path.write_text(f"{lines}{tag}\t{commit}\n", encoding="utf-8")
    _run(root, "add", "--", str(RECORD))
    _run(root, "commit", "--quiet", "-m", f"Record the release {tag} (for clones without tags)")
    return Release(tag, commit)


RECORD_HEADER = (
    "# Every release's tag and commit, for clones without tags (python -m release tag).\n"
)


def _run(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
