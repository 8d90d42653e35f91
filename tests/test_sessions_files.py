"""Session files the real CLI writes through the daemon, read back by claude_sidecar.sessions."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.cli.paths import project_dir
from claude_sidecar.scripted import ScriptedModel, load_scenario
from claude_sidecar.sessions import list_sessions, read_history

from tests.harness import Sidecar

SCENARIO = {
    "rules": [
        {
            "match": "(?i)write",
            "steps": [
                [
                    {"text": "I'll write the note."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/note.txt", "content": "a note\n"},
                        }
                    },
                ],
                [{"text": "Done."}],
            ],
        },
    ],
    "default": [[{"text": "Answer to: {prompt}"}]],
}


async def test_two_sessions_are_listed_newest_first(
    sidecar: Sidecar, model: ScriptedModel, home: Path, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    first, _ = await sidecar.chat(str(workspace), "hello from the first session")
    second, _ = await sidecar.chat(str(workspace), "the second session asks", "and asks again")

    page = list_sessions(home, str(workspace))

    assert (project_dir(home, str(workspace)) / f"{first}.jsonl").is_file()
    assert [s.session_id for s in page.sessions] == [second, first]
    newer, older = page.sessions
    assert (newer.title, newer.first_prompt, newer.message_count) == (
        "the second session asks",
        "the second session asks",
        4,
    )
    assert (older.title, older.first_prompt, older.message_count) == (
        "hello from the first session",
        "hello from the first session",
        2,
    )
    assert newer.cwd == older.cwd == str(workspace.resolve())
    assert newer.updated_at > older.updated_at >= older.created_at
    assert page.next_cursor is None


async def test_history_has_the_prompts_text_and_tool_use_of_the_conversation(
    sidecar: Sidecar, model: ScriptedModel, home: Path, workspace: Path
) -> None:
    model.set_scenario(load_scenario(SCENARIO))
    session, (hello, write) = await sidecar.chat(
        str(workspace), "hello there", "write a note please", permissionMode="acceptEdits"
    )

    history = read_history(home, str(workspace), session)

    assert history.warnings == []
    assert [(m.kind, m.text) for m in history.messages] == [
        ("userPrompt", "hello there"),
        ("assistantText", "Answer to: hello there"),
        ("userPrompt", "write a note please"),
        ("assistantText", "I'll write the note."),
        ("toolUse", None),
        ("toolResult", history.messages[5].text),
        ("assistantText", "Done."),
    ]
    assert [m.uuid for m in history.messages if m.kind == "userPrompt"] == [hello, write]
    use, result = history.messages[4], history.messages[5]
    assert use.tool_name == "Write"
    assert use.input == {"file_path": f"{workspace.resolve()}/note.txt", "content": "a note\n"}
    assert result.tool_use_id == use.tool_use_id and result.tool_use_id
    assert not result.is_error and "note.txt" in (result.text or "")
    assert (workspace / "note.txt").read_text() == "a note\n"
    assert all(m.timestamp for m in history.messages)
    (summary,) = list_sessions(home, str(workspace)).sessions
    assert summary.message_count == 5  # 2 prompts + 3 responses (text+Write is one)


async def test_pages_of_one_follow_the_cursor(
    sidecar: Sidecar, model: ScriptedModel, home: Path, workspace: Path
) -> None:
    first, _ = await sidecar.chat(str(workspace), "first")
    second, _ = await sidecar.chat(str(workspace), "second")
    third, _ = await sidecar.chat(str(workspace), "third")

    page1 = list_sessions(home, str(workspace), limit=1)
    page2 = list_sessions(home, str(workspace), limit=1, cursor=page1.next_cursor)
    page3 = list_sessions(home, str(workspace), limit=1, cursor=page2.next_cursor)

    assert [s.session_id for p in (page1, page2, page3) for s in p.sessions] == [
        third,
        second,
        first,
    ]
    assert page1.next_cursor and page2.next_cursor and page3.next_cursor is None
    assert [s.title for s in list_sessions(home, str(workspace), limit=2).sessions] == [
        "third",
        "second",
    ]
