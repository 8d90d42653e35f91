"""A channel's turn tracker: its states, the prompts a turn takes up, and the cost it
carries across CLI processes. Pure: no CLI, no event loop."""

from __future__ import annotations

import msgspec
from claude_sidecar.channel.turns import TurnTracker
from claude_sidecar.cli import wire


def result(**fields: object) -> wire.ResultLine:
    return msgspec.json.decode(
        msgspec.json.encode({"type": "result", **fields}), type=wire.ResultLine
    )


def running(*prompts: str, cost_before: float = 0.0) -> TurnTracker:
    turns = TurnTracker(lambda: "ch-1", cost_before)
    turns.move("idle")
    for prompt in prompts:
        turns.queue(prompt)
    turns.move("running")
    return turns


def test_a_state_change_is_reported_once() -> None:
    turns = TurnTracker(lambda: "ch-1")

    assert turns.move("idle") is True
    assert turns.move("idle") is False
    assert turns.state == "idle" and not turns.running


def test_a_result_ends_the_turn_with_the_prompts_it_took_up_and_goes_idle() -> None:
    turns = running("p1")
    turns.take_up("p1")

    ended, state = turns.result(result(subtype="success", total_cost_usd=0.25))

    assert ended.outcome == "success" and ended.message_ids == ["p1"]
    assert state == "idle" and not turns.running
    assert not turns.is_queued("p1")


def test_a_prompt_still_queued_at_the_result_keeps_the_channel_running() -> None:
    turns = running("p1", "p2")
    turns.take_up("p1")

    ended, state = turns.result(result(subtype="success"))

    assert ended.message_ids == ["p1"]
    assert state == "running" and turns.running and turns.is_queued("p2")


def test_the_cli_listing_its_prompts_wins_over_the_echoes() -> None:
    turns = running("p1")
    turns.take_up("p1")

    ended, _ = turns.result(result(subtype="success", user_message_uuids=["p0", "p1"]))

    assert ended.message_ids == ["p0", "p1"]


def test_cost_adds_up_over_turns_and_over_restarts() -> None:
    turns = running("p1", cost_before=1.0)
    first, _ = turns.result(result(subtype="success", total_cost_usd=0.25))
    turns.move("running")
    second, _ = turns.result(result(subtype="success", total_cost_usd=0.75))

    assert first.cost_usd == 0.25 and second.cost_usd == 0.5
    assert second.total_cost_usd == turns.total_cost == 1.75


def test_a_resumed_sessions_cost_is_counted_once_when_the_cli_restored_its_running_total() -> None:
    # The session's recorded turns cost 0.5; the CLI (2.1.330) starts its running total from
    # the session's cost-state line too, and says what this turn cost on its own.
    turns = running("p1", cost_before=0.5)
    this_turn = {"claude-opus-5-5": {"costUSD": 0.25}}

    ended, _ = turns.result(
        result(subtype="success", total_cost_usd=0.75, model_usage_since_last_result=this_turn)
    )

    assert ended.cost_usd == 0.25 and ended.total_cost_usd == 0.75


def test_a_turn_the_daemon_interrupted_is_interrupted_not_failed() -> None:
    turns = running("p1")
    turns.interrupting()

    ended, _ = turns.result(result(subtype="error_during_execution", is_error=True))

    assert ended.outcome == "interrupted" and ended.error is None


def test_the_cli_exiting_mid_turn_fails_it_unless_the_channel_was_closing() -> None:
    crashed = running("p1").exited(closing=False, code=1, signal=None)
    closed = running("p1").exited(closing=True, code=None, signal=15)

    assert crashed is not None and crashed.outcome == "error"
    assert crashed.error is not None and crashed.error.kind == "cliExited"
    assert closed is not None and closed.outcome == "interrupted"
    assert TurnTracker(lambda: "ch-1").exited(closing=False, code=0, signal=None) is None
