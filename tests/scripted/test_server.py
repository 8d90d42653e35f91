"""The HTTP server on its own, driven with http.client (no CLI)."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from claude_sidecar.scripted import ScriptedModel, load_scenario

SCENARIO = {
    "rules": [
        {"match": "slow", "delay": 0.5, "chunk": 1, "steps": [[{"text": "a very slow reply"}]]},
        {
            "match": "tool",
            "steps": [
                [{"tool_use": {"name": "Bash", "input": {"command": "ls"}}}],
                [{"text": "listed"}],
            ],
        },
        {
            "match": "overload",
            "steps": [
                [{"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}]
            ],
        },
        {"match": "retryable", "steps": [[{"error": {"status": 500, "retry": None}}]]},
    ],
    "default": [[{"text": "default reply"}]],
    "chunk": 4,
}
TOOLS: list[dict[str, Any]] = [{"name": "Bash", "input_schema": {"type": "object"}}]


def body(
    prompt: str,
    *,
    stream: bool = True,
    tools: list[dict[str, Any]] | None = TOOLS,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    b: dict[str, Any] = {
        "model": "claude-test",
        "stream": stream,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": prompt}]},
            *(extra or []),
        ],
    }
    if tools is not None:
        b["tools"] = tools
    return b


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(load_scenario(SCENARIO)) as m:
        yield m


def connect(model: ScriptedModel) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", model.port, timeout=5)


def post(
    conn: http.client.HTTPConnection, payload: Any, path: str = "/v1/messages?beta=true"
) -> http.client.HTTPResponse:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
    return conn.getresponse()


def parse_sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_url_and_health(model: ScriptedModel) -> None:
    assert model.url == f"http://127.0.0.1:{model.port}"
    conn = connect(model)
    conn.request("GET", "/")
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
    conn.request("HEAD", "/")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read() == b""


def test_not_started_has_no_url() -> None:
    with pytest.raises(RuntimeError):
        _ = ScriptedModel({}).url


def test_unknown_paths_are_404_json(model: ScriptedModel) -> None:
    conn = connect(model)
    resp = post(conn, {"x": 1}, "/v1/complete")
    assert resp.status == 404
    assert json.loads(resp.read())["error"]["type"] == "not_found_error"
    conn.request("GET", "/v1/models")
    resp = conn.getresponse()
    assert resp.status == 404 and json.loads(resp.read())["type"] == "error"
    assert model.requests == []


def test_bad_json_is_400(model: ScriptedModel) -> None:
    resp = post(connect(model), b"{nope")
    assert resp.status == 400
    assert json.loads(resp.read())["error"]["type"] == "invalid_request_error"


def test_count_tokens(model: ScriptedModel) -> None:
    resp = post(connect(model), body("x" * 400), "/v1/messages/count_tokens?beta=true")
    assert resp.status == 200
    assert json.loads(resp.read())["input_tokens"] > 100
    assert model.requests == []  # not a model call
    assert model.token_counts == 1 and model.wait_for_token_counts(1, timeout=30)
    assert not model.wait_for_token_counts(2, timeout=0.01), "no second count came"


def count_in_thread(model: ScriptedModel) -> tuple[threading.Thread, list[Any]]:
    """A ``count_tokens`` request made on a thread; its status (or error) lands in the list."""
    outcome: list[Any] = []

    def count() -> None:
        try:
            outcome.append(post(connect(model), body("x" * 40), "/v1/messages/count_tokens").status)
        except (OSError, http.client.HTTPException) as e:
            outcome.append(e)

    thread = threading.Thread(target=count, daemon=True)
    thread.start()
    return thread, outcome


def test_a_held_count_tokens_is_answered_once_released(model: ScriptedModel) -> None:
    model.hold_token_counts()
    thread, outcome = count_in_thread(model)
    assert model.wait_for_token_counts(1, timeout=30)
    assert outcome == [], "answered while held"

    model.hold_token_counts(False)

    thread.join(timeout=30)
    assert outcome == [200]


def test_stopping_the_model_ends_a_held_count_tokens_unanswered(model: ScriptedModel) -> None:
    model.hold_token_counts()
    thread, outcome = count_in_thread(model)
    assert model.wait_for_token_counts(1, timeout=30)

    model.stop()

    thread.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], (OSError, http.client.HTTPException))


def test_stream_is_chunked_sse_on_a_keep_alive_connection(model: ScriptedModel) -> None:
    conn = connect(model)
    for _ in range(2):  # the second request reuses the same connection
        resp = post(conn, body("hi"))
        assert resp.status == 200
        assert resp.getheader("Content-Type", "").startswith("text/event-stream")
        assert resp.getheader("Transfer-Encoding") == "chunked"
        events = parse_sse(resp.read())
        assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
        text = "".join(d["delta"]["text"] for name, d in events if name == "content_block_delta")
        assert text == "default reply"
        assert sum(1 for name, _ in events if name == "content_block_delta") == 4  # chunk 4
    assert len(model.requests) == 2


def test_non_streaming_gets_a_json_message(model: ScriptedModel) -> None:
    resp = post(connect(model), body("hi", stream=False))
    assert resp.status == 200 and resp.getheader("Content-Type") == "application/json"
    msg = json.loads(resp.read())
    assert msg["type"] == "message" and msg["role"] == "assistant" and msg["model"] == "claude-test"
    assert msg["content"] == [{"type": "text", "text": "default reply"}]
    assert msg["stop_reason"] == "end_turn" and msg["id"].startswith("msg_scripted_")


def test_side_calls_and_main_requests(model: ScriptedModel) -> None:
    conn = connect(model)
    msg = json.loads(post(conn, body("title please", stream=False, tools=None)).read())
    assert msg["content"][0]["text"] == "Scripted title"
    post(conn, body("hi")).read()
    assert [r["messages"][0]["content"][0]["text"] for r in model.requests] == [
        "title please",
        "hi",
    ]
    assert [r["messages"][0]["content"][0]["text"] for r in model.main_requests] == ["hi"]
    model.clear_requests()
    assert model.requests == []


def test_tool_use_steps_and_ids(model: ScriptedModel) -> None:
    conn = connect(model)
    events = parse_sse(post(conn, body("use a tool")).read())
    start = next(d for name, d in events if name == "content_block_start")
    assert start["content_block"]["id"] == "toolu_scripted_1"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    follow = [
        {"role": "assistant", "content": [dict(start["content_block"], input={"command": "ls"})]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_scripted_1", "content": "a\nb"}
            ],
        },
    ]
    events = parse_sse(post(conn, body("use a tool", extra=follow)).read())
    assert (
        "".join(d["delta"].get("text", "") for n, d in events if n == "content_block_delta")
        == "listed"
    )


def test_error_reply(model: ScriptedModel) -> None:
    conn = connect(model)
    resp = post(conn, body("overload"))
    assert resp.status == 529
    assert resp.getheader("x-should-retry") == "false"
    assert json.loads(resp.read()) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    resp = post(conn, body("retryable"))
    assert resp.status == 500 and resp.getheader("x-should-retry") is None
    assert json.loads(resp.read())["error"] == {"type": "api_error", "message": "Scripted error"}


def test_an_error_with_times_fails_that_often_then_plays_the_rest_of_the_step(
    model: ScriptedModel,
) -> None:
    model.set_scenario(
        {
            "rules": [
                {
                    "match": "busy",
                    "steps": [
                        [
                            {
                                "error": {
                                    "status": 529,
                                    "type": "overloaded_error",
                                    "retry": True,
                                    "times": 2,
                                }
                            },
                            {"text": "finally"},
                        ]
                    ],
                }
            ]
        }
    )
    conn = connect(model)

    replies = []
    for _ in range(3):
        response = post(conn, body("busy", stream=False))
        replies.append((response.status, json.loads(response.read())))

    assert [status for status, _ in replies] == [529, 529, 200]
    assert replies[0][1]["error"]["type"] == "overloaded_error"
    assert replies[2][1]["content"][0]["text"] == "finally"
    model.set_scenario(model.scenario)
    assert post(conn, body("busy", stream=False)).status == 529, "the count starts again"


def test_set_scenario_swaps_replies(model: ScriptedModel) -> None:
    conn = connect(model)
    model.set_scenario({"default": [[{"text": "swapped"}]]})
    msg = json.loads(post(conn, body("hi", stream=False)).read())
    assert msg["content"][0]["text"] == "swapped"
    with pytest.raises(ValueError):
        model.set_scenario({"default": []})


def test_chunked_request_body(model: ScriptedModel) -> None:
    conn = connect(model)
    data = json.dumps(body("hi", stream=False)).encode()
    conn.request("POST", "/v1/messages", body=iter([data[:10], data[10:]]), encode_chunked=True)
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["content"][0]["text"] == "default reply"


def test_concurrent_requests_are_all_recorded(model: ScriptedModel) -> None:
    def run(i: int) -> None:
        post(connect(model), body(f"hi {i}", stream=False)).read()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["messages"][0]["content"][0]["text"] for r in model.requests) == sorted(
        f"hi {i}" for i in range(20)
    )


def test_stop_is_prompt_with_an_open_stream_and_an_idle_connection() -> None:
    model = ScriptedModel(SCENARIO).start()
    idle = socket.create_connection(("127.0.0.1", model.port))  # an idle keep-alive client
    conn = connect(model)
    model.set_scenario(
        {
            "default": [
                [{"text": "a"}, {"wait_for_prompt": "^never$", "timeout": 600}, {"text": "b"}]
            ]
        }
    )
    resp = post(conn, body("held"))  # 10 minutes before it goes on, if left alone
    assert resp.status == 200
    resp.read(40)  # the stream has started
    t0 = time.monotonic()
    model.stop()
    # Far below the 600 s a stop that waited for the stream would take, and beyond any load.
    assert time.monotonic() - t0 < 30
    with pytest.raises(OSError):  # nobody listens any more
        socket.create_connection(("127.0.0.1", conn.port), timeout=1)
    idle.settimeout(2)
    assert idle.recv(10) == b""  # closed by the server
    model.stop()  # idempotent


def test_serve_blocks_until_interrupted_and_keeps_stdout_clean() -> None:
    code = (
        "import signal, sys\n"
        # A background shell may start us with SIGINT ignored; make Ctrl-C work.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from claude_sidecar.scripted import serve, DEMO_SCENARIO_PATH\n"
        "serve(DEMO_SCENARIO_PATH,\n"
        "      on_ready=lambda url: print('READY', url, file=sys.stderr, flush=True))\n"
        "print('RETURNED', file=sys.stderr, flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        assert line.startswith("READY http://127.0.0.1:"), line
        url = line.split()[1]
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out == b""
    assert b"RETURNED" in err


# --- wait_for_prompt ----------------------------------------------------------------------

HELD = {
    "rules": [
        {
            "match": "alpha",
            "steps": [
                [
                    {"text": "first half "},
                    {"wait_for_prompt": "beta", "timeout": 60},
                    {"text": "second half"},
                ]
            ],
        },
        {
            "match": "gamma",
            "steps": [[{"text": "never "}, {"wait_for_prompt": "^never$", "timeout": 0.2}]],
        },
    ],
    "default": [[{"text": "default reply"}]],
    "chunk": 0,
}


class RawStream:
    """A streaming request on a plain socket, so the test can look for what has (not)
    arrived yet without http.client's buffering in the way."""

    def __init__(self, model: ScriptedModel, prompt: str) -> None:
        data = json.dumps(body(prompt)).encode()
        self.sock = socket.create_connection(("127.0.0.1", model.port), timeout=30)
        self.sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
        )
        self.received = b""

    def read_until(self, marker: bytes) -> bytes:
        while marker not in self.received:
            more = self.sock.recv(65536)
            assert more, f"the stream ended without {marker!r}: {self.received!r}"
            self.received += more
        return self.received

    def nothing_more_within(self, seconds: float) -> bool:
        self.sock.settimeout(seconds)
        try:
            more = self.sock.recv(65536)
        except TimeoutError:
            return True
        finally:
            self.sock.settimeout(30)
        self.received += more
        return False


def test_a_held_stream_goes_on_once_a_request_with_the_awaited_prompt_arrives(
    model: ScriptedModel,
) -> None:
    model.set_scenario(HELD)
    held = RawStream(model, "alpha")
    held.read_until(b"first half")
    held.read_until(b"event: content_block_stop")

    assert held.nothing_more_within(0.3), "the stream went on before its prompt came"
    assert post(connect(model), body("beta")).read().count(b"default reply") == 1
    received = held.read_until(b"event: message_stop")

    assert b"second half" in received and b"event: error" not in received
    starts = received.count(b"event: content_block_start")
    assert starts == 2, "the wait block is no content block of its own"


def test_a_held_stream_goes_on_once_the_test_releases_it(model: ScriptedModel) -> None:
    model.set_scenario(HELD)
    held = RawStream(model, "alpha")
    held.read_until(b"event: content_block_stop")

    model.release("beta")
    received = held.read_until(b"event: message_stop")

    assert b"second half" in received and b"event: error" not in received
    assert len(model.requests) == 1, "a release is no request"


def test_a_prompt_received_earlier_counts_and_so_does_the_requests_own(
    model: ScriptedModel,
) -> None:
    model.set_scenario(HELD)
    conn = connect(model)
    post(conn, body("beta")).read()
    events = parse_sse(post(conn, body("alpha")).read())
    text = "".join(d["delta"]["text"] for name, d in events if name == "content_block_delta")
    assert text == "first half second half"

    model.set_scenario({"default": [[{"text": "a"}, {"wait_for_prompt": "me"}, {"text": "b"}]]})
    events = parse_sse(post(conn, body("waits for me")).read())
    assert [name for name, _ in events].count("content_block_start") == 2


def test_a_wait_that_times_out_ends_the_stream_with_an_error_event(model: ScriptedModel) -> None:
    model.set_scenario(HELD)
    conn = connect(model)
    events = parse_sse(post(conn, body("gamma")).read())

    assert [name for name, _ in events][-3:] == [
        "content_block_delta",
        "content_block_stop",
        "error",
    ]
    error = events[-1][1]["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"] == (
        "scripted model: no request with a prompt matching '^never$' arrived within 0.2s "
        "(wait_for_prompt)"
    )
    response = post(conn, body("gamma", stream=False))
    assert response.status == 500 and response.getheader("x-should-retry") == "false"
    assert "'^never$'" in json.loads(response.read())["error"]["message"]


def test_only_main_requests_since_the_scenario_was_set_or_the_requests_cleared_count(
    model: ScriptedModel,
) -> None:
    short = {"default": [[{"text": "a"}, {"wait_for_prompt": "beta", "timeout": 0.2}]]}
    conn = connect(model)
    post(conn, body("beta", tools=None)).read()
    model.set_scenario(short)
    assert b"event: error" in post(conn, body("x")).read(), "a side call does not count"
    post(conn, body("beta")).read()
    model.set_scenario(short)
    assert b"event: error" in post(conn, body("x")).read(), "nor one before set_scenario"
    post(conn, body("beta")).read()
    assert b"event: error" not in post(conn, body("x")).read()
    model.clear_requests()
    assert b"event: error" in post(conn, body("x")).read(), "nor one before clear_requests"


def test_stop_ends_a_held_stream() -> None:
    model = ScriptedModel(HELD).start()
    held = RawStream(model, "alpha")
    held.read_until(b"event: content_block_stop")

    model.stop()  # returns although the wait has 60 s to go (the test's timeout is 120 s)

    while more := held.sock.recv(65536):
        held.received += more
    assert b"second half" not in held.received and b"event: error" not in held.received
