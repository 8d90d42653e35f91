"""How a turn ended: the CLI's ``result`` line turned into ``claude/turnEnded`` fields.

Clients should not have to parse ``result`` lines (their shape changes between CLI
versions, and an interrupted turn reports an internal ``[ede_diagnostic]`` text). The
daemon knows more than the line says: whether it interrupted the turn itself, and how
long the turn waited for the user's permission decisions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from . import wire
from .api import TurnError, TurnOutcome, TurnUsage

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


def judge(line: wire.ResultLine, interrupted: bool, previous_total: float) -> Outcome:
    """Classify a ``result`` line.

    ``interrupted``: the daemon sent ``interrupt`` during this turn. ``previous_total``:
    the CLI's running cost at the last result, for CLIs that report only the total.
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
    if line.api_error_status is not None or reason == "api_error":
        error = TurnError(
            kind="api",
            message=line.result or f"API error {line.api_error_status}",
            status=line.api_error_status,
        )
    else:
        message = line.result or "; ".join(line.errors) or f"the turn failed ({line.subtype})"
        error = TurnError(kind="execution", message=message)
    return Outcome("error", cost, usage, error)
