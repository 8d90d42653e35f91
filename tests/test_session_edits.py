"""claude/renameSession and claude/deleteSession edit the CLI's stored sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import isolate
from tests.harness import Sidecar
from tests.test_resume_fork import THREE_EXCHANGES
from tests.unit.test_sessions_sdk import assert_listings_agree

UNKNOWN = "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"


async def listed(sidecar: Sidecar, workspace: Path) -> dict[str, dict[str, Any]]:
    page = await sidecar.request("claude/listSessions", {"cwd": str(workspace)})
    return {s["sessionId"]: s for s in page["sessions"]}


async def test_rename_session_shows_the_title_in_list_sessions(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    session, _ = await sidecar.chat(str(workspace), "one")

    first = await sidecar.request(
        "claude/renameSession",
        {"sessionId": session, "cwd": str(workspace), "title": "  Fix the login bug  "},
    )
    named = (await listed(sidecar, workspace))[session]
    await sidecar.request(
        "claude/renameSession",
        {"sessionId": session, "cwd": str(workspace), "title": "Login bug, take two"},
    )
    renamed = (await listed(sidecar, workspace))[session]

    assert first == {"ok": True}
    assert (named["title"], named["customTitle"], named["firstPrompt"]) == (
        "Fix the login bug",
        "Fix the login bug",
        "one",
    )
    assert (renamed["title"], renamed["customTitle"]) == (
        "Login bug, take two",
        "Login bug, take two",
    )


async def test_rename_of_a_live_channels_session_survives_its_next_turn(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel, session = opened["channelId"], opened["sessionId"]
    await sidecar.turn(channel, "one")

    await sidecar.request(
        "claude/renameSession",
        {"sessionId": session, "cwd": str(workspace), "title": "Named while open"},
    )
    await sidecar.turn(channel, "two")
    after_turn = (await listed(sidecar, workspace))[session]
    await sidecar.request("claude/closeChannel", {"channelId": channel})
    after_close = (await listed(sidecar, workspace))[session]

    assert (after_turn["title"], after_turn["customTitle"]) == (
        "Named while open",
        "Named while open",
    )
    assert after_turn["messageCount"] == 4, "the channel kept writing the same file"
    assert (after_close["title"], after_close["customTitle"]) == (
        "Named while open",
        "Named while open",
    )


async def test_delete_session_removes_it_from_the_listing_and_history(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, home: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    doomed, _ = await sidecar.chat(str(workspace), "one")
    kept, _ = await sidecar.chat(str(workspace), "two")

    result = await sidecar.request(
        "claude/deleteSession", {"sessionId": doomed, "cwd": str(workspace)}
    )
    history = await sidecar.error("claude/getHistory", {"sessionId": doomed, "cwd": str(workspace)})
    again = await sidecar.error(
        "claude/deleteSession", {"sessionId": doomed, "cwd": str(workspace)}
    )

    assert result == {"ok": True}
    assert list(await listed(sidecar, workspace)) == [kept]
    assert list(home.glob(f".claude/projects/*/{doomed}*")) == []
    assert (history.code, again.code) == (-32009, -32009)


@pytest.mark.same_on_every_cli("the daemon answers without a CLI")
async def test_delete_unknown_session_is_session_not_found(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    session, _ = await sidecar.chat(str(workspace), "one")

    unknown = await sidecar.error(
        "claude/deleteSession", {"sessionId": UNKNOWN, "cwd": str(workspace)}
    )
    elsewhere = await sidecar.error(
        "claude/deleteSession", {"sessionId": session, "cwd": str(tmp_path)}
    )
    renamed = await sidecar.error(
        "claude/renameSession", {"sessionId": UNKNOWN, "cwd": str(workspace), "title": "x"}
    )

    assert unknown.code == -32009 and unknown.data == {
        "name": "sessionNotFound",
        "sessionId": UNKNOWN,
        "cwd": str(workspace),
    }
    assert elsewhere.code == -32009, "a session is found only in its own directory"
    assert renamed.code == -32009 and renamed.data["sessionId"] == UNKNOWN
    assert list(await listed(sidecar, workspace)) == [session]


@pytest.mark.same_on_every_cli(
    "the daemon's own state and checks around a request tested on every CLI"
)
async def test_delete_of_a_live_channels_session_is_refused_naming_the_channel(
    sidecar: Sidecar, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    opened = await sidecar.open_channel(cwd=str(workspace))
    channel, session = opened["channelId"], opened["sessionId"]
    await sidecar.turn(channel, "one")

    refused = await sidecar.error(
        "claude/deleteSession", {"sessionId": session, "cwd": str(workspace)}
    )
    still_listed = list(await listed(sidecar, workspace))
    await sidecar.request("claude/closeChannel", {"channelId": channel})
    await sidecar.request("claude/deleteSession", {"sessionId": session, "cwd": str(workspace)})

    assert refused.code == -32011 and refused.data == {
        "name": "sessionInUse",
        "sessionId": session,
        "channelId": channel,
    }
    assert channel in refused.message and "claude/closeChannel" in refused.message
    assert still_listed == [session]
    assert await listed(sidecar, workspace) == {}


async def bad_params(
    sidecar: Sidecar, workspace: Path, method: str, params: dict[str, Any]
) -> tuple[int, dict[str, Any], str]:
    """The error for ``params`` on top of a valid request (None removes a key)."""
    base = {"sessionId": UNKNOWN, "cwd": str(workspace)}
    raw = {k: v for k, v in {**base, **params}.items() if v is not None}
    error = await sidecar.error(method, raw)
    return error.code, error.data, error.message


@pytest.mark.parametrize("title", [" \t\n ", "", None, "bad \udc80 text"])
@pytest.mark.same_on_every_cli("the daemon checks the params before any CLI is asked")
async def test_rename_with_blank_title_names_the_field(
    sidecar: Sidecar, workspace: Path, title: str | None
) -> None:
    code, data, message = await bad_params(
        sidecar, workspace, "claude/renameSession", {"title": title}
    )

    assert (code, data) == (-32602, {"name": "invalidParams", "field": "title"})
    assert message.startswith("invalid params: `title` ")


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("claude/renameSession", {"sessionId": "../../etc/passwd", "title": "x"}, "sessionId"),
        ("claude/renameSession", {"cwd": "src/shop", "title": "x"}, "cwd"),
        ("claude/deleteSession", {"sessionId": "not-a-uuid"}, "sessionId"),
        ("claude/deleteSession", {"cwd": "src/shop"}, "cwd"),
        ("claude/deleteSession", {"title": "x"}, "title"),
    ],
)
@pytest.mark.same_on_every_cli("the daemon checks the params before any CLI is asked")
async def test_bad_session_ids_directories_and_unknown_keys_name_the_field(
    sidecar: Sidecar, workspace: Path, method: str, params: dict[str, Any], field: str
) -> None:
    code, data, message = await bad_params(sidecar, workspace, method, params)

    assert (code, data) == (-32602, {"name": "invalidParams", "field": field})
    assert f"`{field}`" in message


async def test_the_listing_agrees_with_the_sdks_on_sessions_the_daemon_ran(
    sidecar: Sidecar,
    model: ScriptedModel,
    workspace: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Real files of this CLI, one renamed through the daemon; see
    ``assert_listings_agree`` for what is compared. The newer session is the renamed
    one, so the rename (which bumps the file's mtime) keeps the two orders the same."""
    model.set_scenario(load_scenario(THREE_EXCHANGES))
    await sidecar.chat(str(workspace), "one", "two")
    newer, _ = await sidecar.chat(str(workspace), "three")
    await sidecar.request(
        "claude/renameSession",
        {"sessionId": newer, "cwd": str(workspace), "title": "Renamed by the daemon"},
    )
    # The SDK, called here in the test process, finds sessions through HOME.
    isolate(monkeypatch, home)

    assert_listings_agree(home, str(workspace))
    assert (await listed(sidecar, workspace))[newer]["title"] == "Renamed by the daemon"
