"""Reading a Messages API request and choosing the scripted reply for it.

Everything here is pure: a decoded request body and a scenario go in, a
:class:`Plan` (the blocks to send, or an error) comes out.  The HTTP server
only adds transport.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from claude_sidecar.scripted.scenario import Block, ErrorSpec, Scenario, Step, Usage

__all__ = [
    "Plan",
    "find_cwd",
    "is_compaction",
    "is_side_call",
    "plan_reply",
    "prompt_text",
    "step_index",
    "substitute",
]

_REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"
# The CLI states its working directory in an environment section.  2.1.x puts
# it in a trailing role:"system" message ("Primary working directory: /x");
# older versions put "Working directory: /x" in the system prompt.  Both are
# searched, the more specific phrase first.
# A session resumed in another folder than it was recorded in says both:
# "Primary working directory: /repo (was /repo/.claude/worktrees/alpha)" (CLI 2.1.330).
_CWD_PATTERNS = (
    re.compile(r"Primary working directory: *([^\n]+?)(?: \(was [^\n]*\))?$", re.MULTILINE),
    re.compile(r"(?<![A-Za-z])Working directory: *([^\n]+?)(?: \(was [^\n]*\))?$", re.MULTILINE),
)
# The CLI's compaction requests (/compact, an automatic compaction, a compaction of the
# recent part only) ask for the summary in a user message with this sentence (CLI 2.1.233
# and 2.1.330); it wants <analysis> then <summary> back, and without a <summary> asks again.
_COMPACTION = "Your task is to create a detailed summary of"
_PROMPT_IN_SUMMARY = 200  # characters of each prompt a compaction summary lists


class Plan(msgspec.Struct):
    """The reply chosen for one request.

    Either ``error`` is set (answer with an HTTP error), or ``blocks`` holds
    fully resolved blocks: placeholders substituted, tool ids assigned, and
    ``chunk``/``delay`` filled in on every block.
    """

    blocks: list[Block]
    usage: dict[str, int]
    error: ErrorSpec | None = None
    rule: str | None = None  # rule name / regex that matched, None for default or side call
    step: int = 0
    cut_after_events: int | None = None
    prompt: str = ""
    side: bool = False
    compaction: bool = False  # a compaction request, answered with the scenario's summary


def _is_reminder(text: str) -> bool:
    t = text.strip()
    return t.startswith(_REMINDER_OPEN) and t.endswith(_REMINDER_CLOSE)


def _prompt_parts(message: dict[str, Any]) -> list[str]:
    """The user-typed text of one message: text blocks minus system reminders."""
    content = message.get("content")
    if isinstance(content, str):
        return [] if _is_reminder(content) or not content.strip() else [content]
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "text":
                continue  # tool_result, image, document ... are not prompt text
            text = block.get("text")
            if isinstance(text, str) and text.strip() and not _is_reminder(text):
                parts.append(text)
    return parts


def _last_prompt_index(messages: list[Any]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user" and _prompt_parts(m):
            return i
    return -1


def prompt_text(messages: list[Any]) -> str:
    """The user's prompt: the last non-reminder text block of the last user message that has one.

    Messages after it (assistant turns, tool results, a trailing role:"system"
    entry) are skipped, so the prompt stays the same across the tool-use loop.
    Only the last text block counts because the CLI merges consecutive user
    messages: after a turn that failed with an API error, the next request
    carries the failed prompt and the new one as two text blocks of one
    message, and the new one must decide the rule.
    """
    i = _last_prompt_index(messages)
    return _prompt_parts(messages[i])[-1].strip() if i >= 0 else ""


def is_compaction(messages: list[Any]) -> bool:
    """True if the prompt message is the CLI's request to summarise the conversation."""
    i = _last_prompt_index(messages)
    return i >= 0 and any(_COMPACTION in part for part in _prompt_parts(messages[i]))


def _summary_prompts(messages: list[Any]) -> str:
    """The prompts before the compaction request, one ``   - ...`` line each, whitespace
    collapsed and cut to a line's length."""
    lines = []
    for m in messages[: _last_prompt_index(messages)]:
        if isinstance(m, dict) and m.get("role") == "user":
            for part in _prompt_parts(m):
                text = " ".join(part.split())
                if len(text) > _PROMPT_IN_SUMMARY:
                    text = text[: _PROMPT_IN_SUMMARY - 1] + "…"
                lines.append(f"   - {text}")
    return "\n".join(lines) or "   - (none)"


def _compaction_reply(scenario: Scenario, body: dict[str, Any], messages: list[Any]) -> str:
    mapping = {"prompts": _summary_prompts(messages)}
    cwd = find_cwd(body)
    if cwd is not None:
        mapping["cwd"] = cwd
    summary = substitute(scenario.compact_summary, mapping)
    return (
        "<analysis>\nThe scripted stand-in model summarises the conversation as its "
        f"scenario says.\n</analysis>\n\n<summary>\n{summary}\n</summary>"
    )


def step_index(messages: list[Any]) -> int:
    """How many assistant messages follow the prompt: the index of the step to play."""
    i = _last_prompt_index(messages)
    return sum(1 for m in messages[i + 1 :] if isinstance(m, dict) and m.get("role") == "assistant")


def _block_texts(content: Any) -> Iterable[str]:
    """The text of a string, or of the text blocks of a content list."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                yield b["text"]


def _texts(body: dict[str, Any]) -> Iterable[str]:
    yield from _block_texts(body.get("system"))
    for m in body.get("messages") or ():
        if isinstance(m, dict) and m.get("role") in ("system", "user"):
            yield from _block_texts(m.get("content"))


def find_cwd(body: dict[str, Any]) -> str | None:
    """The working directory the CLI reports in its environment section, if any: the
    last one stated (a resumed conversation carries the one it was recorded in too, and a
    chat resumed elsewhere, e.g. from a removed worktree, runs in the latest)."""
    texts = list(_texts(body))
    for pattern in _CWD_PATTERNS:
        found = [m.group(1).strip() for text in texts for m in pattern.finditer(text)]
        if found:
            return found[-1]
    return None


_PLAN_FILE = re.compile(r"plan (?:file )?at (/\S+?\.md)|plan file exists at:? (/\S+?\.md)")


def find_plan_file(body: dict[str, Any]) -> str | None:
    """The plan file path that plan mode's system reminder tells the model to write, if any."""
    found = None
    for text in _texts(body):
        for m in _PLAN_FILE.finditer(text):
            found = m.group(1) or m.group(2)
    return found


def is_side_call(body: dict[str, Any]) -> bool:
    """True for requests without tools: titles, summaries and other side calls."""
    return not body.get("tools")


def substitute(value: Any, mapping: dict[str, str]) -> Any:
    """Replace ``{name}`` placeholders in every string inside ``value``.

    Plain ``str.replace`` rather than ``str.format``: file contents in tool
    inputs are full of braces that must stay untouched.
    """
    if isinstance(value, str):
        for key, repl in mapping.items():
            value = value.replace("{" + key + "}", repl)
        return value
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, mapping) for k, v in value.items()}
    return value


def _estimate_tokens(n_chars: int) -> int:
    # ~4 characters per token is the usual rule of thumb; good enough for
    # cost/context displays, and deterministic for a given request.
    return max(1, n_chars // 4)


def _block_chars(b: Block) -> int:
    if b.text is not None:
        return len(b.text)
    if b.thinking is not None:
        return len(b.thinking)
    if b.tool_use is not None:
        return len(msgspec.json.encode(b.tool_use.input)) + len(b.tool_use.name)
    return 0


def _usage(spec: Usage | None, blocks: list[Block], request_size: int) -> dict[str, int]:
    spec = spec or Usage()
    return {
        "input_tokens": spec.input_tokens
        if spec.input_tokens is not None
        else _estimate_tokens(request_size),
        "output_tokens": (
            spec.output_tokens
            if spec.output_tokens is not None
            else _estimate_tokens(sum(_block_chars(b) for b in blocks))
        ),
        "cache_creation_input_tokens": spec.cache_creation_input_tokens,
        "cache_read_input_tokens": spec.cache_read_input_tokens,
    }


def plan_reply(
    scenario: Scenario,
    body: dict[str, Any],
    next_tool_id: Callable[[], str] | None = None,
    request_size: int = 0,
) -> Plan:
    """Choose and resolve the reply to one ``/v1/messages`` request body.

    A compaction request (:func:`is_compaction`, with or without tools) gets
    ``scenario.compact_summary`` in ``<summary>`` tags, as one text block; other side
    calls (no ``tools``) get ``scenario.side_reply``.  Otherwise the first
    rule whose regex is found in the prompt is used (else ``default``), and its
    step number :func:`step_index` is played; past the last step the
    ``finished`` text is played.  ``next_tool_id`` supplies ids for tool_use
    blocks that have none; ``request_size`` (bytes) feeds the input-token
    estimate when the scenario gives no usage.
    """
    if next_tool_id is None:
        counter = itertools.count(1)
        next_tool_id = lambda: f"toolu_scripted_{next(counter)}"  # noqa: E731
    messages = body.get("messages") or []
    if not isinstance(messages, list):
        messages = []
    prompt = prompt_text(messages)

    if is_compaction(messages):
        text = _compaction_reply(scenario, body, messages)
        blocks = [Block(text=text, chunk=scenario.chunk, delay=scenario.delay)]
        return Plan(
            blocks=blocks,
            usage=_usage(None, blocks, request_size),
            prompt=prompt,
            side=is_side_call(body),
            compaction=True,
        )

    if is_side_call(body):
        blocks = [Block(text=scenario.side_reply, chunk=0, delay=0.0)]
        return Plan(
            blocks=blocks, usage=_usage(None, blocks, request_size), prompt=prompt, side=True
        )

    rule = scenario.rule_for(prompt)
    steps: list[Step] = rule.steps if rule else scenario.default
    k = step_index(messages)
    step: Step = steps[k] if k < len(steps) else [Block(text=scenario.finished)]
    chunk = rule.chunk if rule and rule.chunk is not None else scenario.chunk
    delay = rule.delay if rule and rule.delay is not None else scenario.delay
    rule_label = (rule.name or rule.match) if rule else None

    error = step[0].error
    if error is not None:
        if error.times is None:
            return Plan(blocks=[], usage={}, error=error, rule=rule_label, step=k, prompt=prompt)
        # The server decides per request whether this one still fails.
        step = step[1:] or [Block(text=scenario.finished)]

    cwd = find_cwd(body)
    mapping = {"prompt": prompt}
    if cwd is not None:
        mapping["cwd"] = cwd
    plan_file = find_plan_file(body)
    if plan_file is not None:
        mapping["plan_file"] = plan_file
    resolved: list[Block] = []
    for b in step:
        extra: dict[str, Any] = {
            "chunk": b.chunk if b.chunk is not None else chunk,
            "delay": b.delay if b.delay is not None else delay,
        }
        if b.text is not None:
            extra["text"] = substitute(b.text, mapping)
        elif b.thinking is not None:
            extra["thinking"] = substitute(b.thinking, mapping)
        elif b.tool_use is not None:
            extra["tool_use"] = msgspec.structs.replace(
                b.tool_use,
                input=substitute(b.tool_use.input, mapping),
                id=b.tool_use.id or next_tool_id(),
            )
        resolved.append(msgspec.structs.replace(b, **extra))
    usage_spec = rule.usage if rule else scenario.default_usage
    return Plan(
        blocks=resolved,
        usage=_usage(usage_spec, resolved, request_size),
        error=error,
        rule=rule_label,
        step=k,
        prompt=prompt,
        cut_after_events=rule.cut_after_events if rule else None,
    )
