"""Long sessions grown from a real one (tests/long_session.py): one chain, fresh ids, and
the CLI and the daemon read them as sessions of that length."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.env import COMPAT_CLI, isolated_env
from tests.harness import Sidecar
from tests.long_session import (
    EDIT_PROMPT,
    SEED_SCENARIO,
    TEXT_PROMPT,
    CliProcess,
    GrownSession,
    Seed,
    grow_session,
    record_seed,
)

ENTRIES = 60


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seed]:
    """One seed session, recorded by the real CLI in its own HOME and workspace."""
    root = tmp_path_factory.mktemp("seed")
    (root / "home").mkdir()
    (root / "workspace").mkdir()
    with ScriptedModel(load_scenario(SEED_SCENARIO)) as model:
        yield record_seed(
            COMPAT_CLI or find_cli(), model.url, root / "home", (root / "workspace").resolve()
        )


def read_lines(session: GrownSession) -> list[dict[str, Any]]:
    with open(session.path, "rb") as f:
        return [json.loads(line) for line in f]


def assistant_message_ids(lines: list[dict[str, Any]]) -> list[str]:
    """Each assistant message's id once (the CLI writes one line per content block)."""
    ids = {line["message"]["id"]: None for line in lines if line.get("type") == "assistant"}
    return list(ids)


def texts_of(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content or () if b.get("type") == "text"]


def test_a_grown_session_is_one_chain_through_every_entry_from_the_last_to_the_first(
    seed: Seed, home: Path
) -> None:
    grown = grow_session(seed, home, ENTRIES)

    entries = [line for line in read_lines(grown) if "uuid" in line]
    by_uuid = {entry["uuid"]: entry for entry in entries}
    walked = []
    at: str | None = entries[-1]["uuid"]
    while at is not None:
        walked.append(at)
        at = by_uuid[at]["parentUuid"]
    assert len(entries) == grown.entries >= ENTRIES
    assert len(by_uuid) == len(entries), "an entry uuid is repeated"
    assert walked[::-1] == [entry["uuid"] for entry in entries]


def test_a_grown_session_has_fresh_message_and_tool_ids_and_rising_prompt_times(
    seed: Seed, home: Path
) -> None:
    grown = grow_session(seed, home, ENTRIES)

    lines = read_lines(grown)
    tool_uses = [
        block["id"]
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    ]
    results = Counter(
        block["tool_use_id"]
        for line in lines
        if line.get("type") == "user" and isinstance(line["message"]["content"], list)
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    )
    prompt_times = [
        line["timestamp"]
        for line in lines
        if line.get("type") == "user" and texts_of(line["message"]) and not line.get("isMeta")
    ]
    assert len(tool_uses) == len(set(tool_uses)) == grown.tools
    assert results == Counter(tool_uses)
    message_ids = assistant_message_ids(lines)
    assert len(message_ids) == len(set(message_ids)) == 1 + 3 * grown.repeats
    assert {line["sessionId"] for line in lines if "sessionId" in line} == {grown.session_id}
    assert len(prompt_times) == grown.prompts
    assert prompt_times == sorted(prompt_times) and len(set(prompt_times)) == len(prompt_times)


def test_the_cli_resumes_a_grown_session_and_its_next_turn_carries_every_prompt(
    seed: Seed, home: Path, model: ScriptedModel
) -> None:
    grown = grow_session(seed, home, ENTRIES)
    model.set_scenario(load_scenario(SEED_SCENARIO))

    with CliProcess(
        COMPAT_CLI or find_cli(), isolated_env(home, model.url), seed.cwd, grown.session_id, True
    ) as cli:
        result = cli.turn("one more question")

    assert result["subtype"] == "success" and result["session_id"] == grown.session_id
    sent = Counter(
        text
        for message in model.main_requests[-1]["messages"]
        if message["role"] == "user"
        for text in texts_of(message)
    )
    assert (sent[TEXT_PROMPT], sent[EDIT_PROMPT], sent["one more question"]) == (
        grown.repeats,
        grown.repeats,
        1,
    )


async def test_get_history_of_a_grown_session_shows_each_of_its_turns(
    seed: Seed, home: Path, sidecar: Sidecar
) -> None:
    grown = grow_session(seed, home, ENTRIES)

    history = await sidecar.request(
        "claude/getHistory", {"sessionId": grown.session_id, "cwd": seed.cwd}
    )

    kinds = Counter(entry["kind"] for entry in history["entries"])
    prompts = [entry["text"] for entry in history["entries"] if entry["kind"] == "prompt"]
    tools = [entry for entry in history["entries"] if entry["kind"] == "tool"]
    assert history["warnings"] == []
    assert len(prompts) == grown.prompts
    assert prompts[1:] == [TEXT_PROMPT, EDIT_PROMPT] * grown.repeats
    assert [(t["name"], t["status"]) for t in tools] == [("Edit", "done")] * grown.tools
    # Each exchange's answer: one text for the first two, two around the Edit.
    assert kinds["text"] == 1 + 3 * grown.repeats


HUGE = 100_000


def shape(entries: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """Each entry's kind and text (or tool name): what stays when ids are fresh."""
    return [(e["kind"], e.get("text", e.get("name"))) for e in entries]


@pytest.mark.same_on_every_cli("the daemon reads the grown file from its end by itself")
# Growing 170 MB and the CLI reading it at resume take ~15 s on a quiet machine.
@pytest.mark.timeout(300)
async def test_a_resumed_100k_entry_session_gives_its_last_page_and_has_more(
    seed: Seed, home: Path, sidecar: Sidecar, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(SEED_SCENARIO))
    grown = grow_session(seed, home, HUGE)
    small = grow_session(seed, home, 200)
    expected = await sidecar.request(
        "claude/getHistory", {"sessionId": small.session_id, "cwd": seed.cwd}
    )

    channel = await sidecar.new_channel(seed.cwd, resume=grown.session_id)
    last = await sidecar.request("claude/getTranscript", {"channelId": channel, "limit": 50})
    before = await sidecar.request(
        "claude/getTranscript", {"channelId": channel, "limit": 50, "before": last["nextCursor"]}
    )

    assert grown.entries >= HUGE
    assert last["hasMore"] is True and before["hasMore"] is True
    assert shape(last["entries"]) == shape(expected["entries"][-50:])
    assert shape(before["entries"]) == shape(expected["entries"][-100:-50])
    assert not {e["id"] for e in last["entries"]} & {e["id"] for e in before["entries"]}
