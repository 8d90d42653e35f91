"""A `result` line becomes a turn outcome the client can show without parsing it."""

from __future__ import annotations

import msgspec
import pytest
from claude_sidecar.channel.turns import TurnClock, judge
from claude_sidecar.cli import wire


def result(**fields: object) -> wire.ResultLine:
    return msgspec.json.decode(
        msgspec.json.encode({"type": "result", **fields}), type=wire.ResultLine
    )


def test_a_finished_turn_is_a_success_with_its_own_cost() -> None:
    line = result(
        subtype="success",
        is_error=False,
        total_cost_usd=0.3,
        model_usage_since_last_result={"opus": {"costUSD": 0.1}, "haiku": {"costUSD": 0.02}},
        usage={"input_tokens": 10, "output_tokens": 3},
    )

    judged = judge(line, interrupted=False, previous_total=0.18)

    assert judged.outcome == "success" and judged.error is None
    assert abs(judged.cost_usd - 0.12) < 1e-12
    assert judged.usage.input_tokens == 10 and judged.usage.output_tokens == 3


def test_without_a_per_turn_breakdown_the_cost_is_the_growth_of_the_total() -> None:
    judged = judge(result(subtype="success", total_cost_usd=0.5), False, previous_total=0.2)

    assert abs(judged.cost_usd - 0.3) < 1e-12


def test_an_aborted_turn_is_interrupted_and_hides_the_diagnostic() -> None:
    line = result(
        subtype="error_during_execution",
        is_error=True,
        terminal_reason="aborted_streaming",
        errors=["[ede_diagnostic] result_type=user last_content_type=n/a"],
    )

    judged = judge(line, interrupted=False, previous_total=0.0)

    assert judged.outcome == "interrupted" and judged.error is None


def test_an_error_after_the_daemons_interrupt_is_interrupted() -> None:
    line = result(subtype="error_during_execution", is_error=True, terminal_reason="other")

    assert judge(line, interrupted=True, previous_total=0.0).outcome == "interrupted"


def test_an_api_failure_is_an_error_of_kind_api_with_the_status() -> None:
    line = result(
        subtype="success",
        is_error=True,
        terminal_reason="api_error",
        api_error_status=529,
        result="API Error: 529 Overloaded",
    )

    judged = judge(line, interrupted=False, previous_total=0.0)

    assert judged.outcome == "error"
    assert judged.error is not None and judged.error.kind == "api"
    assert judged.error.status == 529 and judged.error.message == "API Error: 529 Overloaded"


def test_limits_have_their_own_outcomes() -> None:
    assert judge(result(subtype="error_max_turns", is_error=True), False, 0).outcome == "maxTurns"
    assert (
        judge(result(subtype="error_max_budget_usd", is_error=True), False, 0).outcome
        == "maxBudget"
    )


def test_another_failure_is_an_execution_error_with_the_clis_words() -> None:
    line = result(subtype="error_during_execution", is_error=True, errors=["disk full"])

    judged = judge(line, interrupted=False, previous_total=0.0)

    assert judged.error is not None and judged.error.kind == "execution"
    assert judged.error.message == "disk full"


def test_the_clock_adds_up_each_wait_for_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("claude_sidecar.channel.turns.time.monotonic", lambda: now[0])
    clock = TurnClock(started=100.0)

    for waiting, at in ((True, 101.0), (False, 102.5), (True, 104.0), (False, 104.25)):
        now[0] = at
        clock.waiting(waiting)
    now[0] = 110.0

    assert clock.waited_ms() == 1750
    assert clock.elapsed_ms() == 10000
