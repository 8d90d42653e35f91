"""The release tool's checks and ``set-version``, on a copy of the files that state the
version (never on the checkout itself)."""

from __future__ import annotations

import datetime
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_sidecar.protocol import schema

from release import build, changelog, versions
from release.__main__ import main, set_version

ROOT = Path(__file__).resolve().parents[2]
RELEASE_DAY = datetime.date(2026, 12, 24)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of every file that states the version, laid out as in the repository, with a
    change under CHANGELOG's Unreleased (the checkout has none right after a release)."""
    root = tmp_path / "repo"
    for path in {place.path for place in versions.PLACES} | {changelog.PATH}:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, root / path)
    edit(root / changelog.PATH, "## Unreleased\n", "## Unreleased\n\n### Fixed\n- A fix.\n")
    return root


def next_minor(tree: Path) -> str:
    """The version after the copy's (the next minor release)."""
    major, minor, _ = versions.source_version(tree).split(".")
    return f"{major}.{int(minor) + 1}.0"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_copy_agrees_as_the_checkout_does(tree: Path) -> None:
    assert versions.disagreements(tree) == []


def test_a_manifest_that_disagrees_is_named_with_both_versions(tree: Path) -> None:
    version = versions.source_version(tree)
    edit(tree / "editors/vscode/package.json", f'"version": "{version}"', '"version": "9.9.9"')

    assert versions.disagreements(tree) == [
        f'editors/vscode/package.json ("version") says 9.9.9, pyproject.toml says {version}'
    ]


def test_a_generated_protocol_file_that_disagrees_is_named(tree: Path) -> None:
    version = versions.source_version(tree)
    kotlin = next(place.path for place in versions.PLACES if place.path.endswith("Protocol.kt"))
    edit(
        tree / kotlin,
        f'DAEMON_VERSION: String = "{version}"',
        'DAEMON_VERSION: String = "0.0.1"',
    )

    assert versions.disagreements(tree) == [
        f"{kotlin} (DAEMON_VERSION) says 0.0.1, pyproject.toml says {version}"
    ]


def test_a_statement_that_changed_its_form_is_reported_not_passed(tree: Path) -> None:
    edit(tree / "editors/intellij/plugin/gradle.properties", "sidecarVersion=", "sidecar.version=")

    [problem] = versions.disagreements(tree)

    assert problem.startswith(
        "editors/intellij/plugin/gradle.properties: sidecarVersion found 0 times, expected 1"
    )


def test_a_changelog_whose_newest_release_is_another_version_disagrees(tree: Path) -> None:
    version = versions.source_version(tree)
    edit(tree / "CHANGELOG.md", "## Unreleased\n", "## Unreleased\n\n## 7.0.0 (2026-12-01)\n")

    assert versions.disagreements(tree) == [
        f"CHANGELOG.md's newest released section is 7.0.0, pyproject.toml says {version}"
    ]


def test_build_refuses_without_a_changelog_section_for_the_version(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    versions.write_version(tree, "0.42.0")
    out = tree / "dist"

    assert main(["build", "--out", str(out)], root=tree) == 1

    said = capsys.readouterr().err
    assert 'CHANGELOG.md has no "## 0.42.0" section' in said
    assert not out.exists()


def test_build_refuses_when_a_version_disagrees(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = versions.source_version(tree)
    edit(
        tree / "uv.lock",
        f'name = "claude-sidecar"\nversion = "{version}"',
        'name = "claude-sidecar"\nversion = "1.2.3"',
    )

    assert main(["build", "--out", str(tree / "dist")], root=tree) == 1

    assert f"uv.lock (the project's own entry) says 1.2.3, pyproject.toml says {version}" in (
        capsys.readouterr().err
    )


def test_build_refuses_uncommitted_changes_naming_them(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"]):
        subprocess.run([*git, *command], cwd=tree, check=True)
    assert build.uncommitted(tree) == []
    edit(tree / "docs/protocol.md", "claude-sidecar", "claude sidecar")

    assert main(["build", "--out", str(tree / "dist")], root=tree) == 1

    said = capsys.readouterr().err
    assert "uncommitted changes" in said and " M docs/protocol.md" in said
    assert not (tree / "dist").exists()


def test_set_version_writes_the_version_everywhere_and_dates_the_unreleased_changes(
    tree: Path,
) -> None:
    before = (tree / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = before.split("## Unreleased\n", 1)[1].split("\n## ", 1)[0]
    version = next_minor(tree)

    set_version(tree, version, RELEASE_DAY)

    assert versions.source_version(tree) == version
    assert versions.disagreements(tree) == []
    assert build.refusals(tree) == []
    after = (tree / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## Unreleased\n\n## {version} (2026-12-24)\n" + unreleased in after
    assert changelog.newest_release(after) == version


def test_set_version_writes_the_generated_files_as_their_generators_would(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kotlin_generator = "editors/intellij/scripts/gen_protocol.py"
    (tree / kotlin_generator).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / kotlin_generator, tree / kotlin_generator)

    version = next_minor(tree)
    set_version(tree, version, RELEASE_DAY)

    # `claude-sidecar schema` of that version, then the Kotlin generator's own check.
    monkeypatch.setattr(schema, "__version__", version)
    written = (tree / "docs/protocol.schema.json").read_text(encoding="utf-8")
    assert written == schema.render(schema.build())
    checked = subprocess.run(
        [sys.executable, str(tree / kotlin_generator), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_set_version_refuses_a_version_that_already_has_a_section(tree: Path) -> None:
    released = changelog.newest_release((tree / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert released is not None

    with pytest.raises(ValueError, match=f"already has a section for {released}"):
        set_version(tree, released, RELEASE_DAY)


def test_set_version_refuses_a_malformed_version_and_changes_nothing(tree: Path) -> None:
    before = {path: path.read_bytes() for path in tree.rglob("*") if path.is_file()}

    assert main(["set-version", "1.0"], root=tree) == 1

    assert {path: path.read_bytes() for path in tree.rglob("*") if path.is_file()} == before


def test_set_version_refuses_when_nothing_is_unreleased(tree: Path) -> None:
    set_version(tree, next_minor(tree), RELEASE_DAY)

    with pytest.raises(ValueError, match='nothing under "## Unreleased"'):
        set_version(tree, next_minor(tree), RELEASE_DAY)


def test_sums_file_is_checked_by_sha256sum(tmp_path: Path) -> None:
    artifacts = [tmp_path / "a.whl", tmp_path / "b.vsix"]
    artifacts[0].write_bytes(b"wheel")
    artifacts[1].write_bytes(b"extension")

    sums = build.write_sums(tmp_path, artifacts)

    checked = subprocess.run(
        ["sha256sum", "-c", sums.name], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == "a.whl: OK\nb.vsix: OK\n"
    assert hashlib.sha256(b"wheel").hexdigest() in sums.read_text(encoding="utf-8")
