"""What the conversation reads out of content blocks, the same live and stored."""

from __future__ import annotations

import re
from typing import Any


def tag(name: str, text: str) -> str | None:
    """The stripped text inside the first ``<name>...</name>`` of ``text`` (None: none)."""
    found = re.search(f"<{re.escape(name)}>(.*?)</{re.escape(name)}>", text, re.S)
    return found.group(1).strip() if found else None


def as_typed(text: str) -> str:
    """A prompt as the user typed it: a slash command out of the CLI's ``<command-name>``
    wrapper (``/model opus``), shell input out of ``<bash-input>`` (``!ls``)."""
    if text.startswith("<command-name>"):
        name = tag("command-name", text) or ""
        args = tag("command-args", text) or ""
        return f"{name} {args}".strip()
    if text.startswith("<bash-input>"):
        return "!" + (tag("bash-input", text) or "")
    return text


def result_text(content: Any) -> tuple[str, int]:
    """The text parts of a tool result's content, joined, and how many images it holds."""
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    images = 0
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "image":
                images += 1
    return "\n".join(texts), images


# The CLI's framing of a sub-agent's report for the model, in the report's own text.
_AGENT_MARKUP = re.compile(r"<tools-used-before-summary>.*?</tools-used-before-summary>", re.S)


def agent_report(tool_use_result: Any) -> str | None:
    """The report a sub-agent handed back, as its user reads it: the text of an Agent
    (Task) tool's result without what the CLI adds for the model (the "[Subagent
    hand-back]" note, the tools-used markup, the agent id and usage lines). None when
    ``tool_use_result`` (the CLI's structured result) is not a sub-agent's report."""
    if not isinstance(tool_use_result, dict) or "agentId" not in tool_use_result:
        return None
    content = tool_use_result.get("content")
    if not isinstance(content, list):
        return None
    texts = (
        _AGENT_MARKUP.sub("", block["text"]).strip()
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )
    return "\n\n".join(text for text in texts if text)


_SYSTEM_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\n*", re.S)


def compact_summary(text: str) -> str:
    """A compaction's summary as its user reads it: without the ``<system-reminder>``
    blocks the CLI puts in it for the model."""
    return _SYSTEM_REMINDER.sub("\n\n", text).strip()
