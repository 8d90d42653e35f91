"""The context meter: how full a channel's context window is, read from the CLI's lines.

The main conversation's last model call was sent the whole context (its input, cache
reads and cache writes): those tokens, of the window the CLI's ``result`` line reports for
that call's model, are the meter (as in the CLI's own status line). Its output is left
out: an ``assistant`` line carries the usage of its message's start, before the output
was counted. The router hands this module the
``assistant`` and ``result`` lines it sees anyway; nothing is counted (``claude/contextUsage``
asks the CLI, which counts tokens through the API: ~26 calls on a session's first use).
Only the few fields read are decoded.
"""

from __future__ import annotations

import msgspec

from claude_sidecar.protocol.api import ContextReading


class _WindowOf(msgspec.Struct):
    contextWindow: int = 0


class _Result(msgspec.Struct):
    modelUsage: dict[str, _WindowOf] = {}


class _Tokens(msgspec.Struct):
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class _Reply(msgspec.Struct):
    model: str = ""
    usage: _Tokens = msgspec.field(default_factory=_Tokens)


class _Assistant(msgspec.Struct):
    message: _Reply = msgspec.field(default_factory=_Reply)


_result = msgspec.json.Decoder(_Result).decode
_assistant = msgspec.json.Decoder(_Assistant).decode


class ContextMeter:
    """One channel's context use: its main conversation's last model call, and the
    window of that call's model."""

    def __init__(self, reading: ContextReading | None = None) -> None:
        # The main conversation's last model call: its model and the tokens it took.
        self._model = ""
        self._tokens = reading.total_tokens if reading else 0
        self._window = reading.max_tokens if reading else 0

    def assistant(self, raw: bytes) -> None:
        """Note a main-conversation ``assistant`` line (a sub-agent's has its own context)."""
        try:
            said = _assistant(raw).message
        except msgspec.MsgspecError:
            return
        tokens = said.usage
        self._model = said.model
        self._tokens = (
            tokens.input_tokens
            + tokens.cache_creation_input_tokens
            + tokens.cache_read_input_tokens
        )

    def result(self, raw: bytes) -> None:
        """Note a ``result`` line: the context window of each model the turn used."""
        try:
            windows = {m: u.contextWindow for m, u in _result(raw).modelUsage.items()}
        except msgspec.MsgspecError:
            return
        window = windows.get(self._model) or max(windows.values(), default=0)
        if window:
            self._window = window

    @property
    def reading(self) -> ContextReading | None:
        """The context now (None until a model call and its window are known)."""
        if not self._tokens or not self._window:
            return None
        return ContextReading(
            total_tokens=self._tokens,
            max_tokens=self._window,
            percentage=round(100 * self._tokens / self._window, 2),
        )
