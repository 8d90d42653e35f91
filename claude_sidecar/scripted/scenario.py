"""The scenario format: what the scripted stand-in model says, and when.

A scenario is a JSON document (see ``docs/scripted-model.md``) decoded into the
msgspec Structs below.  Decoding validates everything up front (unknown keys,
block shapes, regexes), so a bad scenario fails at load time with the JSON path
of the offending value, never halfway through a test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "Block",
    "ErrorSpec",
    "Rule",
    "Scenario",
    "Step",
    "ToolUseSpec",
    "Usage",
    "load_scenario",
]

# Defaults shared by the server and the docs.
DEFAULT_CHUNK = 16
DEFAULT_REPLY_TEXT = "I am a scripted stand-in model."
DEFAULT_SIDE_REPLY = "Scripted title"
DEFAULT_FINISHED_TEXT = "(scenario finished)"
DEFAULT_WAIT_TIMEOUT = 30.0
# What a compaction request is answered inside <summary> tags; {prompts} lists the
# conversation's prompts, one "   - ..." line each.
DEFAULT_COMPACT_SUMMARY = (
    "1. Primary Request and Intent:\n{prompts}\n\n"
    "2. Pending Tasks:\n   - None: every request was answered.\n\n"
    "3. Current Work:\n   The last request was answered; nothing is under way."
)

# The block kinds that become a content block of the reply.
CONTENT_KINDS = ("text", "thinking", "tool_use")


class Usage(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Token counts reported for a reply.  Unset counts are estimated from sizes."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class ToolUseSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A tool call the model makes.  ``id`` defaults to ``toolu_scripted_<n>``."""

    name: str
    input: dict[str, Any] = {}
    id: str | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("tool_use.name must not be empty")


class ErrorSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """An HTTP error answer with an Anthropic error body.

    ``retry`` sets the ``x-should-retry`` response header.  The default
    ``False`` makes the CLI give up at once; ``True`` or ``None`` (no header:
    the client's own policy, which retries 408/409/429/5xx/529) make CLI 2.1.x
    retry up to 10 times with exponential backoff, over a minute in all,
    because the same step is played again on every retry.
    """

    status: int = 500
    type: str = "api_error"
    message: str = "Scripted error"
    retry: bool | None = False
    # Fail only the first `times` requests for this step; later ones get the rest of it.
    times: int | None = None

    def __post_init__(self) -> None:
        if not 400 <= self.status <= 599:
            raise ValueError(f"error.status must be 400..599, got {self.status}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"error.times must be at least 1, got {self.times}")


class Block(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One block of a reply; exactly one of the kind keys is set.

    ``text``, ``thinking`` and ``tool_use`` are content blocks; ``error``
    answers with an HTTP error instead; ``wait_for_prompt`` sends nothing and
    holds the reply at that point until a main request whose prompt matches
    the regex has been received (for at most ``timeout`` seconds).

    ``chunk`` / ``delay`` override the rule's and scenario's values for this
    block only.  ``signature`` is the thinking signature (a fixed placeholder by
    default: the CLI stores it but only the real API checks it).
    """

    text: str | None = None
    thinking: str | None = None
    tool_use: ToolUseSpec | None = None
    error: ErrorSpec | None = None
    wait_for_prompt: str | None = None
    signature: str | None = None
    timeout: float | None = None
    chunk: int | None = None
    delay: float | None = None

    def __post_init__(self) -> None:
        kinds = [
            k for k in (*CONTENT_KINDS, "error", "wait_for_prompt") if getattr(self, k) is not None
        ]
        if len(kinds) != 1:
            raise ValueError(
                "a block needs exactly one of `text`, `thinking`, `tool_use`, `error`, "
                "`wait_for_prompt`" + (f" (got {', '.join(kinds)})" if kinds else "")
            )
        if self.signature is not None and self.thinking is None:
            raise ValueError("`signature` is only allowed on a `thinking` block")
        if self.wait_for_prompt is not None:
            try:
                re.compile(self.wait_for_prompt)
            except re.error as e:
                raise ValueError(f"`wait_for_prompt` is not a valid Python regex: {e}") from None
        if self.timeout is not None:
            if self.wait_for_prompt is None:
                raise ValueError("`timeout` is only allowed on a `wait_for_prompt` block")
            if self.timeout <= 0:
                raise ValueError(f"`timeout` must be > 0 seconds, got {self.timeout}")
        _check_pacing(self.chunk, self.delay)

    @property
    def kind(self) -> str:
        """The block kind: ``text``, ``thinking``, ``tool_use``, ``wait_for_prompt`` or
        ``error``."""
        for k in (*CONTENT_KINDS, "wait_for_prompt"):
            if getattr(self, k) is not None:
                return k
        return "error"

    @property
    def is_content(self) -> bool:
        """True for the kinds that become a content block of the message."""
        return self.kind in CONTENT_KINDS

    @property
    def wait_timeout(self) -> float:
        """How long a ``wait_for_prompt`` block waits at most, in seconds."""
        return DEFAULT_WAIT_TIMEOUT if self.timeout is None else self.timeout


# One model reply: the blocks of one assistant message (or a single error).
Step = list[Block]


def _check_pacing(chunk: int | None, delay: float | None) -> None:
    if chunk is not None and chunk < 0:
        raise ValueError(f"`chunk` must be >= 0 (0 = whole text in one delta), got {chunk}")
    if delay is not None and delay < 0:
        raise ValueError(f"`delay` must be >= 0 seconds, got {delay}")


def _check_steps(steps: list[Step], where: str) -> None:
    # Raised from __post_init__, so msgspec prefixes the JSON path of the owner.
    for i, step in enumerate(steps):
        if not step:
            raise ValueError(f"{where}[{i}] is empty: a step needs at least one block")
        errors = [j for j, b in enumerate(step) if b.error is not None]
        waits = any(b.wait_for_prompt is not None for b in step)
        if waits and not any(b.is_content for b in step):
            raise ValueError(
                f"{where}[{i}]: a step with `wait_for_prompt` needs a `text`, `thinking` "
                "or `tool_use` block too (a reply has at least one content block)"
            )
        if not errors:
            continue
        first = step[0].error
        if errors != [0] or (len(step) > 1 and (first is None or first.times is None)):
            raise ValueError(
                f"{where}[{i}]: an `error` block must be the only block of its "
                "step, or its first with `times` (the rest answers afterwards)"
            )


class Rule(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A regex on the user's prompt and the replies it scripts, one per model call."""

    match: str
    steps: list[Step]
    usage: Usage | None = None
    chunk: int | None = None
    delay: float | None = None
    name: str | None = None
    # Drop the connection after this many SSE events, mid-stream, as a failing network
    # or a crashing API would (every time this rule streams).
    cut_after_events: int | None = None

    def __post_init__(self) -> None:
        if self.cut_after_events is not None and self.cut_after_events < 1:
            raise ValueError("`cut_after_events` must be at least 1")
        try:
            re.compile(self.match)
        except re.error as e:
            raise ValueError(f"`match` is not a valid Python regex: {e}") from None
        if not self.steps:
            raise ValueError("`steps` must not be empty")
        _check_steps(self.steps, "steps")
        _check_pacing(self.chunk, self.delay)

    def matches(self, prompt: str) -> bool:
        """True if ``match`` is found anywhere in ``prompt`` (``re.search``)."""
        return re.search(self.match, prompt) is not None


def _default_steps() -> list[Step]:
    return [[Block(text=DEFAULT_REPLY_TEXT)]]


class Scenario(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A whole script: rules tried in order, then ``default``.

    ``chunk`` and ``delay`` are scenario-wide defaults (a rule or block may
    override them); ``finished`` is the text replied once a rule's steps are
    used up; ``side_reply`` answers tool-less side calls (titles, summaries);
    ``compact_summary`` is what the CLI's compaction requests get (``/compact``
    or an automatic compaction), whatever the rules say. ``api_keys``, when set, are
    the only keys accepted: a request with another (``x-api-key`` or a bearer token)
    gets the API's HTTP 401 ``authentication_error``.
    """

    rules: list[Rule] = []
    default: list[Step] = msgspec.field(default_factory=_default_steps)
    default_usage: Usage | None = None
    side_reply: str = DEFAULT_SIDE_REPLY
    finished: str = DEFAULT_FINISHED_TEXT
    compact_summary: str = DEFAULT_COMPACT_SUMMARY
    chunk: int = DEFAULT_CHUNK
    delay: float = 0.0
    api_keys: list[str] | None = None

    def __post_init__(self) -> None:
        if not self.default:
            raise ValueError("`default` must not be empty")
        _check_steps(self.default, "default")
        _check_pacing(self.chunk, self.delay)

    def rule_for(self, prompt: str) -> Rule | None:
        """The first rule whose ``match`` is found in ``prompt``, or None."""
        for rule in self.rules:
            if rule.matches(prompt):
                return rule
        return None


ScenarioSource = Scenario | dict[str, Any] | bytes | bytearray | str | os.PathLike[str]


def load_scenario(source: ScenarioSource) -> Scenario:
    """Build a validated :class:`Scenario`.

    ``source`` may be a Scenario (returned as is), a dict (already-decoded
    JSON), ``bytes`` holding JSON text, or a path (``str`` / ``PathLike``) to a
    JSON file.  Any problem raises ``ValueError`` naming the source and the JSON
    path inside the document, e.g. ``... - at `$.rules[0].steps[1][0]```.
    A missing file raises ``FileNotFoundError`` as usual.
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        label = "scenario (dict)"
        try:
            return msgspec.convert(source, Scenario)
        except msgspec.ValidationError as e:
            raise ValueError(f"invalid {label}: {e}") from None
    if isinstance(source, (bytes, bytearray)):
        label, data = "scenario (JSON bytes)", bytes(source)
    else:
        path = Path(source)
        label, data = f"scenario file {str(path)!r}", path.read_bytes()
    try:
        return msgspec.json.decode(data, type=Scenario)
    except msgspec.ValidationError as e:
        raise ValueError(f"invalid {label}: {e}") from None
    except msgspec.DecodeError as e:
        raise ValueError(f"invalid {label}: not valid JSON: {e}") from None
