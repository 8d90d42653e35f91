"""``claude-sidecar acp`` as an ACP client sees it: sessions, prompts, updates, permission
asks and cancellation, against the real CLI and the stand-in model."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
)
from acp.schema import EnvVariable, McpServerStdio, PromptResponse
from claude_sidecar import __version__
from claude_sidecar.scripted import ScriptedModel, load_scenario

from tests.acp.client import acp_agent, text
from tests.acp.conftest import Acp
from tests.env import both_platform_paths
from tests.harness import (
    child_pids,
    descendant_pids,
    json_object,
    tool_results,
    wait_until_dead,
)

THINK_AND_ANSWER = {
    "rules": [],
    "default": [[{"thinking": "The user greets me."}, {"text": "Hello from the stand-in model!"}]],
}
HOLD = {
    # Streams half an answer, then holds the rest until a prompt nobody sends.
    "rules": [
        {
            "match": "(?i)long",
            "steps": [[{"text": "Half of it"}, {"wait_for_prompt": "^never sent$", "timeout": 90}]],
        }
    ],
    "default": [[{"text": "Fresh answer."}]],
}


def writes(*names: str) -> dict[str, Any]:
    steps: list[list[dict[str, Any]]] = [
        [{"tool_use": {"name": "Write", "input": {"file_path": "{cwd}/" + n, "content": "new\n"}}}]
        for n in names
    ]
    return {
        "rules": [{"match": "(?i)write", "steps": [*steps, [{"text": "Finished."}]]}],
        "default": [[{"text": "Hello!"}]],
    }


async def new_session(acp: Acp, workspace: Path, **params: Any) -> str:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[], **params)
    return str(opened.session_id)


async def test_initialize_says_what_this_agent_implements_and_who_it_is(
    daemon_env: dict[str, str],
) -> None:
    async with acp_agent(daemon_env) as (conn, _, _client):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)

    caps = answer.agent_capabilities
    assert answer.protocol_version == PROTOCOL_VERSION
    assert caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context
    assert not caps.prompt_capabilities.audio and caps.load_session
    assert caps.mcp_capabilities.http and caps.mcp_capabilities.sse
    assert not caps.mcp_capabilities.acp
    assert answer.agent_info.name == "claude-sidecar" and answer.agent_info.version == __version__
    assert answer.auth_methods == [], "the stand-in model's key needs no login"


async def test_a_new_session_starts_in_the_mode_that_asks_and_lists_the_others(
    acp: Acp, workspace: Path
) -> None:
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])

    assert opened.modes.current_mode_id == "default"
    modes = [m.id for m in opened.modes.available_modes]
    assert modes == ["default", "acceptEdits", "plan", "dontAsk", "auto"]
    assert opened.field_meta["claudeSidecar"]["pid"] in acp.clis()


async def test_a_prompt_streams_thinking_and_text_and_ends_with_end_turn(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(THINK_AND_ANSWER))
    session = await new_session(acp, workspace)

    answer = await acp.conn.prompt(session_id=session, prompt=[text("hello")])

    assert answer.stop_reason == "end_turn"
    assert acp.client.text(session, "agent_thought_chunk") == "The user greets me."
    assert acp.client.text(session) == "Hello from the stand-in model!"
    assert len(acp.client.of(session, "agent_message_chunk")) > 1, "streamed in pieces"
    assert acp.client.of(session, "user_message_chunk") == [], "the client's prompt is not echoed"


async def test_a_write_asks_with_its_diff_and_allowing_it_writes_the_file(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(writes("note.txt")))
    (workspace / "note.txt").write_text("old\n")
    session = await new_session(acp, workspace)

    prompting = asyncio.ensure_future(acp.conn.prompt(session_id=session, prompt=[text("write")]))
    (ask,) = await acp.client.wait(lambda: acp.client.asks)
    ask.answer("allow")
    answer = await prompting

    path = str(workspace / "note.txt")
    assert ask.option_ids == ["allow", "allowAlways", "deny"]
    assert ask.tool_call.kind == "edit" and ask.tool_call.title == f"Write {path}"
    (diff,) = ask.tool_call.content or []
    assert diff.model_dump(by_alias=True, exclude_none=True) == {
        "type": "diff",
        "path": path,
        "oldText": "old\n",
        "newText": "new\n",
    }
    assert answer.stop_reason == "end_turn"
    assert (workspace / "note.txt").read_text() == "new\n"
    call = acp.client.tool_calls(session)[ask.tool_call.tool_call_id]
    assert call["status"] == "completed" and call["locations"] == [{"path": path}]


async def test_a_rejected_write_leaves_the_file_alone_and_its_tool_call_failed(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(writes("note.txt")))
    session = await new_session(acp, workspace)

    prompting = asyncio.ensure_future(acp.conn.prompt(session_id=session, prompt=[text("write")]))
    (ask,) = await acp.client.wait(lambda: acp.client.asks)
    ask.answer("deny")
    answer = await prompting

    assert answer.stop_reason == "end_turn"
    assert not (workspace / "note.txt").exists()
    call = acp.client.tool_calls(session)[ask.tool_call.tool_call_id]
    assert call["status"] == "failed" and call["_meta"]["claudeSidecar"]["status"] == "denied"


async def test_allow_always_keeps_the_rule_so_the_next_write_is_not_asked(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(writes("a.txt", "b.txt")))
    session = await new_session(acp, workspace)

    prompting = asyncio.ensure_future(acp.conn.prompt(session_id=session, prompt=[text("write")]))
    (ask,) = await acp.client.wait(lambda: acp.client.asks)
    ask.answer("allowAlways")
    await prompting

    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    assert len(acp.client.asks) == 1


async def test_accept_edits_mode_set_by_the_client_writes_without_asking(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(writes("note.txt")))
    session = await new_session(acp, workspace)

    await acp.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
    answer = await acp.conn.prompt(session_id=session, prompt=[text("write")])

    assert answer.stop_reason == "end_turn"
    assert (workspace / "note.txt").read_text() == "new\n"
    assert acp.client.asks == []
    modes = acp.client.of(session, "current_mode_update")
    assert modes and modes[-1]["currentModeId"] == "acceptEdits"


async def test_cancel_mid_stream_ends_the_prompt_cancelled_and_the_session_goes_on(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(load_scenario(HOLD))
    session = await new_session(acp, workspace)

    prompting = asyncio.ensure_future(
        acp.conn.prompt(session_id=session, prompt=[text("a long answer")])
    )
    await acp.client.wait(lambda: acp.client.text(session) == "Half of it")
    await acp.conn.cancel(session_id=session)
    cancelled = await asyncio.wait_for(prompting, 30)
    after = await acp.conn.prompt(session_id=session, prompt=[text("again")])

    assert cancelled.stop_reason == "cancelled"
    assert after.stop_reason == "end_turn"
    assert acp.client.text(session).endswith("Fresh answer.")


async def cancel_mid_ask(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> tuple[str, Any, PromptResponse]:
    """A session whose Write waits for permission, cancelled then: the session, the ask
    and the prompt's answer."""
    model.set_scenario(load_scenario(writes("note.txt")))
    session = await new_session(acp, workspace)
    prompting = asyncio.ensure_future(acp.conn.prompt(session_id=session, prompt=[text("write")]))
    (ask,) = await acp.client.wait(lambda: acp.client.asks)
    await acp.conn.cancel(session_id=session)
    return session, ask, await asyncio.wait_for(prompting, 30)


async def test_cancel_mid_permission_withdraws_the_ask_and_a_late_answer_has_no_effect(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    session, ask, cancelled = await cancel_mid_ask(acp, model, workspace)
    withdrawal = await acp.client.wait(
        lambda: [m for m in acp.client.incoming if m.get("method") == "$/cancel_request"]
    )
    asked = next(
        m
        for m in acp.client.incoming
        if m.get("method") == "session/request_permission"
        and m["params"]["toolCall"]["toolCallId"] == ask.tool_call.tool_call_id
    )
    ask.answer("allow")
    after = await acp.conn.prompt(session_id=session, prompt=[text("hello")])

    assert cancelled.stop_reason == "cancelled"
    assert withdrawal[0]["params"] == {"requestId": asked["id"]}
    assert after.stop_reason == "end_turn"
    assert not (workspace / "note.txt").exists(), "the late allow wrote the file"
    call = acp.client.tool_calls(session)[ask.tool_call.tool_call_id]
    assert call["status"] == "failed"


async def test_cancel_sends_the_turns_last_updates_before_the_cancelled_answer(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    _, ask, _ = await cancel_mid_ask(acp, model, workspace)

    answer = next(
        i
        for i, m in enumerate(acp.client.incoming)
        if "id" in m and m.get("result", {}).get("stopReason") == "cancelled"
    )
    tool_id = ask.tool_call.tool_call_id
    statuses = [
        (i, m["params"]["update"].get("status"))
        for i, m in enumerate(acp.client.incoming)
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == tool_id
        and m["params"]["update"].get("status")
    ]
    assert statuses[-1][1] == "failed"
    assert statuses[-1][0] < answer, "the tool's last update came after the cancelled answer"


async def test_images_links_and_embedded_files_reach_the_model_as_the_cli_takes_them(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    session = await new_session(acp, workspace)
    pixel = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
        "awAAAABJRU5ErkJggg=="
    )
    readme = workspace / "README.md"

    answer = await acp.conn.prompt(
        session_id=session,
        prompt=[
            text("look at these"),
            image_block(pixel, "image/png"),
            resource_link_block("main.py", f"file://{workspace}/main.py"),
            resource_block(embedded_text_resource(f"file://{readme}", "# Hello\n")),
        ],
    )

    assert answer.stop_reason == "end_turn"
    blocks = [
        b
        for m in model.main_requests[-1]["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]
    texts = [b["text"].strip() for b in blocks if b["type"] == "text"]
    images = [b for b in blocks if b["type"] == "image"]
    assert images and images[0]["source"]["data"] == pixel
    assert "look at these" in texts
    assert f"[@main.py](file://{workspace}/main.py)" in texts
    assert f"[@README.md](file://{readme})" in texts
    assert f'<context ref="file://{readme}">\n# Hello\n\n</context>' in texts


async def test_a_sessions_mcp_server_serves_the_models_tool_call(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)weather",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "mcp__weather__forecast",
                                        "input": {"city": "Paris"},
                                    }
                                }
                            ],
                            [{"text": "It will be sunny."}],
                        ],
                    }
                ]
            }
        )
    )
    server = McpServerStdio(
        name="weather",
        command=sys.executable,
        args=[str(Path(__file__).parents[1] / "fixtures" / "weather_mcp.py")],
        env=[EnvVariable(name="WEATHER_UNITS", value="metric")],
    )
    opened = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[server])

    prompting = asyncio.ensure_future(
        acp.conn.prompt(session_id=opened.session_id, prompt=[text("weather in Paris?")])
    )
    (ask,) = await acp.client.wait(lambda: acp.client.asks)
    ask.answer("allow")
    await prompting

    assert ask.tool_call.title == "weather: forecast"
    assert "Forecast for Paris: sunny, 23 degrees" in str(tool_results(model)[-1]["content"])


async def test_bad_params_get_the_sdks_error_naming_the_field_and_the_fix(
    acp: Acp, workspace: Path
) -> None:
    session = await new_session(acp, workspace)
    errors: list[RequestError] = []
    for call in (
        acp.conn.prompt(session_id="no-such-session", prompt=[text("hi")]),
        acp.conn.new_session(cwd="relative/dir", mcp_servers=[]),
        acp.conn.set_session_mode(session_id=session, mode_id="yolo"),
        acp.conn.prompt(session_id=session, prompt=[]),
    ):
        with pytest.raises(RequestError) as raised:
            await call
        errors.append(raised.value)
    with pytest.raises(RequestError) as untyped:
        # What the typed client cannot send: a prompt without its sessionId.
        await acp.conn._conn.send_request("session/prompt", {"prompt": []})

    data = [json_object(e.data) for e in [*errors, untyped.value]]
    assert [d["field"] for d in data] == ["sessionId", "cwd", "modeId", "prompt", "sessionId"]
    assert all(e.code == -32602 for e in [*errors, untyped.value])
    assert all(d["fix"] and d["errors"] for d in data)
    assert "default" in data[2]["fix"], "the fix names the modes there are"


async def test_closing_stdin_ends_every_cli_of_every_session(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    async with acp_agent(daemon_env) as (conn, process, _client):
        for _ in range(2):
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        clis = descendant_pids(process.pid)
        assert len(clis) >= 2
        # Leaving the block closes the agent's stdin, as a client that quits does.
    await asyncio.wait_for(process.wait(), 30)

    assert await wait_until_dead(sorted(clis)) == []
    assert process.returncode == 0


@both_platform_paths
# It kills the agent's own process.
@pytest.mark.real_daemon_process
async def test_a_killed_agent_leaves_no_cli(
    daemon_env: dict[str, str], workspace: Path, model: ScriptedModel
) -> None:
    model.set_scenario(load_scenario(HOLD))
    async with acp_agent(daemon_env) as (conn, process, client):
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        streaming = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        prompting = asyncio.ensure_future(
            conn.prompt(session_id=streaming, prompt=[text("a long answer")])
        )
        # Mid-turn, a CLI does not end when its input does: only the agent's guard ends it.
        await client.wait(lambda: client.text(streaming) == "Half of it")
        clis = descendant_pids(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        await process.wait()
        prompting.cancel()

    assert await wait_until_dead(sorted(clis)) == []


async def started_spares(
    agent_pid: int, taken: frozenset[int] | set[int] = frozenset()
) -> set[int]:
    """The agent's CLIs other than ``taken``, once there is one (a spare it started)."""
    deadline = time.monotonic() + 60
    # Polls: a spare starting is no event the client can await.
    while not (spares := child_pids(agent_pid) - taken):
        assert time.monotonic() < deadline, "no spare CLI was started"
        await asyncio.sleep(0.1)
    return spares


async def test_the_first_session_takes_the_spare_started_at_initialize_in_the_warm_pool_cwd(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    async with acp_agent(daemon_env, "--warm-pool", "1", "--warm-pool-cwd", str(workspace)) as (
        conn,
        process,
        _client,
    ):
        spares = await started_spares(process.pid)
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=first.session_id, prompt=[text("hello")])
        clis = descendant_pids(process.pid)

    assert {first.field_meta["claudeSidecar"]["pid"]} == spares
    assert answer.stop_reason == "end_turn"
    assert await wait_until_dead(sorted(clis)) == []


async def test_a_new_session_takes_the_spare_cli_started_after_the_previous_ones_turn(
    daemon_env: dict[str, str], workspace: Path
) -> None:
    async with acp_agent(daemon_env, "--warm-pool", "1", "--warm-pool-cwd", str(workspace)) as (
        conn,
        process,
        _client,
    ):
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=first.session_id, prompt=[text("hello")])
        taken = {first.field_meta["claudeSidecar"]["pid"]}
        spares = await started_spares(process.pid, taken)
        second = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=second.session_id, prompt=[text("hello")])
        clis = descendant_pids(process.pid)

    assert {second.field_meta["claudeSidecar"]["pid"]} == spares
    assert answer.stop_reason == "end_turn"
    assert await wait_until_dead(sorted(clis)) == []


def test_a_warm_pool_cwd_that_does_not_exist_stops_the_agent_at_start_naming_the_flag(
    daemon_env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-dir"

    done = subprocess.run(
        [sys.executable, "-m", "claude_sidecar", "acp", "--warm-pool-cwd", str(missing)],
        env=daemon_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert f"--warm-pool-cwd: no such directory: {missing}" in done.stderr
    assert done.stdout == ""  # stdout is the ACP connection's


def _two_questions(model: ScriptedModel) -> tuple[str, str]:
    """A scenario whose model asks two questions at once, then answers."""
    colour, size = "Which colour should the button be?", "How big should it be?"
    model.set_scenario(
        load_scenario(
            {
                "rules": [
                    {
                        "match": "(?i)button",
                        "steps": [
                            [
                                {
                                    "tool_use": {
                                        "name": "AskUserQuestion",
                                        "input": {
                                            "questions": [
                                                {
                                                    "question": colour,
                                                    "header": "Colour",
                                                    "multiSelect": False,
                                                    "options": [
                                                        {"label": "red", "description": "warm"},
                                                        {"label": "blue", "description": "cool"},
                                                    ],
                                                },
                                                {
                                                    "question": size,
                                                    "header": "Size",
                                                    "multiSelect": False,
                                                    "options": [
                                                        {"label": "small", "description": "s"},
                                                        {"label": "large", "description": "l"},
                                                    ],
                                                },
                                            ]
                                        },
                                    }
                                }
                            ],
                            [{"text": "Noted."}],
                        ],
                    }
                ]
            }
        )
    )
    return colour, size


async def test_each_question_of_an_ask_is_a_permission_request_and_all_answers_reach_the_model(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    colour, size = _two_questions(model)
    session = await new_session(acp, workspace)
    prompting = asyncio.create_task(
        acp.conn.prompt(session_id=session, prompt=[text("style the button")])
    )
    (first,) = await acp.client.wait(lambda: acp.client.asks)
    first.answer("answer:1")
    second = await acp.client.wait(lambda: acp.client.asks[1:])
    second[0].answer("answer:0")
    answer = await asyncio.wait_for(prompting, 60)

    assert [first.tool_call.title, second[0].tool_call.title] == [
        f"{colour} (1/2)",
        f"{size} (2/2)",
    ]
    assert first.option_ids == ["answer:0", "answer:1", "deny"]
    assert answer.stop_reason == "end_turn"
    answered = str(tool_results(model)[-1]["content"])
    assert f'"{colour}"="blue"' in answered and f'"{size}"="small"' in answered


async def test_skipping_one_question_declines_the_whole_ask(
    acp: Acp, model: ScriptedModel, workspace: Path
) -> None:
    _two_questions(model)
    session = await new_session(acp, workspace)
    prompting = asyncio.create_task(
        acp.conn.prompt(session_id=session, prompt=[text("style the button")])
    )
    (first,) = await acp.client.wait(lambda: acp.client.asks)
    first.answer("deny")
    answer = await asyncio.wait_for(prompting, 60)

    assert len(acp.client.asks) == 1, "no question after a skipped one"
    assert answer.stop_reason == "end_turn"
    call = acp.client.tool_calls(session)[first.tool_call.tool_call_id]
    assert call["status"] == "failed"
