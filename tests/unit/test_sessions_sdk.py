"""Our session listing agrees with the official SDK's, and renaming/deleting goes through it.

``claude_sidecar.sessions.list_sessions`` reads whole files; ``claude_agent_sdk.list_sessions``
reads the head and tail of each. Where both have the concept, they must say the same thing
about the same files (see :func:`assert_listings_agree` for what is compared and why).
"""

from __future__ import annotations

import json
import os
import unicodedata
from datetime import datetime
from pathlib import Path

import claude_agent_sdk
import pytest
from claude_sidecar import sessions
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.sessions import list_sessions, read_history

from tests.env import isolate
from tests.unit.test_sessions import (
    BRANCHED,
    COMPACTED,
    CWD,
    DATA,
    OTHER_ID,
    PARALLEL,
    WRITE,
    install,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME for both listings: the SDK reads it from this process's environment."""
    isolate(monkeypatch, tmp_path)
    return tmp_path


def last_entry_time(path: Path) -> float:
    stamps = [json.loads(line).get("timestamp") for line in path.read_text().splitlines()]
    return max(datetime.fromisoformat(s).timestamp() for s in stamps if isinstance(s, str))


def assert_listings_agree(home: Path, cwd: str) -> None:
    """Compare our listing of ``cwd`` with the SDK's, field by field where concepts match.

    Compared:

    * the session ids and their order. Both sort newest first, we by the newest entry
      timestamp, the SDK by the file's mtime: the same order for files whose mtime is the
      time of their last entry, as the CLI leaves them. (A rename appends an entry
      without a timestamp: it moves a session up in the SDK's list, not in ours, which
      follows the conversation. Callers keep to files where the two coincide.)
    * ``customTitle``: the SDK's ``custom_title`` is the custom title, else the AI title;
      ours is the custom title only. So ours must equal the SDK's whenever the file has a
      ``custom-title`` entry.
    * ``title``: when the SDK has a ``custom_title`` (custom or AI title), it is its
      ``summary`` and our ``title`` must be the same (same precedence: custom, then AI).
      Untitled sessions are not compared: the SDK's ``summary`` then falls back to the
      *last* prompt (``last-prompt`` entry), our ``title`` to the first.
    * ``firstPrompt``, ``cwd`` and ``gitBranch``: the same concepts on both sides.
    * ``createdAt``: the SDK takes the first timestamp in the file, we the oldest; equal
      for CLI files (the first line is a timestamped ``queue-operation``).

    Not compared: ``messageCount`` and ``updatedAt`` (the SDK has neither), the SDK's
    ``file_size`` and ``tag`` (we have neither).
    """
    ours = list_sessions(home, cwd, limit=500).sessions
    theirs = claude_agent_sdk.list_sessions(directory=cwd, include_worktrees=False)

    assert [s.session_id for s in ours] == [s.session_id for s in theirs]
    for mine, sdk in zip(ours, theirs, strict=True):
        text = (project_dir(home, cwd) / f"{mine.session_id}.jsonl").read_text()
        if '"type":"custom-title"' in text:
            assert mine.custom_title == sdk.custom_title, mine.session_id
        else:
            assert mine.custom_title is None
        if sdk.custom_title is not None:
            assert mine.title == sdk.custom_title == sdk.summary, mine.session_id
        assert mine.first_prompt == sdk.first_prompt, mine.session_id
        assert mine.cwd == sdk.cwd and mine.git_branch == sdk.git_branch, mine.session_id
        assert sdk.created_at is not None
        created = datetime.fromisoformat(mine.created_at).timestamp() * 1000
        assert round(created) == sdk.created_at, mine.session_id


def test_the_listing_agrees_with_the_sdks_on_real_cli_sessions(home: Path) -> None:
    for session_id in (WRITE, COMPACTED, BRANCHED, PARALLEL):
        path = install(home, session_id)
        os.utime(path, (last_entry_time(path),) * 2)  # as the CLI left them

    assert_listings_agree(home, CWD)
    titles = {s.session_id: (s.title, s.custom_title) for s in list_sessions(home, CWD).sessions}
    assert titles[COMPACTED] == ("My Custom Title", "My Custom Title")  # the CLI's /rename
    assert titles[WRITE] == ("hello there", None)


def test_a_rename_by_the_sdk_is_the_title_in_both_listings(home: Path) -> None:
    for session_id in (WRITE, COMPACTED):
        install(home, session_id)

    sessions.rename_session(home, CWD, WRITE, "  first name  ")
    sessions.rename_session(home, CWD, WRITE, "Second name")
    sessions.rename_session(home, CWD, COMPACTED, "Over the CLI's /rename")
    for session_id in (WRITE, COMPACTED):
        path = project_dir(home, CWD) / f"{session_id}.jsonl"
        os.utime(path, (last_entry_time(path),) * 2)

    assert_listings_agree(home, CWD)
    titles = {s.session_id: (s.title, s.custom_title) for s in list_sessions(home, CWD).sessions}
    assert titles == {
        WRITE: ("Second name", "Second name"),
        COMPACTED: ("Over the CLI's /rename", "Over the CLI's /rename"),
    }
    last = (project_dir(home, CWD) / f"{WRITE}.jsonl").read_text().splitlines()[-1]
    assert json.loads(last) == {
        "type": "custom-title",
        "customTitle": "Second name",
        "sessionId": WRITE,
    }


def test_an_ai_title_is_the_title_but_not_the_custom_title(home: Path) -> None:
    path = install(home, WRITE)
    with path.open("a") as f:
        f.write(
            json.dumps({"type": "ai-title", "aiTitle": "Writing a file", "sessionId": WRITE}) + "\n"
        )
    os.utime(path, (last_entry_time(path),) * 2)

    assert_listings_agree(home, CWD)
    (summary,) = list_sessions(home, CWD).sessions
    assert (summary.title, summary.custom_title) == ("Writing a file", None)


def test_delete_removes_the_file_and_the_sub_agent_folder(home: Path) -> None:
    install(home, PARALLEL)
    install(home, WRITE)
    folder = project_dir(home, CWD)
    assert (folder / PARALLEL / "subagents").is_dir()

    sessions.delete_session(home, CWD, PARALLEL)

    assert not (folder / f"{PARALLEL}.jsonl").exists() and not (folder / PARALLEL).exists()
    assert [s.session_id for s in list_sessions(home, CWD).sessions] == [WRITE]
    with pytest.raises(FileNotFoundError):
        read_history(home, CWD, PARALLEL)


def test_edits_of_unknown_sessions_and_bad_input_change_nothing(home: Path) -> None:
    path = install(home, WRITE)
    before = path.read_bytes()

    with pytest.raises(FileNotFoundError):
        sessions.rename_session(home, CWD, OTHER_ID, "title")
    with pytest.raises(FileNotFoundError):
        sessions.delete_session(home, CWD, OTHER_ID)
    with pytest.raises(FileNotFoundError):  # another directory's session
        sessions.delete_session(home, "/workspace/other", WRITE)
    with pytest.raises(ValueError, match="title"):
        sessions.rename_session(home, CWD, WRITE, " \n\t")
    with pytest.raises(ValueError, match="UUID"):
        sessions.delete_session(home, CWD, "../" + WRITE)
    with pytest.raises(ValueError, match="absolute"):
        sessions.rename_session(home, "workspace/demo", WRITE, "title")

    assert path.read_bytes() == before


def test_an_sdk_that_would_edit_another_config_dir_is_refused(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = install(home, WRITE)
    before = path.read_bytes()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))

    with pytest.raises(sessions.ConfigDirMismatch, match="elsewhere"):
        sessions.rename_session(home, CWD, WRITE, "title")
    with pytest.raises(sessions.ConfigDirMismatch):
        sessions.delete_session(home, CWD, WRITE)

    assert path.read_bytes() == before


def test_a_config_dir_the_sdk_also_sees_is_used(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    folder = project_dir(home, CWD, config_dir=config)
    folder.mkdir(parents=True)
    (folder / f"{WRITE}.jsonl").write_bytes((DATA / f"{WRITE}.jsonl").read_bytes())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))

    sessions.rename_session(home, CWD, WRITE, "configured", config_dir=config)

    (summary,) = list_sessions(home, CWD, config_dir=config).sessions
    assert summary.custom_title == "configured"


@pytest.mark.parametrize(
    "cwd", ["/workspace/emoji😀x", unicodedata.normalize("NFD", "/workspace/café")]
)
def test_sessions_of_a_directory_the_sdk_names_differently_are_still_edited(
    home: Path, cwd: str
) -> None:
    """SDK 0.2.187 looks for these directories' sessions in another folder than the
    one the CLI writes (NFC, code points instead of UTF-16 units): the edit still
    reaches the file the listing shows."""
    folder = project_dir(home, cwd)
    folder.mkdir(parents=True)
    for session_id in (WRITE, PARALLEL):
        (folder / f"{session_id}.jsonl").write_bytes((DATA / f"{session_id}.jsonl").read_bytes())

    sessions.rename_session(home, cwd, WRITE, "odd directory")
    sessions.delete_session(home, cwd, PARALLEL)

    assert [(s.session_id, s.custom_title) for s in list_sessions(home, cwd).sessions] == [
        (WRITE, "odd directory")
    ]


def test_no_search_beyond_the_directory_when_another_folder_has_the_same_id(home: Path) -> None:
    cwd = "/workspace/emoji😀x"
    folder = project_dir(home, cwd)
    folder.mkdir(parents=True)
    (folder / f"{WRITE}.jsonl").write_bytes((DATA / f"{WRITE}.jsonl").read_bytes())
    copy = install(home, WRITE)  # the same id in CWD's folder
    before = copy.read_bytes()

    with pytest.raises(FileNotFoundError):
        sessions.delete_session(home, cwd, WRITE)

    assert (folder / f"{WRITE}.jsonl").exists() and copy.read_bytes() == before
