"""The stand-in model driving the real Claude Code CLI (stream-json mode)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_sidecar.scripted import DEMO_SCENARIO_PATH, ScriptedModel, load_scenario

from tests.scripted.conftest import StartCli

SCENARIO = load_scenario(
    {
        "rules": [
            {
                "match": "(?i)^hello",
                "chunk": 3,
                "steps": [[{"text": "Hello! How can I help you today?"}]],
            },
            {
                "match": "(?i)think",
                "chunk": 5,
                "steps": [
                    [
                        {"thinking": "The user wants me to think. Fine."},
                        {"text": "I thought about it."},
                    ]
                ],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            },
            {
                "match": "(?i)write",
                "steps": [
                    [
                        {"text": "I'll write the file."},
                        {
                            "tool_use": {
                                "name": "Write",
                                "input": {
                                    "file_path": "{cwd}/a.txt",
                                    "content": "hi from {prompt}\n",
                                },
                            }
                        },
                    ],
                    [{"text": "Wrote a.txt."}],
                ],
            },
            {
                "match": "(?i)fail",
                "steps": [
                    [
                        {
                            "error": {
                                "status": 400,
                                "type": "invalid_request_error",
                                "message": "Scripted refusal",
                            }
                        }
                    ]
                ],
            },
        ],
        "default": [[{"text": "Default answer."}]],
    }
)


def stream_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["event"] for line in lines if line.get("type") == "stream_event"]


def deltas(lines: list[dict[str, Any]], kind: str, field: str) -> str:
    return "".join(
        e["delta"][field]
        for e in stream_events(lines)
        if e["type"] == "content_block_delta" and e["delta"]["type"] == kind
    )


def assistant_blocks(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The CLI emits one `assistant` line per content block.
    return [
        b for line in lines if line.get("type") == "assistant" for b in line["message"]["content"]
    ]


def result(lines: list[dict[str, Any]]) -> dict[str, Any]:
    assert lines[-1]["type"] == "result"
    return lines[-1]


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(SCENARIO) as m:
        yield m


def test_text_reply_streams_deltas(model: ScriptedModel, start_cli: StartCli) -> None:
    cli = start_cli(model)
    lines = cli.turn("hello there")
    text_deltas = [e for e in stream_events(lines) if e["type"] == "content_block_delta"]
    assert len(text_deltas) > 5  # chunk 3
    assert deltas(lines, "text_delta", "text") == "Hello! How can I help you today?"
    assert [b["text"] for b in assistant_blocks(lines)] == ["Hello! How can I help you today?"]
    res = result(lines)
    assert res["subtype"] == "success" and not res["is_error"]
    assert res["result"] == "Hello! How can I help you today?"
    assert cli.close() == 0
    (req,) = model.main_requests
    assert req["stream"] is True and req["tools"]


def test_thinking_then_text(model: ScriptedModel, start_cli: StartCli) -> None:
    cli = start_cli(model)
    lines = cli.turn("think hard")
    assert deltas(lines, "thinking_delta", "thinking") == "The user wants me to think. Fine."
    assert deltas(lines, "text_delta", "text") == "I thought about it."
    blocks = assistant_blocks(lines)
    assert [b["type"] for b in blocks] == ["thinking", "text"]
    assert blocks[0]["thinking"] == "The user wants me to think. Fine." and blocks[0]["signature"]
    res = result(lines)
    assert res["result"] == "I thought about it."
    assert res["usage"]["input_tokens"] == 100 and res["usage"]["output_tokens"] == 20


def test_write_tool_use_creates_the_file(
    model: ScriptedModel, start_cli: StartCli, workspace: Path
) -> None:
    cli = start_cli(model)
    lines = cli.turn("write a file")
    assert (workspace / "a.txt").read_text() == "hi from write a file\n"
    tool = next(b for b in assistant_blocks(lines) if b["type"] == "tool_use")
    assert tool["name"] == "Write" and tool["id"] == "toolu_scripted_1"
    assert tool["input"]["file_path"] == str(workspace / "a.txt")  # {cwd} resolved from the request
    assert result(lines)["result"] == "Wrote a.txt."
    assert result(lines)["num_turns"] == 2

    _first, second = model.main_requests
    last_user = [m for m in second["messages"] if m["role"] == "user"][-1]
    (tool_result,) = [b for b in last_user["content"] if b["type"] == "tool_result"]
    assert tool_result["tool_use_id"] == "toolu_scripted_1"
    assert "a.txt" in str(tool_result["content"]) and not tool_result.get("is_error")


def test_second_message_carries_the_first_exchange(
    model: ScriptedModel, start_cli: StartCli, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="claude_sidecar.scripted")
    cli = start_cli(model)
    assert result(cli.turn("hello one"))["result"] == "Hello! How can I help you today?"
    assert result(cli.turn("and now something else"))["result"] == "Default answer."

    _first, second = model.main_requests
    convo = [m for m in second["messages"] if m["role"] != "system"]
    assert [m["role"] for m in convo] == ["user", "assistant", "user"]
    assert "hello one" in [b.get("text") for b in convo[0]["content"]]
    assert convo[1]["content"] == [{"type": "text", "text": "Hello! How can I help you today?"}]
    assert [b.get("text") for b in convo[2]["content"]][-1] == "and now something else"
    # Chunked SSE on HTTP/1.1 keep-alive: the CLI reuses one connection for both turns
    # (CLI 2.1.233 first sends a `HEAD /api/hello` connectivity check on one of its own).
    messages = [r.getMessage() for r in caplog.records]
    opened = [m for m in messages if m.startswith("connection opened")]
    checks = [m for m in messages if '"HEAD /api/hello ' in m]
    assert len(opened) <= 1 + len(checks)


def test_api_error_becomes_an_error_result(model: ScriptedModel, start_cli: StartCli) -> None:
    cli = start_cli(model)
    res = result(cli.turn("fail now"))
    assert res["is_error"] is True
    assert "Scripted refusal" in res["result"] and res["api_error_status"] == 400
    # The process survives; the next prompt is matched on its own text.
    assert result(cli.turn("hello again"))["result"] == "Hello! How can I help you today?"


def test_a_wait_that_times_out_becomes_an_error_result_that_says_so(
    model: ScriptedModel, start_cli: StartCli
) -> None:
    model.set_scenario(
        {
            "rules": [
                {
                    "match": "hold",
                    "steps": [
                        [
                            {"text": "half"},
                            {"wait_for_prompt": "nobody sends this", "timeout": 0.5},
                            {"text": "never streamed"},
                        ]
                    ],
                }
            ]
        }
    )
    cli = start_cli(model)
    lines = cli.turn("hold on")

    res = result(lines)
    assert res["is_error"] is True
    assert "no request with a prompt matching 'nobody sends this' arrived" in res["result"]
    assert deltas(lines, "text_delta", "text") == "half"
    assert len(model.main_requests) == 1, "the CLI does not retry it"


def test_compact_gets_a_summary_even_where_a_rule_would_call_a_tool(
    model: ScriptedModel, start_cli: StartCli
) -> None:
    # The compaction request reads "summary" and "tools": played by this rule, the CLI would
    # get a tool call instead of a summary and fail the compaction ("produced empty response").
    bash = {"tool_use": {"name": "Bash", "input": {"command": "true"}}}
    rule = {"match": "(?i)summary|tools", "steps": [[bash]]}
    model.set_scenario({"rules": [rule], "default": [[{"text": "ok"}]]})
    cli = start_cli(model)
    cli.turn("hello one")
    cli.turn("hello two")  # CLI 2.1.233 compacts nothing shorter than two exchanges
    lines = cli.turn("/compact")

    boundary = [line for line in lines if line.get("subtype") == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0]["compact_metadata"]["trigger"] == "manual"
    summary = next(line for line in lines if "Summary:" in str(line.get("message")))
    # CLI 2.1.233 keeps the last exchange as it is and has only the one before summarised.
    assert "1. Primary Request and Intent:\n   - hello one\n" in summary["message"]["content"]
    assert not result(lines)["is_error"]
    assert model.main_requests[-1]["tools"], "asked with the tools, like any main request"


def test_demo_scenario_writes_the_haiku(start_cli: StartCli, workspace: Path) -> None:
    with ScriptedModel(DEMO_SCENARIO_PATH) as model:
        cli = start_cli(model)
        lines = cli.turn("Create a haiku file")
        assert (workspace / "haiku.txt").read_text().startswith("Cursor blinks at dawn\n")
        assert [b["type"] for b in assistant_blocks(lines)] == [
            "thinking",
            "text",
            "tool_use",
            "text",
        ]
        assert result(lines)["result"].startswith("Done! I created `haiku.txt`")
        assert "create a haiku file" in result(cli.turn("what else can you do?"))["result"]
