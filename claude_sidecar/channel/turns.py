"""A channel's turns: its state machine, and how each turn ended (``claude/turnEnded``).

Clients should not have to parse ``result`` lines (their shape changes between CLI
versions, and an interrupted turn reports an internal ``[ede_diagnostic]`` text). The
daemon knows more than the line says: whether it interrupted the turn itself, and how
long the turn waited for the user's permission decisions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from claude_sidecar.cli import wire
from claude_sidecar.cli.signin import CLI_AUTH_FAILED, auth_required
from claude_sidecar.feed.events import TurnEnded
from claude_sidecar.protocol.api import (
    ChannelState,
    ContextReading,
    TurnError,
    TurnOutcome,
    TurnUsage,
)
from claude_sidecar.protocol.errors import process_end

log = logging.getLogger(__name__)

# Result subtypes that name their own outcome.
_LIMITS: dict[str, TurnOutcome] = {
    "error_max_turns": "maxTurns",
    "error_max_budget_usd": "maxBudget",
}


@dataclass
class TurnClock:
    """The running turn's start and the time it spent waiting for permission answers."""

    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False
    _waiting_since: float | None = None
    _waited: float = 0.0

    def waiting(self, on: bool) -> None:
        """Note that the turn started (``on``) or stopped waiting for the user."""
        now = time.monotonic()
        if on and self._waiting_since is None:
            self._waiting_since = now
        elif not on and self._waiting_since is not None:
            self._waited += now - self._waiting_since
            self._waiting_since = None

    def waited_ms(self) -> int:
        """Milliseconds spent waiting for permission answers so far."""
        self.waiting(False)
        return round(self._waited * 1000)

    def elapsed_ms(self) -> int:
        return round((time.monotonic() - self.started) * 1000)


@dataclass(frozen=True)
class Outcome:
    """What ``claude/turnEnded`` says about a finished turn."""

    outcome: TurnOutcome
    cost_usd: float
    usage: TurnUsage
    error: TurnError | None = None


def judge(
    line: wire.ResultLine,
    interrupted: bool,
    previous_total: float,
    api_error: wire.ApiErrorMessage | None = None,
) -> Outcome:
    """Classify a ``result`` line.

    ``interrupted``: the daemon sent ``interrupt`` during this turn. ``previous_total``:
    the CLI's running cost at the last result, for CLIs that report only the total.
    ``api_error``: the turn's synthetic error message, if the CLI sent one.
    """
    usage = TurnUsage(
        input_tokens=line.usage.input_tokens,
        output_tokens=line.usage.output_tokens,
        cache_creation_input_tokens=line.usage.cache_creation_input_tokens,
        cache_read_input_tokens=line.usage.cache_read_input_tokens,
    )
    if line.model_usage_since_last_result is not None:
        cost = sum(m.costUSD for m in line.model_usage_since_last_result.values())
    else:
        cost = max(0.0, line.total_cost_usd - previous_total)
    reason = line.terminal_reason or ""
    if line.subtype in _LIMITS:
        return Outcome(_LIMITS[line.subtype], cost, usage)
    if reason.startswith("aborted") or (interrupted and line.is_error):
        return Outcome("interrupted", cost, usage)
    if not line.is_error:
        return Outcome("success", cost, usage)
    if api_error is not None and api_error.error == CLI_AUTH_FAILED:
        # CLI 2.1.233 gives the status on the result line only.
        status = api_error.api_error_status or line.api_error_status
        failed = auth_required(api_error.text, status)
        error = TurnError(
            kind="authRequired",
            message=failed.message,
            status=status,
            code=failed.code,
            data=failed.data,
        )
    elif line.api_error_status is not None or reason == "api_error":
        error = TurnError(
            kind="api",
            message=line.result or f"API error {line.api_error_status}",
            status=line.api_error_status,
        )
    else:
        message = line.result or "; ".join(line.errors) or f"the turn failed ({line.subtype})"
        error = TurnError(kind="execution", message=message)
    return Outcome("error", cost, usage, error)


def read_api_error(raw: bytes, channel_id: str) -> wire.ApiErrorMessage | None:
    """A main-conversation ``assistant`` line as a synthetic API error message; None when it
    is not one (or does not read as one)."""
    try:
        said = wire.api_error_message_decoder.decode(raw)
    except msgspec.MsgspecError as e:
        log.warning("channel %s: unexpected API error message (%s)", channel_id, e)
        return None
    return said if said.is_api_error_message else None


def read_result(raw: bytes, channel_id: str) -> wire.ResultLine:
    """A ``result`` line, typed; one that does not read as one ends its turn as an error."""
    try:
        return wire.result_decoder.decode(raw)
    except msgspec.MsgspecError as e:
        log.warning("channel %s: unexpected result line (%s)", channel_id, e)
        return wire.ResultLine(is_error=True, result=f"unreadable result line: {e}")


class TurnTracker:
    """A channel's state machine and its turns, handed to the next CLI on a restart.

    It knows which prompts the CLI has taken up (the CLI echoes each one when it does, so a
    result means idle only when none is left), how long the running turn waited for the
    user, and what the turns cost over every CLI process the channel had (and before it:
    a resumed or forked session's recorded turns). It does no I/O: the channel publishes
    what it returns.
    """

    def __init__(self, name: Callable[[], str], cost_before: float = 0.0) -> None:
        # The channel's id, for log lines.
        self._name = name
        self.state: ChannelState = "starting"
        # Cost before this CLI process: the channel's earlier ones (a restart), or the
        # recorded turns of the session it resumed or forked.
        self.cost_before = cost_before
        # What this process's turns cost, turn by turn. Not the CLI's running total: a CLI
        # that resumes a session may start it from the session's cost-state line (2.1.330
        # does, when its last process exited cleanly), 2.1.233 from 0.
        self._spent = 0.0
        # The CLI's running cost at the last result (a turn's cost for CLIs that report
        # only that).
        self._reported_cost = 0.0
        # The running turn (None when idle).
        self._turn: TurnClock | None = None
        # uuids of user messages the CLI has not taken up yet.
        self._queued: set[str] = set()
        # Those it took up in the running turn (turnEnded's messageIds when the CLI's
        # result line does not list them, as 2.1.233's does not).
        self._taken: list[str] = []
        # The running turn's synthetic API error message (why a failed turn failed).
        self._api_error: wire.ApiErrorMessage | None = None

    @property
    def total_cost(self) -> float:
        """What the channel's turns have cost so far, over every CLI process it had."""
        return self.cost_before + self._spent

    @property
    def running(self) -> bool:
        """Whether a turn is running (or a prompt waits for the CLI)."""
        return self._turn is not None

    def move(self, state: ChannelState) -> bool:
        """Enter ``state``; False if the channel was in it already."""
        if state == self.state:
            return False
        log.info("channel %s: %s -> %s", self._name(), self.state, state)
        if state in ("running", "awaitingPermission"):
            if self._turn is None:
                self._turn = TurnClock()
            self._turn.waiting(state == "awaitingPermission")
        self.state = state
        return True

    def queue(self, message_id: str) -> None:
        """A prompt was sent to the CLI."""
        self._queued.add(message_id)

    def is_queued(self, message_id: str | None) -> bool:
        """Whether ``message_id`` is a prompt the CLI has not taken up yet."""
        return message_id in self._queued

    def take_up(self, message_id: str) -> None:
        """The CLI echoed a queued prompt: it is part of the running turn."""
        self._queued.discard(message_id)
        self._taken.append(message_id)

    def api_error(self, message: wire.ApiErrorMessage | None) -> None:
        """The CLI reported a failed model request in the running turn."""
        if message is not None:
            self._api_error = message

    def interrupting(self) -> None:
        """The daemon is interrupting the running turn (its result is then no error)."""
        if self._turn is not None:
            self._turn.interrupted = True

    def result(
        self, line: wire.ResultLine, context: ContextReading | None = None
    ) -> tuple[TurnEnded, ChannelState]:
        """The turn a ``result`` line ends (``context``: the meter after it), and the state
        that follows it."""
        turn, self._turn = self._turn, None
        api_error, self._api_error = self._api_error, None
        judged = judge(line, turn is not None and turn.interrupted, self._reported_cost, api_error)
        self._reported_cost = line.total_cost_usd or self._reported_cost + judged.cost_usd
        self._spent += judged.cost_usd
        ended = TurnEnded(
            judged.outcome,
            duration_ms=line.duration_ms,
            permission_wait_ms=turn.waited_ms() if turn else 0,
            cost_usd=judged.cost_usd,
            total_cost_usd=self.total_cost,
            usage=judged.usage,
            num_turns=line.num_turns,
            message_ids=line.user_message_uuids or self._taken,
            error=judged.error,
            context=context,
        )
        self._taken = []
        # Messages sent mid-turn are either merged into the running turn (echoed before
        # this result) or start a turn of their own after it (not echoed yet).
        if self._queued:
            self._turn = TurnClock()
            return ended, self.state
        return ended, "idle"

    def exited(self, closing: bool, code: int | None, signal: int | None) -> TurnEnded | None:
        """The running turn, ended by the CLI's exit (None if none ran); ``closing``: the
        daemon closed the channel, so the turn was interrupted rather than failed."""
        turn, self._turn = self._turn, None
        self._taken = []
        self._api_error = None
        if turn is None:
            return None
        error = None
        outcome: TurnOutcome = "interrupted"
        if not closing:
            outcome = "error"
            error = TurnError(
                kind="cliExited",
                message=f"the CLI exited during the turn ({process_end(code, signal)})",
            )
        return TurnEnded(
            outcome,
            duration_ms=turn.elapsed_ms(),
            permission_wait_ms=turn.waited_ms(),
            cost_usd=0.0,
            total_cost_usd=self.total_cost,
            usage=TurnUsage(),
            error=error,
        )
