"""A prompt's stop reason, read from the CLI's ``result`` line.

(The context meter is the channel's own, ``claude_sidecar.channel.meter``: each ``TurnEnded``
carries its reading.) Only ``result`` lines are decoded, into a struct of the two fields
read (a cheap byte scan passes the others over).
"""

from __future__ import annotations

import msgspec


class _Result(msgspec.Struct):
    type: str = ""
    stop_reason: str | None = None


_result = msgspec.json.Decoder(_Result).decode


class StopReason:
    """The stop reason of one session's last turn, from its CLI lines."""

    def __init__(self) -> None:
        self._reason: str | None = None

    def see(self, raw: bytes) -> None:
        """Note the stop reason a ``result`` line reports."""
        if b'"result"' not in raw:
            return
        try:
            line = _result(raw)
        except msgspec.MsgspecError:
            return
        if line.type == "result":
            self._reason = line.stop_reason

    def take(self) -> str | None:
        """The stop reason of the turn that just ended (once: the next turn has its own)."""
        reason, self._reason = self._reason, None
        return reason
