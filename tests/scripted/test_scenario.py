"""Pure unit tests: scenario loading, matching, step selection, SSE sequences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from claude_sidecar.scripted import DEMO_SCENARIO_PATH, Scenario, load_scenario
from claude_sidecar.scripted.matching import (
    find_cwd,
    plan_reply,
    prompt_text,
    step_index,
    substitute,
)
from claude_sidecar.scripted.scenario import DEFAULT_WAIT_TIMEOUT, Block, ToolUseSpec
from claude_sidecar.scripted.sse import (
    SseEvent,
    encode_event,
    error_body,
    error_event,
    message_body,
    split_chunks,
    stop_reason,
    stream_events,
)

REMINDER = "<system-reminder>\nAttribution for commits...\n</system-reminder>\n"
ENV = "# Environment\n - Primary working directory: /work/space\n - Is a git repository: false\n"
TOOLS: list[dict[str, Any]] = [{"name": "Write", "input_schema": {"type": "object"}}]


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def tool_result(tool_id: str = "toolu_1") -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}],
    }


def assistant(text: str = "x") -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def system_msg(text: str = ENV) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "text": text}]}


def tool_use(block: Block) -> ToolUseSpec:
    """The tool call of a block that must be one."""
    assert block.tool_use is not None, block
    return block.tool_use


def request(
    *messages: dict[str, Any], tools: list[dict[str, Any]] | None = TOOLS, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-test",
        "messages": list(messages),
        "stream": True,
    } | extra
    if tools is not None:
        body["tools"] = tools
    return body


SCENARIO = {
    "rules": [
        {
            "name": "greet",
            "match": "(?i)hello",
            "steps": [[{"thinking": "The user greets me."}, {"text": "Hello! How can I help?"}]],
            "usage": {"input_tokens": 12, "output_tokens": 7},
            "chunk": 8,
        },
        {
            "match": "write",
            "steps": [
                [
                    {"text": "I'll write it."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{cwd}/a.txt", "content": "{x}\n"},
                        }
                    },
                ],
                [{"text": "Done: {prompt}"}],
            ],
            "delay": 0.5,
        },
        {
            "match": "overloaded",
            "steps": [
                [{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}]
            ],
        },
    ],
    "default": [[{"text": "I am a scripted stand-in model."}]],
    "side_reply": "Scripted title",
}


@pytest.fixture
def scenario() -> Scenario:
    return load_scenario(SCENARIO)


# --- loading ------------------------------------------------------------------------


def test_load_from_dict_bytes_path_and_scenario(tmp_path: Path, scenario: Scenario) -> None:
    raw = json.dumps(SCENARIO).encode()
    path = tmp_path / "s.json"
    path.write_bytes(raw)
    assert load_scenario(raw) == scenario
    assert load_scenario(path) == scenario
    assert load_scenario(str(path)) == scenario
    assert load_scenario(scenario) is scenario


def test_defaults() -> None:
    sc = load_scenario({})
    assert sc.rules == []
    assert sc.default == [[Block(text="I am a scripted stand-in model.")]]
    assert sc.side_reply == "Scripted title"
    assert sc.finished == "(scenario finished)"
    assert sc.chunk == 16 and sc.delay == 0.0


def test_demo_scenario_loads() -> None:
    sc = load_scenario(DEMO_SCENARIO_PATH)
    kinds = [b.kind for b in sc.rules[0].steps[0]]
    assert kinds == ["thinking", "text", "tool_use"]
    write = sc.rules[0].steps[0][2].tool_use
    assert write is not None and write.input["file_path"] == "{cwd}/haiku.txt"
    assert sc.rule_for("Create a haiku file") is sc.rules[0]
    assert sc.rule_for("what time is it") is None


@pytest.mark.parametrize(
    ("doc", "fragments"),
    [
        (
            {"rules": [{"match": "x", "steps": [[{"txt": "a"}]]}]},
            ["unknown field `txt`", "$.rules[0].steps[0][0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a", "thinking": "b"}]]}]},
            ["exactly one of", "text, thinking", "$.rules[0].steps[0][0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{}]]}]},
            ["exactly one of", "$.rules[0].steps[0][0]"],
        ),
        (
            {"rules": [{"match": "(", "steps": [[{"text": "a"}]]}]},
            ["not a valid Python regex", "$.rules[0]"],
        ),
        ({"rules": [{"match": "x", "steps": []}]}, ["`steps` must not be empty", "$.rules[0]"]),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a"}], []]}]},
            ["steps[1] is empty", "$.rules[0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a"}, {"error": {}}]]}]},
            ["only block of its step", "$.rules[0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"error": {}}, {"text": "a"}]]}]},
            ["or its first with `times`", "$.rules[0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"error": {"times": 1}}, {"error": {}}]]}]},
            ["only block of its step", "$.rules[0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"error": {"times": 0}}]]}]},
            ["error.times must be at least 1"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"tool_use": {"input": {}}}]]}]},
            ["missing required field `name`", "$.rules[0].steps[0][0].tool_use"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"error": {"status": 200}}]]}]},
            ["400..599", "$.rules[0].steps[0][0].error"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a", "chunk": -1}]]}]},
            ["`chunk` must be >= 0", "$.rules[0].steps[0][0]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a", "signature": "s"}]]}]},
            ["only allowed on a `thinking`"],
        ),
        (
            {"default": [[{"text": 3}]]},
            ["Expected `str | null`, got `int`", "$.default[0][0].text"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a"}, {"wait_for_prompt": "("}]]}]},
            ["`wait_for_prompt` is not a valid Python regex", "$.rules[0].steps[0][1]"],
        ),
        (
            {"rules": [{"match": "x", "steps": [[{"text": "a", "timeout": 1}]]}]},
            ["`timeout` is only allowed on a `wait_for_prompt` block", "$.rules[0].steps[0][0]"],
        ),
        (
            {"default": [[{"wait_for_prompt": "y", "timeout": 0}, {"text": "a"}]]},
            ["`timeout` must be > 0", "$.default[0][0]"],
        ),
        (
            {"default": [[{"wait_for_prompt": "y"}]]},
            ["default[0]: a step with `wait_for_prompt` needs a `text`"],
        ),
        (
            {
                "rules": [
                    {"match": "x", "steps": [[{"error": {"times": 1}}, {"wait_for_prompt": "y"}]]}
                ]
            },
            ["steps[0]: a step with `wait_for_prompt` needs", "$.rules[0]"],
        ),
        (
            {"default": [[{"text": "a", "wait_for_prompt": "y"}]]},
            ["exactly one of", "(got text, wait_for_prompt)", "$.default[0][0]"],
        ),
        ({"rules": {}}, ["Expected `array`", "$.rules"]),
        ({"bogus": 1}, ["unknown field `bogus`"]),
    ],
)
def test_bad_scenarios_name_the_path(doc: dict[str, Any], fragments: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        load_scenario(doc)
    message = str(info.value)
    assert message.startswith("invalid scenario (dict): ")
    for fragment in fragments:
        assert fragment in message


def test_bad_json_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"rules": [')
    with pytest.raises(
        ValueError,
        match=r"invalid scenario file '.*broken\.json': not valid JSON: Input data was truncated",
    ):
        load_scenario(path)
    path.write_text('{"rules": [{"match": 1, "steps": [[{"text": "a"}]]}]}')
    with pytest.raises(
        ValueError, match=r"broken\.json.*Expected `str`, got `int` - at `\$\.rules\[0\]\.match`"
    ):
        load_scenario(path)


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "nope.json")


def test_validation_error_is_not_leaked() -> None:
    with pytest.raises(ValueError) as info:
        load_scenario(b'{"rules": 5}')
    assert not isinstance(info.value, msgspec.ValidationError)


# --- prompt and step --------------------------------------------------------------------


def test_prompt_skips_trailing_system_message_and_reminders() -> None:
    msgs = [user(REMINDER, "Create a haiku file"), system_msg()]
    assert prompt_text(msgs) == "Create a haiku file"
    assert step_index(msgs) == 0


def test_prompt_string_content_and_empty() -> None:
    assert prompt_text([{"role": "user", "content": "plain"}]) == "plain"
    assert prompt_text([]) == ""
    assert prompt_text([user(REMINDER)]) == ""


def test_prompt_is_last_text_block() -> None:
    # After an API error the CLI merges the failed prompt and the new one.
    assert prompt_text([user(REMINDER, "fail please\n", "hello")]) == "hello"


def test_tool_results_are_not_prompt_and_steps_count_assistants() -> None:
    msgs = [
        user(REMINDER, "write a file"),
        system_msg(),
        assistant(),
        tool_result(),
        assistant(),
        tool_result(),
    ]
    assert prompt_text(msgs) == "write a file"
    assert step_index(msgs) == 2


def test_new_prompt_resets_the_step() -> None:
    msgs = [
        user("write a file"),
        assistant(),
        tool_result(),
        assistant("done"),
        user("hello again"),
    ]
    assert prompt_text(msgs) == "hello again"
    assert step_index(msgs) == 0


def test_find_cwd() -> None:
    assert find_cwd(request(user("hi"), system_msg())) == "/work/space"
    # Older CLIs: in the system prompt, string content.
    body = request(user("hi"), system="<env>\nWorking directory: /old/cwd\nPlatform: linux\n</env>")
    assert find_cwd(body) == "/old/cwd"
    body = request(user("hi"), system=[{"type": "text", "text": "Working directory: /a"}])
    assert find_cwd(body) == "/a"
    assert find_cwd(request(user("hi"), {"role": "system", "content": ENV})) == "/work/space"
    assert find_cwd(request(user("hi"))) is None


def test_substitute_leaves_other_braces() -> None:
    value = {"a": "{cwd}/x", "b": ["{cwd}", 3, {"c": "{ json: {cwd} }"}], "d": None}
    assert substitute(value, {"cwd": "/w"}) == {
        "a": "/w/x",
        "b": ["/w", 3, {"c": "{ json: /w }"}],
        "d": None,
    }


# --- plan_reply ---------------------------------------------------------------------


def test_first_matching_rule_wins(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("Hello, write something"), system_msg()))
    assert plan.rule == "greet"
    assert [b.kind for b in plan.blocks] == ["thinking", "text"]
    assert plan.usage["input_tokens"] == 12 and plan.usage["output_tokens"] == 7
    assert all(b.chunk == 8 and b.delay == 0.0 for b in plan.blocks)


def test_default_reply_and_estimated_usage(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("what?")), request_size=4000)
    assert plan.rule is None
    assert [b.text for b in plan.blocks] == ["I am a scripted stand-in model."]
    assert plan.usage["input_tokens"] == 1000
    assert plan.usage["output_tokens"] == len("I am a scripted stand-in model.") // 4


def test_tool_step_then_next_step_then_finished(scenario: Scenario) -> None:
    first = request(user(REMINDER, "please write"), system_msg())
    plan = plan_reply(scenario, first, lambda: "toolu_fixed")
    assert plan.rule == "write" and plan.step == 0
    tool = plan.blocks[1].tool_use
    assert tool == ToolUseSpec(
        name="Write", input={"file_path": "/work/space/a.txt", "content": "{x}\n"}, id="toolu_fixed"
    )
    assert all(b.delay == 0.5 and b.chunk == 16 for b in plan.blocks)
    assert stop_reason(plan.blocks) == "tool_use"

    second = request(user(REMINDER, "please write"), system_msg(), assistant(), tool_result())
    plan = plan_reply(scenario, second)
    assert plan.step == 1 and [b.text for b in plan.blocks] == ["Done: please write"]
    assert stop_reason(plan.blocks) == "end_turn"

    third = request(user("please write"), assistant(), tool_result(), assistant(), tool_result())
    assert [b.text for b in plan_reply(scenario, third).blocks] == ["(scenario finished)"]


def test_tool_ids_are_generated_when_missing(scenario: Scenario) -> None:
    body = request(user("write"), system_msg())
    ids = [tool_use(plan_reply(scenario, body).blocks[1]).id for _ in range(2)]
    assert ids == [
        "toolu_scripted_1",
        "toolu_scripted_1",
    ]  # fresh counter per call without a supplier
    sc = load_scenario(
        {"rules": [{"match": "", "steps": [[{"tool_use": {"name": "Bash", "id": "toolu_mine"}}]]}]}
    )
    assert tool_use(plan_reply(sc, body).blocks[0]).id == "toolu_mine"


def test_cwd_placeholder_is_left_when_unknown(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("write")))
    assert tool_use(plan.blocks[1]).input["file_path"] == "{cwd}/a.txt"


def test_error_plan(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("server overloaded?")))
    assert plan.error is not None and plan.error.status == 529 and plan.error.retry is False
    assert plan.blocks == []


def test_side_call_gets_side_reply(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("hello"), tools=None))
    assert plan.side and plan.rule is None
    assert [b.text for b in plan.blocks] == ["Scripted title"]
    assert plan_reply(scenario, request(user("hello"), tools=[])).side


# How CLI 2.1.330 asks for a compaction (/compact, or automatically): the conversation so far,
# then a user message with the instructions (cut short here).
COMPACT_ASK = (
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n"
    "Your task is to create a detailed summary of the conversation so far, paying close "
    "attention to the user's explicit requests and your previous actions.\n"
    "REMINDER: write the summary in plain text only."
)


def test_a_compaction_request_gets_a_summary_of_the_prompts_whatever_the_rules_say(
    scenario: Scenario,
) -> None:
    body = request(
        user(REMINDER, "hello"),
        system_msg(),
        assistant("Hello!"),
        user("write  it\n  now"),
        assistant("Done."),
        {"role": "user", "content": COMPACT_ASK},
    )
    assert scenario.rule_for(prompt_text(body["messages"])) is not None, "a rule would match"

    plan = plan_reply(scenario, body)

    assert plan.compaction and plan.error is None and not plan.side
    (block,) = plan.blocks
    assert block.text == (
        "<analysis>\nThe scripted stand-in model summarises the conversation as its scenario "
        "says.\n</analysis>\n\n<summary>\n1. Primary Request and Intent:\n"
        "   - hello\n   - write it now\n\n"
        "2. Pending Tasks:\n   - None: every request was answered.\n\n"
        "3. Current Work:\n   The last request was answered; nothing is under way.\n</summary>"
    )
    assert block.chunk == scenario.chunk and plan.usage["output_tokens"] > 1


def test_a_scenarios_compact_summary_fills_in_prompts_and_cwd_also_without_tools() -> None:
    sc = load_scenario({"compact_summary": "Worked in {cwd} on:\n{prompts}", "chunk": 4})
    long_prompt = "fix the " + "very " * 60 + "long bug"
    body = request(
        user(long_prompt),
        system_msg(),
        assistant(),
        user(COMPACT_ASK),
        tools=None,
    )

    plan = plan_reply(sc, body)

    assert plan.compaction and plan.side
    text = plan.blocks[0].text or ""
    summary = text[text.index("<summary>") :]
    cut = long_prompt[:199] + "…"  # each prompt on one line of at most 200 characters
    assert summary == f"<summary>\nWorked in /work/space on:\n   - {cut}\n</summary>"
    assert plan.blocks[0].chunk == 4


def test_a_prompt_that_asks_for_a_summary_is_no_compaction_request(scenario: Scenario) -> None:
    plan = plan_reply(scenario, request(user("hello, create a detailed summary of the repo")))
    assert not plan.compaction and plan.rule == "greet"
    assert plan_reply(scenario, request(user(COMPACT_ASK), tools=None)).blocks[0].text != (
        "Scripted title"
    )


def test_block_pacing_overrides_rule_and_scenario() -> None:
    sc = load_scenario(
        {
            "chunk": 3,
            "delay": 0.1,
            "rules": [
                {
                    "match": "",
                    "chunk": 5,
                    "steps": [[{"text": "a"}, {"text": "b", "chunk": 0, "delay": 0}]],
                }
            ],
        }
    )
    a, b = plan_reply(sc, request(user("x"))).blocks
    assert (a.chunk, a.delay) == (5, 0.1)
    assert (b.chunk, b.delay) == (0, 0)


# --- SSE ---------------------------------------------------------------------------


def test_split_chunks() -> None:
    assert split_chunks("abcdefg", 3) == ["abc", "def", "g"]
    assert split_chunks("abc", 0) == ["abc"]
    assert split_chunks("", 4) == [""]
    assert "".join(split_chunks("héllo wörld ✓", 2)) == "héllo wörld ✓"


def _blocks() -> list[Block]:
    return [
        Block(thinking="Let me think.", chunk=5, delay=0.0),
        Block(text="Hello world!", chunk=5, delay=0.25),
        Block(
            tool_use=ToolUseSpec(
                name="Write", input={"file_path": "/w/a.txt", "content": "x\n"}, id="toolu_9"
            ),
            chunk=10,
        ),
    ]


def test_stream_event_sequence() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 20,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 0,
    }
    events = stream_events(_blocks(), message_id="msg_1", model="m", usage=usage)
    names = [e.event for e in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert all(e.data["type"] == e.event for e in events)
    start = events[0].data["message"]
    assert start["id"] == "msg_1" and start["role"] == "assistant" and start["content"] == []
    assert start["usage"]["input_tokens"] == 10 and start["usage"]["cache_read_input_tokens"] == 3
    assert events[-2].data["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert events[-2].data["usage"] == {"output_tokens": 20}
    assert names.count("ping") == 1 and names.index("ping") == 2

    # Per index: start, deltas, stop, in order, indices ascending.
    by_index: dict[int, list[SseEvent]] = {}
    for e in events:
        if "index" in e.data:
            by_index.setdefault(e.data["index"], []).append(e)
    assert sorted(by_index) == [0, 1, 2]
    for evs in by_index.values():
        assert evs[0].event == "content_block_start" and evs[-1].event == "content_block_stop"
        assert {e.event for e in evs[1:-1]} == {"content_block_delta"}

    thinking = [e.data["delta"] for e in by_index[0][1:-1]]
    assert by_index[0][0].data["content_block"] == {
        "type": "thinking",
        "thinking": "",
        "signature": "",
    }
    assert (
        "".join(d["thinking"] for d in thinking if d["type"] == "thinking_delta") == "Let me think."
    )
    assert thinking[-1]["type"] == "signature_delta" and thinking[-1]["signature"]

    text = [e for e in by_index[1][1:-1]]
    assert [e.data["delta"]["text"] for e in text] == ["Hello", " worl", "d!"]
    assert all(e.delay == 0.25 for e in text)

    tool = by_index[2]
    assert tool[0].data["content_block"] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "Write",
        "input": {},
    }
    partial = "".join(e.data["delta"]["partial_json"] for e in tool[1:-1])
    assert len(tool) > 3 and json.loads(partial) == {"file_path": "/w/a.txt", "content": "x\n"}


def test_stop_reason_end_turn() -> None:
    events = stream_events([Block(text="hi", chunk=0)], message_id="m", model="m", usage={})
    assert events[-2].data["delta"]["stop_reason"] == "end_turn"
    assert [e.event for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_encode_event() -> None:
    raw = encode_event(SseEvent("content_block_stop", {"type": "content_block_stop", "index": 0}))
    assert raw == b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    assert b"\n" not in encode_event(SseEvent("x", {"t": "a\nb"})).split(b"data: ")[1][:-2]


def test_message_body_and_error_body() -> None:
    body = message_body(
        _blocks(), message_id="msg_2", model="m", usage={"input_tokens": 1, "output_tokens": 2}
    )
    assert body["stop_reason"] == "tool_use" and body["type"] == "message"
    assert [c["type"] for c in body["content"]] == ["thinking", "text", "tool_use"]
    assert body["content"][2]["input"]["file_path"] == "/w/a.txt"
    assert body["usage"]["output_tokens"] == 2
    assert error_body("overloaded_error", "Overloaded") == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


# --- wait_for_prompt ----------------------------------------------------------------------


def test_a_wait_block_holds_the_next_event_and_is_no_content_block() -> None:
    scenario = load_scenario(
        {
            "default": [
                [
                    {"text": "first half", "chunk": 0},
                    {"wait_for_prompt": "(?i)other", "timeout": 5},
                    {"wait_for_prompt": "third"},
                    {"text": "second half", "chunk": 0},
                    {"wait_for_prompt": "last"},
                ]
            ]
        }
    )
    step = scenario.default[0]
    assert [b.kind for b in step] == ["text", *["wait_for_prompt"] * 2, "text", "wait_for_prompt"]
    assert [b.is_content for b in step] == [True, False, False, True, False]
    assert (step[1].wait_timeout, step[2].wait_timeout) == (5, DEFAULT_WAIT_TIMEOUT)

    events = stream_events(step, message_id="m", model="m", usage={})

    held = {e.event + str(e.data.get("index", "")): e.waits for e in events if e.waits}
    assert held == {"content_block_start1": step[1:3], "message_delta": step[4:]}
    starts = [e.data for e in events if e.event == "content_block_start"]
    assert [(d["index"], d["content_block"]["type"]) for d in starts] == [(0, "text"), (1, "text")]
    body = message_body(step, message_id="m", model="m", usage={})
    assert body["content"] == [
        {"type": "text", "text": "first half"},
        {"type": "text", "text": "second half"},
    ]
    assert body["stop_reason"] == "end_turn"


def test_error_event() -> None:
    event = error_event("invalid_request_error", "no")
    assert encode_event(event) == (
        b'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error",'
        b'"message":"no"}}\n\n'
    )
