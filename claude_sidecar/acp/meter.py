"""What the context meter (``usage_update``) and a prompt's stop reason need of the CLI's
lines: the main conversation's last model call (its tokens are what the context holds),
and the result's stop reason and context window size.

Only ``assistant`` and ``result`` lines are decoded, into structs of the few fields read
(a cheap byte scan passes the others over).
"""

from __future__ import annotations

import msgspec


class _WindowOf(msgspec.Struct):
    contextWindow: int = 0


class _Result(msgspec.Struct):
    type: str = ""
    stop_reason: str | None = None
    modelUsage: dict[str, _WindowOf] = {}


class _Tokens(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class _Reply(msgspec.Struct):
    model: str = ""
    usage: _Tokens = msgspec.field(default_factory=_Tokens)


class _Assistant(msgspec.Struct):
    type: str = ""
    parent_tool_use_id: str | None = None
    message: _Reply = msgspec.field(default_factory=_Reply)


_result = msgspec.json.Decoder(_Result).decode
_assistant = msgspec.json.Decoder(_Assistant).decode


class ContextMeter:
    """One session's context use and its last turn's stop reason, from its CLI lines."""

    def __init__(self) -> None:
        # The main conversation's last model call: its model and the tokens it took.
        self._last_call: tuple[str, int] | None = None
        # The model's context window, as the CLI's result line reports it.
        self._window = 0
        self._stop_reason: str | None = None

    def see(self, raw: bytes) -> None:
        """Note what a CLI line says of the context or the turn's end."""
        if b'"assistant"' in raw:
            try:
                said = _assistant(raw)
            except msgspec.MsgspecError:
                return
            if said.type == "assistant" and said.parent_tool_use_id is None:
                tokens = said.message.usage
                self._last_call = (
                    said.message.model,
                    tokens.input_tokens
                    + tokens.cache_creation_input_tokens
                    + tokens.cache_read_input_tokens
                    + tokens.output_tokens,
                )
        elif b'"result"' in raw:
            try:
                line = _result(raw)
            except msgspec.MsgspecError:
                return
            if line.type == "result":
                self._stop_reason = line.stop_reason
                windows = {m: u.contextWindow for m, u in line.modelUsage.items()}
                model = self._last_call[0] if self._last_call else None
                self._window = windows.get(model or "") or max(windows.values(), default=0)

    def tokens(self) -> tuple[int, int] | None:
        """The context now: tokens used and the window's size (None: not known yet)."""
        if self._last_call is None or not self._window:
            return None
        return self._last_call[1], self._window

    def take_stop_reason(self) -> str | None:
        """The stop reason of the turn that just ended (once: the next turn has its own)."""
        reason, self._stop_reason = self._stop_reason, None
        return reason
