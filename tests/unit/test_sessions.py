"""Reading stored sessions: real CLI files (tests/data/sessions), and broken copies of them."""

from __future__ import annotations

import base64
import json
import os
import shutil
import unicodedata
from pathlib import Path

import msgspec
import pytest
from claude_sidecar.cli.paths import project_dir
from claude_sidecar.protocol.api import Entry, History, ToolEntry
from claude_sidecar.protocol.errors import InvalidParams
from claude_sidecar.sessions import (
    BadCursor,
    exchange_end,
    list_sessions,
    read_history,
)
from claude_sidecar.sessions.render import changed_files
from claude_sidecar.sessions.store import SessionStore

DATA = Path(__file__).parent.parent / "data" / "sessions"
WRITE = "c8605bc9-22b5-4cd5-a2d6-cf4fd7a0de7b"  # hello + a Write tool use
COMPACTED = "d1f3ce72-7d3c-4abf-89a9-1ecb98ca36a3"  # interrupt, /compact, /rename, resume
BRANCHED = "08db6f3a-7584-4dc1-8d26-3bada228e9b5"  # --resume-session-at made a branch
PARALLEL = "f0cd8d40-d1f2-45cf-9c9b-dd440c68021f"  # parallel Writes, a background sub-agent
CWD = "/workspace/demo"  # what the fixtures were scrubbed to; need not exist
OTHER_ID = "0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d"


def lines_of(session_id: str) -> list[str]:
    return (DATA / f"{session_id}.jsonl").read_text().splitlines(keepends=True)


def install(home: Path, session_id: str, text: str | None = None, name: str | None = None) -> Path:
    """Put a fixture (or ``text``) where the CLI keeps ``CWD``'s sessions."""
    folder = project_dir(home, CWD)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name or session_id}.jsonl"
    target.write_text(text if text is not None else "".join(lines_of(session_id)))
    extra = DATA / session_id
    if extra.is_dir() and text is None:
        shutil.copytree(extra, folder / session_id, dirs_exist_ok=True)
    return target


def shape(history: History) -> list[tuple[str, str | None, str | None]]:
    return [(m.kind, m.subtype, m.text) for m in history.messages]


def index_of(lines: list[str], uuid: str) -> int:
    return next(i for i, line in enumerate(lines) if f'"uuid":"{uuid}"' in line)


CLEAN_WRITE = [
    ("userPrompt", "f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45", "hello there"),
    ("assistantText", "c39ea52b-02b2-4909-a76d-b7f8fee7f365", "Default answer."),
    ("userPrompt", "5527e1cf-2b95-4017-bde5-7d32b53e8c07", "please write a file"),
    ("thinking", "4b909f89-6e4f-4f64-961e-a4daf75fd556", "Let me write."),
    ("assistantText", "6671e04c-a383-4692-842f-edc1989477dd", "I'll write the file."),
    ("toolUse", "01a133d5-ff7f-47a5-9b73-17b167f6d733", None),
    (
        "toolResult",
        "be409bc6-bf7a-4c30-a3f6-eec20b507c2d",
        "File created successfully at: /workspace/demo/a.txt (file state is current in your "
        "context — no need to Read it back)",
    ),
    ("assistantText", "9d928231-e91e-4375-9051-8b60548a31eb", "Wrote a.txt."),
]


def triples(history: History) -> list[tuple[str, str, str | None]]:
    return [(m.kind, m.uuid, m.text) for m in history.messages]


# ---------------------------------------------------------------- the slug


@pytest.mark.parametrize(
    ("cwd", "slug"),
    [
        # Every one of these was created by CLI 2.1.330 run in that directory.
        ("/tmp/sx/ws/plain", "-tmp-sx-ws-plain"),
        ("/tmp/sx/ws/dots.and_under score", "-tmp-sx-ws-dots-and-under-score"),
        ("/tmp/sx/ws/ünï cödé@#+x", "-tmp-sx-ws--n--c-d----x"),
        ("/tmp/sx/ws/emoji😀x", "-tmp-sx-ws-emoji--x"),  # one dash per UTF-16 unit
        (unicodedata.normalize("NFD", "/tmp/sx/ws/café"), "-tmp-sx-ws-cafe-"),  # not NFC'd
        (
            "/tmp/sx/ws"
            + "".join(f"/long_dir.name-{i}-abcdefghijklmnopqrstuvwxyz" for i in range(1, 7))
            + "/Sub",
            "-tmp-sx-ws-long-dir-name-1-abcdefghijklmnopqrstuvwxyz-long-dir-name-2-abcdefghijklmnopqr"
            "stuvwxyz-long-dir-name-3-abcdefghijklmnopqrstuvwxyz-long-dir-name-4-abcdefghijklmnopqrst"
            "uvwxyz-long-dir-name-5-a-837j1p",
        ),
    ],
)
def test_project_dir_names_the_folder_as_the_cli_does(tmp_path: Path, cwd: str, slug: str) -> None:
    assert project_dir(tmp_path, cwd) == tmp_path / ".claude" / "projects" / slug
    assert project_dir(tmp_path, cwd, config_dir=tmp_path / "cfg") == (
        tmp_path / "cfg" / "projects" / slug
    )


def test_project_dir_resolves_symlinks_and_refuses_relative_paths(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)

    assert project_dir(tmp_path, str(tmp_path / "link")) == project_dir(tmp_path, str(real))
    with pytest.raises(ValueError, match="absolute"):
        project_dir(tmp_path, "relative/dir")


def test_a_long_path_folder_with_another_hash_is_still_found(tmp_path: Path) -> None:
    cwd = "/w" + "/abcdefghij" * 25
    folder = project_dir(tmp_path, cwd)
    other = folder.with_name(folder.name.rsplit("-", 1)[0] + "-otherhash")
    other.mkdir(parents=True)
    shutil.copy(DATA / f"{WRITE}.jsonl", other / f"{WRITE}.jsonl")

    assert [s.session_id for s in list_sessions(tmp_path, cwd).sessions] == [WRITE]
    assert read_history(tmp_path, cwd, WRITE).messages


# ---------------------------------------------------------------- real files


def test_the_history_of_a_real_session(tmp_path: Path) -> None:
    install(tmp_path, WRITE)

    history = read_history(tmp_path, CWD, WRITE)

    assert history.warnings == [] and history.session_id == WRITE
    assert triples(history) == CLEAN_WRITE
    use, result = history.messages[5], history.messages[6]
    assert (use.tool_name, use.tool_use_id) == ("Write", "toolu_scripted_1")
    assert use.input == {"file_path": "/workspace/demo/a.txt", "content": "hi\n"}
    assert (result.tool_use_id, result.is_error) == ("toolu_scripted_1", False)
    assert history.messages[0].timestamp == "2026-11-21T16:42:36.311Z"


def test_results_encode_in_camel_case_without_unset_fields(tmp_path: Path) -> None:
    install(tmp_path, WRITE)

    encoded = json.loads(msgspec.json.encode(read_history(tmp_path, CWD, WRITE)))
    page = json.loads(msgspec.json.encode(list_sessions(tmp_path, CWD)))

    assert encoded["sessionId"] == WRITE and encoded["warnings"] == []
    assert encoded["messages"][0] == {
        "kind": "userPrompt",
        "uuid": "f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45",
        "timestamp": "2026-11-21T16:42:36.311Z",
        "text": "hello there",
    }
    assert set(encoded["messages"][5]) == {
        "kind",
        "uuid",
        "timestamp",
        "toolName",
        "toolUseId",
        "input",
    }
    assert page == {
        "sessions": [
            {
                "sessionId": WRITE,
                "title": "hello there",
                "firstPrompt": "hello there",
                "updatedAt": "2026-11-21T16:42:37.012Z",
                "createdAt": "2026-11-21T16:42:36.165Z",
                "messageCount": 5,
                "cwd": "/workspace/demo",
                "gitBranch": "HEAD",
            }
        ],
        "nextCursor": None,
    }


def test_a_compacted_session_starts_at_its_compaction_with_the_preserved_turn(
    tmp_path: Path,
) -> None:
    install(tmp_path, COMPACTED)

    history = read_history(tmp_path, CWD, COMPACTED)

    assert history.warnings == []
    got = shape(history)
    assert got[0] == ("system", "compactBoundary", "Conversation compacted")
    assert got[1][:2] == ("system", "compactSummary")
    assert got[2:] == [
        ("assistantText", None, "a long slow an"),  # kept by the compaction
        ("system", "interrupted", "[Request interrupted by user]"),
        ("userPrompt", None, "/compact"),
        ("system", "commandOutput", "Compacted"),
        ("userPrompt", None, "after compact"),
        ("assistantText", None, "Answer to: after compact"),
        ("userPrompt", None, "/usage"),  # typed as /cost
        ("system", "commandOutput", got[9][2]),
        ("userPrompt", None, "/rename My Custom Title"),
        ("system", "commandOutput", "Session renamed to: My Custom Title"),
        ("userPrompt", None, "resumed three"),  # after --resume, another process
        ("assistantText", None, "Answer to: resumed three"),
    ]
    assert (got[9][2] or "").startswith("Estimated cost:")
    assert history.messages[4].uuid == "8f15e09f-8d68-44cb-b59a-59e463d0f688"  # sendMessage's


def test_only_the_live_branch_is_shown_after_resume_session_at(tmp_path: Path) -> None:
    install(tmp_path, BRANCHED)

    history = read_history(tmp_path, CWD, BRANCHED)

    assert [m.text for m in history.messages] == [
        "hello one",
        "Answer to: hello one",
        "resumed at a1",
        "Answer to: resumed at a1",
        "plain resume",
        "Answer to: plain resume",
    ]
    assert "two" in (DATA / f"{BRANCHED}.jsonl").read_text()  # the abandoned branch


def test_parallel_tool_calls_and_a_sub_agent(tmp_path: Path) -> None:
    install(tmp_path, PARALLEL)

    history = read_history(tmp_path, CWD, PARALLEL)

    assert history.warnings == []
    rows = [(m.kind, m.tool_use_id, m.parent_tool_use_id) for m in history.messages]
    assert rows == [
        ("userPrompt", None, None),
        ("assistantText", None, None),
        ("userPrompt", None, None),
        ("assistantText", None, None),
        ("toolUse", "toolu_scripted_1", None),
        ("toolUse", "toolu_scripted_2", None),
        # The second result is on the chain; the first one hangs off the first call.
        ("toolResult", "toolu_scripted_1", None),
        ("toolResult", "toolu_scripted_2", None),
        ("assistantText", None, None),
        ("userPrompt", None, None),
        ("toolUse", "toolu_scripted_3", None),
        ("toolResult", "toolu_scripted_3", None),
        ("userPrompt", None, "toolu_scripted_3"),
        ("assistantText", None, "toolu_scripted_3"),
        ("toolUse", "toolu_scripted_4", "toolu_scripted_3"),
        ("toolResult", "toolu_scripted_4", "toolu_scripted_3"),
        ("assistantText", None, "toolu_scripted_3"),
        ("assistantText", None, None),
        ("system", None, None),
        ("assistantText", None, None),
    ]
    assert history.messages[10].tool_name == "Agent"
    assert history.messages[12].text == "SUBAGENT: list things"
    assert (history.messages[18].subtype, history.messages[18].text) == (
        "taskNotification",
        'Agent "sub job" finished\n\nSub result: hi',
    )


def kind(entry: Entry) -> object:
    """An entry's ``kind`` (its msgspec tag)."""
    return entry.__struct_config__.tag


def test_a_stored_session_gives_entries_with_the_ids_a_live_chat_gives(tmp_path: Path) -> None:
    install(tmp_path, WRITE)

    entries = read_history(tmp_path, CWD, WRITE).entries

    assert [(kind(e), e.id) for e in entries] == [
        ("prompt", "f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45"),
        ("text", "msg_scripted_1:0"),
        ("prompt", "5527e1cf-2b95-4017-bde5-7d32b53e8c07"),
        # One response: thinking, text and a tool use are its blocks 0, 1 and 2.
        ("thinking", "msg_scripted_2:0"),
        ("text", "msg_scripted_2:1"),
        ("tool", "toolu_scripted_1"),
        ("text", "msg_scripted_3:0"),
    ]
    tool = entries[5]
    assert isinstance(tool, ToolEntry) and tool.status == "done" and tool.result is not None
    assert tool.result.text.startswith("File created successfully")


def test_a_stored_write_lists_the_file_it_made_with_its_lines(tmp_path: Path) -> None:
    install(tmp_path, WRITE)

    tool = read_history(tmp_path, CWD, WRITE).entries[5]

    assert isinstance(tool, ToolEntry)
    assert [(f.path, f.added, f.removed) for f in tool.files] == [("/workspace/demo/a.txt", 1, 0)]


def test_changed_files_count_an_edits_patch_lines() -> None:
    result = {
        "filePath": "/w/app.py",
        "structuredPatch": [{"lines": [" keep", "-old", "--dashes", "+new", "+more"]}],
    }

    [change] = changed_files(result) or []

    assert (change.path, change.added, change.removed) == ("/w/app.py", 2, 2)
    assert changed_files({"stdout": "hi"}) is None


def test_a_sub_agents_entries_follow_its_tool_use_in_a_stored_session(tmp_path: Path) -> None:
    install(tmp_path, PARALLEL)

    entries = read_history(tmp_path, CWD, PARALLEL).entries

    rows = [(kind(e), e.parent_id) for e in entries]
    agent = next(i for i, e in enumerate(entries) if e.id == "toolu_scripted_3")
    assert rows[agent + 1 : agent + 5] == [
        ("prompt", "toolu_scripted_3"),
        ("text", "toolu_scripted_3"),
        ("tool", "toolu_scripted_3"),
        ("text", "toolu_scripted_3"),
    ]
    assert rows[agent + 5] == ("text", None)


def test_a_fork_at_a_prompt_that_started_a_sub_agent_keeps_the_answer_after_it(
    tmp_path: Path,
) -> None:
    install(tmp_path, PARALLEL)
    history = read_history(tmp_path, CWD, PARALLEL)
    delegate = history.messages[9]
    assert delegate.kind == "userPrompt" and delegate.parent_tool_use_id is None

    end = exchange_end(history, delegate.uuid)

    # Past the sub-agent's own prompt (12) and its answers: the last top-level answer.
    assert end == history.messages[19].uuid
    assert history.messages[19].kind == "assistantText"


def test_listing_real_sessions_newest_first_with_titles_and_counts(tmp_path: Path) -> None:
    for session_id in (WRITE, COMPACTED, BRANCHED, PARALLEL):
        install(tmp_path, session_id)

    page = list_sessions(tmp_path, CWD)

    assert page.next_cursor is None
    assert [(s.session_id, s.title, s.first_prompt, s.message_count) for s in page.sessions] == [
        (BRANCHED, "hello one", "hello one", 6),
        (COMPACTED, "My Custom Title", "hello one", 8),
        (PARALLEL, "hello", "hello", 9),  # 3 prompts + 6 responses, not the sub-agent's
        (WRITE, "hello there", "hello there", 5),
    ]
    assert [s.updated_at for s in page.sessions] == sorted(
        (s.updated_at for s in page.sessions), reverse=True
    )


def test_pages_follow_the_cursor_to_the_end(tmp_path: Path) -> None:
    for session_id in (WRITE, COMPACTED, BRANCHED, PARALLEL):
        install(tmp_path, session_id)

    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = list_sessions(tmp_path, CWD, limit=3 if not seen else 1, cursor=cursor)
        seen += [s.session_id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            break

    assert seen == [BRANCHED, COMPACTED, PARALLEL, WRITE]


def test_a_session_created_between_pages_does_not_shift_the_next_page(tmp_path: Path) -> None:
    install(tmp_path, WRITE)
    install(tmp_path, PARALLEL)
    first = list_sessions(tmp_path, CWD, limit=1)

    install(tmp_path, BRANCHED)  # newer than both
    second = list_sessions(tmp_path, CWD, limit=1, cursor=first.next_cursor)

    assert [s.session_id for s in first.sessions] == [PARALLEL]
    assert [s.session_id for s in second.sessions] == [WRITE]
    assert second.next_cursor is None


def test_a_custom_title_wins_and_long_prompts_are_cut(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    long_prompt = "word " * 60
    lines[2] = lines[2].replace('"text":"hello there"', f'"text":"{long_prompt}"')
    install(tmp_path, WRITE, "".join(lines))

    (summary,) = list_sessions(tmp_path, CWD).sessions
    assert len(summary.title) == 80 and summary.title.endswith("…")
    assert len(summary.first_prompt) <= 200 and summary.first_prompt.endswith("word…")

    titled = (
        "".join(lines)
        + json.dumps({"type": "ai-title", "aiTitle": "AI title", "sessionId": WRITE})
        + "\n"
        + json.dumps({"type": "custom-title", "customTitle": "Mine", "sessionId": WRITE})
        + "\n"
    )
    install(tmp_path, WRITE, titled)
    assert list_sessions(tmp_path, CWD).sessions[0].title == "Mine"


def test_files_that_are_not_sessions_are_not_listed(tmp_path: Path) -> None:
    install(tmp_path, WRITE)
    folder = project_dir(tmp_path, CWD)
    shutil.copy(DATA / f"{WRITE}.jsonl", folder / "agent-a1b2c3.jsonl")  # older sidechains
    (folder / "notes.txt").write_text("not a session\n")
    (folder / "memory").mkdir()
    metadata_only = [line for line in lines_of(WRITE) if '"type":"user"' not in line]
    install(tmp_path, OTHER_ID, "".join(metadata_only))
    sidechain = "".join(lines_of(WRITE)).replace('"isSidechain":false', '"isSidechain":true')
    install(tmp_path, "1b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", sidechain)
    install(tmp_path, "2b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d", "")

    assert [s.session_id for s in list_sessions(tmp_path, CWD).sessions] == [WRITE]


def test_no_folder_means_no_sessions(tmp_path: Path) -> None:
    assert list_sessions(tmp_path, "/never/used") == list_sessions(tmp_path, "/never/used", limit=1)
    assert list_sessions(tmp_path, "/never/used").sessions == []


def test_the_listing_sees_a_file_change(tmp_path: Path) -> None:
    path = install(tmp_path, WRITE)
    assert list_sessions(tmp_path, CWD).sessions[0].message_count == 5

    path.write_text("".join(lines_of(WRITE)[:20]))  # up to the second prompt
    os.utime(path, ns=(1, 1))

    assert list_sessions(tmp_path, CWD).sessions[0].message_count == 3


# ---------------------------------------------------------------- broken files


def test_a_truncated_last_line_loses_only_that_entry(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    last = index_of(lines, "9d928231-e91e-4375-9051-8b60548a31eb")
    text = "".join(lines[:last]) + lines[last][: len(lines[last]) // 2]
    install(tmp_path, WRITE, text)

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE[:-1]
    assert history.warnings == [
        f"line {last + 1}: truncated entry at the end of the file "
        "(the CLI may still be writing it); skipped"
    ]
    assert list_sessions(tmp_path, CWD).sessions[0].message_count == 4


def test_garbage_and_odd_lines_are_skipped_with_a_warning_each(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    lines[5:5] = [
        "this is not JSON {\n",
        "[1, 2, 3]\n",
        '{"type":"user","uuid":5}\n',
        '{"no":"type"}\n',
        "\n",
        '{"type":"assistant","message":{}}\n',
        "\xff\xfe garbage \x00\n",
    ]
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE
    assert [w.split(":")[0] for w in history.warnings] == [
        "line 6",
        "line 7",
        "line 8",
        "line 9",
        "line 11",
        "line 12",
    ]
    assert "not valid JSON" in history.warnings[0]
    assert "not a session entry" in history.warnings[1]
    assert "not a session entry" in history.warnings[2]
    assert "without a type" in history.warnings[3]
    assert "without a uuid" in history.warnings[4]


def test_an_unknown_entry_type_in_the_chain_is_passed_through(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    answer = index_of(lines, "c39ea52b-02b2-4909-a76d-b7f8fee7f365")
    odd = "aaaaaaaa-0000-4000-8000-000000000000"
    lines[answer] = lines[answer].replace(
        '"parentUuid":"2c77037a-28af-468d-a9a9-9c790599075f"', f'"parentUuid":"{odd}"'
    )
    lines.insert(
        answer,
        json.dumps(
            {"type": "hologram", "uuid": odd, "parentUuid": "2c77037a-28af-468d-a9a9-9c790599075f"}
        )
        + "\n",
    )
    lines.insert(0, json.dumps({"type": "brand-new-metadata", "value": 1}) + "\n")
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE
    assert history.warnings == [f"line {answer + 2}: entry of unknown type 'hologram'; not shown"]


def test_unknown_content_blocks_are_skipped_with_a_warning(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    answer = index_of(lines, "c39ea52b-02b2-4909-a76d-b7f8fee7f365")
    lines[answer] = lines[answer].replace(
        '"content":[{"type":"text"', '"content":[{"type":"sparkle"},{"type":"text"'
    )
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE
    assert history.warnings == [
        f"line {answer + 1}: content block 0 of unknown type 'sparkle'; not shown"
    ]


def test_a_missing_parent_is_bridged_to_the_entry_before_it(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    gone = index_of(lines, "2c77037a-28af-468d-a9a9-9c790599075f")  # the answer's parent
    del lines[gone]
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE
    assert history.warnings == [
        f"line {gone + 1}: parent 2c77037a-28af-468d-a9a9-9c790599075f is not in the file; "
        f"joined to the entry on line {gone}"
    ]


def test_a_parent_loop_stops_the_walk(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    first = index_of(lines, "f73b1b78-ddae-4611-9d5e-3f2ffe1f7e45")
    lines[first] = lines[first].replace(
        '"parentUuid":null', '"parentUuid":"5527e1cf-2b95-4017-bde5-7d32b53e8c07"'
    )
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE
    assert len(history.warnings) == 1 and "loops back" in history.warnings[0]


def test_an_empty_session_file_has_no_messages(tmp_path: Path) -> None:
    install(tmp_path, WRITE, "")

    assert read_history(tmp_path, CWD, WRITE) == History(WRITE, [], [], [])


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    "session_id",
    [
        "not-a-uuid",
        "../x",
        "../../../etc/passwd",
        f"{WRITE}/../{WRITE}",
        f"{WRITE}.jsonl",
        f" {WRITE}",
        "",
        f"{WRITE}\n",
    ],
)
def test_a_session_id_that_is_not_a_uuid_is_refused(tmp_path: Path, session_id: str) -> None:
    install(tmp_path, WRITE)

    with pytest.raises(ValueError, match="not a UUID"):
        read_history(tmp_path, CWD, session_id)


def test_a_missing_session_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_history(tmp_path, CWD, WRITE)  # no folder at all
    install(tmp_path, WRITE)
    with pytest.raises(FileNotFoundError, match=OTHER_ID):
        read_history(tmp_path, CWD, OTHER_ID)


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "garbage!",
        "bm90IGEgY3Vyc29y",  # "not a cursor"
        base64.urlsafe_b64encode(b"2026-01-01T00:00:00.000Z|../etc").decode(),
        base64.urlsafe_b64encode(b"yesterday|" + OTHER_ID.encode()).decode(),
        "x" * 500,
    ],
)
def test_a_bad_cursor_is_refused(tmp_path: Path, cursor: str) -> None:
    install(tmp_path, WRITE)

    with pytest.raises(ValueError, match="invalid cursor"):
        list_sessions(tmp_path, CWD, cursor=cursor)


def test_only_a_bad_cursor_is_a_bad_cursor(tmp_path: Path) -> None:
    with pytest.raises(BadCursor, match="invalid cursor"):
        list_sessions(tmp_path, CWD, cursor="garbage!")
    with pytest.raises(ValueError) as raised:
        list_sessions(tmp_path, CWD, limit=0)
    assert not isinstance(raised.value, BadCursor)


async def test_the_store_names_the_cursor_only_for_a_bad_cursor(tmp_path: Path) -> None:
    store = SessionStore({"HOME": str(tmp_path)})

    with pytest.raises(InvalidParams) as bad_cursor:
        await store.list(CWD, 50, "garbage!")
    assert bad_cursor.value.data["field"] == "cursor"
    # Another ValueError (the server's params checks keep it from happening) is not
    # reported as a bad cursor.
    with pytest.raises(ValueError) as other:
        await store.list(CWD, 0, None)
    assert not isinstance(other.value, InvalidParams)


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(tmp_path: Path, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        list_sessions(tmp_path, CWD, limit=limit)


def test_metadata_of_an_unknown_shape_is_ignored_quietly(tmp_path: Path) -> None:
    lines = lines_of(WRITE)
    lines.insert(
        3, json.dumps({"type": "error-log", "message": "a string, not a message", "uuid": 7}) + "\n"
    )
    install(tmp_path, WRITE, "".join(lines))

    history = read_history(tmp_path, CWD, WRITE)

    assert triples(history) == CLEAN_WRITE and history.warnings == []


def test_the_output_of_a_final_slash_command_is_kept(tmp_path: Path) -> None:
    lines = lines_of(COMPACTED)
    output = index_of(lines, "dccaee02-aa5c-4a78-a50c-7c1bb37aa9c4")  # after /rename
    install(tmp_path, COMPACTED, "".join(lines[: output + 1]))

    history = read_history(tmp_path, CWD, COMPACTED)

    assert shape(history)[-2:] == [
        ("userPrompt", None, "/rename My Custom Title"),
        ("system", "commandOutput", "Session renamed to: My Custom Title"),
    ]
