"""Which release came last (release/history.py), in clones with and without tags."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from release import history, schema_diff

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "tag.gpgSign=false"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def commit(repo: Path, text: str) -> str:
    (repo / schema_diff.SCHEMA_PATH).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", text)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tag_head` runs git as the releaser would, with their name."""
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "t")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "t@example.com")


@pytest.fixture
def released(tmp_path: Path) -> Path:
    """A repository whose 1.0.0 was tagged and recorded by `tag_head`, with a commit after."""
    repo = tmp_path / "origin"
    (repo / "docs").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit(repo, '{"x-protocolVersion": 1}')
    history.tag_head(repo, "1.0.0")
    commit(repo, '{"x-protocolVersion": 1, "later": true}')
    return repo


def test_tag_head_tags_the_commit_and_records_it_in_a_commit_of_its_own(released: Path) -> None:
    tagged = git(released, "rev-parse", "v1.0.0^{commit}")
    record = (released / history.RECORD).read_text()

    assert record.endswith(f"v1.0.0\t{tagged}\n")
    assert git(released, "log", "--format=%s", "-1", "HEAD~1") == (
        "Record the release v1.0.0 (for clones without tags)"
    )
    assert history.last_release(released) == history.Release("v1.0.0", tagged)


def test_a_clone_without_tags_finds_the_last_release_by_its_recorded_commit(
    released: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-tags", str(released), str(clone))
    assert git(clone, "tag") == ""

    last = history.last_release(clone)

    assert last == history.Release("v1.0.0", git(released, "rev-parse", "v1.0.0^{commit}"))
    assert schema_diff.released_schema(clone, last.commit) == {"x-protocolVersion": 1}


def test_a_shallow_clone_without_the_release_commit_is_told_to_fetch_the_history(
    released: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-tags", "--depth=1", f"file://{released}", str(clone))

    with pytest.raises(ValueError, match=r"not in this clone .*git fetch --unshallow origin"):
        history.last_release(clone)


def test_a_tag_newer_than_the_record_is_the_last_release(released: Path) -> None:
    git(released, "tag", "-a", "v1.10.0", "-m", "not recorded yet")

    assert history.last_release(released) == history.Release(
        "v1.10.0", git(released, "rev-parse", "HEAD")
    )


def test_a_tag_that_disagrees_with_the_record_is_refused(released: Path) -> None:
    git(released, "tag", "-f", "-a", "v1.0.0", "-m", "moved")

    with pytest.raises(ValueError, match=r"tag v1.0.0 is commit .* records"):
        history.last_release(released)


def test_tagging_a_released_version_again_is_refused_and_changes_nothing(released: Path) -> None:
    before = git(released, "rev-parse", "HEAD")

    with pytest.raises(ValueError, match=r"v1\.0\.0 exists already"):
        history.tag_head(released, "1.0.0")

    assert git(released, "rev-parse", "HEAD") == before


def test_a_malformed_record_line_is_named(released: Path) -> None:
    (released / history.RECORD).write_text("v1.0.0 abc\n")

    with pytest.raises(ValueError, match=r"releases.tsv:1: expected"):
        history.recorded(released)


def test_no_release_before_the_first_tag(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    git(tmp_path, "init", "-q")
    commit(tmp_path, "{}")

    assert history.last_release(tmp_path) is None
