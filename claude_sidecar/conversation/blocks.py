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
