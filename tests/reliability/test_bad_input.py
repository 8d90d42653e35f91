"""Random and malformed params to every claude/* method get JSON-RPC errors, never a crash.

One daemon serves every example (starting one per example would take minutes); after
the run it must still answer, and shutting it down must leave no CLI behind.
"""

from __future__ import annotations

import itertools
import string
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from claude_sidecar.protocol import api
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.env import isolated_env
from tests.harness import RawClient, pid_alive

METHODS = [m.name for m in api.METHODS]
FIELDS = sorted(
    {f.encode_name for m in api.METHODS for f in msgspec.structs.fields(m.params)}
    | {"type", "text", "mediaType"}
)
# Codes a bad request may get: invalid params, unknown channel or session, no pending
# permission request, (for the rare valid-looking request) a CLI that cannot start, and
# the shared daemon's methods refused by this private one (notShared).
EXPECTED_ERRORS = {-32602, -32001, -32004, -32005, -32008, -32009, -32012}

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.sampled_from(["", "/", "ch-1", "\udc80bad", "../../etc", "x" * 100_000])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
params = st.dictionaries(st.sampled_from(FIELDS), values, max_size=6) | values


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    home = tmp_path_factory.mktemp("home")
    # Nothing listens on port 9: a CLI a lucky example starts never reaches a model.
    client = RawClient(isolated_env(home, "http://127.0.0.1:9", PATH="/usr/bin:/bin"))
    client.initialize()
    yield client
    client.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
    client.reply_to("bye")
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(30) == 0
    deadline = time.monotonic() + 30
    while [p for p in seen_pids if pid_alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in seen_pids if pid_alive(p)] == [], "no CLI outlives the daemon"


ids = itertools.count(1)
seen_pids: list[int] = []
"""CLIs a lucky example managed to start (e.g. cwd "/"): checked dead after shutdown."""


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(METHODS) | st.text(string.ascii_letters + "/", max_size=20), raw=params
)
def test_any_params_get_an_answer_and_only_documented_errors(
    daemon: RawClient, method: str, raw: Any
) -> None:
    request_id = next(ids)
    daemon.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": raw})

    reply = daemon.reply_to(request_id)

    if "error" in reply:
        code = reply["error"]["code"]
        if method in METHODS:
            assert code in EXPECTED_ERRORS, reply
        else:
            assert code in (-32601, -32602) or code in EXPECTED_ERRORS, reply
        if code == -32602:
            assert reply["error"]["data"]["field"], "the field is named"
    elif isinstance(reply.get("result"), dict) and "pid" in reply["result"]:
        seen_pids.append(reply["result"]["pid"])


def test_the_daemon_still_serves_after_the_barrage(daemon: RawClient) -> None:
    daemon.send({"jsonrpc": "2.0", "id": "alive", "method": "claude/listChannels"})

    assert "channels" in daemon.reply_to("alive")["result"]
