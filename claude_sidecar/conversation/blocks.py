"""What the conversation reads out of content blocks, the same live and stored."""

from __future__ import annotations

from typing import Any


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
