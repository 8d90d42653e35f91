"""Stand-in model rules the Neovim tests (and the playground) share, by the word that triggers
each; a test composes the ones it needs with ``scenario(...)``."""

from __future__ import annotations

from typing import Any

Rule = dict[str, Any]

GREET: Rule = {
    "match": "(?i)greet",
    "steps": [
        [
            {
                "tool_use": {
                    "name": "Edit",
                    "input": {
                        "file_path": "{cwd}/hello.py",
                        "old_string": "print('hello')",
                        "new_string": "print('hello, world')",
                    },
                }
            }
        ],
        [{"text": "Greeting changed."}],
    ],
}
"""An Edit of hello.py (``print('hello')`` -> ``print('hello, world')``): a permission ask."""

LONG: Rule = {"match": "(?i)long", "steps": [[{"text": "word " * 400}]], "chunk": 5, "delay": 0.02}
"""A long answer streamed in small pieces, for the playground (a person has time to
interrupt it, or to send mid-turn); tests take ``HELD_LONG``."""

RELEASE = "go on"
"""What ends ``HELD_LONG``'s hold: ``model.release(RELEASE)``."""

HELD_LONG: Rule = {
    "match": "(?i)long",
    "steps": [
        [
            {"text": "word " * 200},
            {"wait_for_prompt": f"^{RELEASE}$", "timeout": 120},
            {"text": "word " * 200},
        ]
    ],
    "chunk": 5,
}
"""A long answer held halfway until the test releases it: a test interrupts it, or sends
mid-turn, while it streams, however slow the machine."""

PONDER: Rule = {
    "match": "(?i)ponder",
    "steps": [
        [
            {
                "thinking": "\n".join(f"step {i} of my reasoning" for i in range(40)),
                "chunk": 8,
                "delay": 0.03,
            },
            {"text": "Pondered."},
        ]
    ],
}
"""Thinking streamed live, then a short answer."""

COUNT: Rule = {
    "match": "(?i)count",
    "steps": [
        [{"tool_use": {"name": "Bash", "input": {"command": "seq 1 20", "description": "count"}}}],
        [{"text": "Counted."}],
    ],
}
"""A Bash tool with 20 lines of output."""

BUSY: Rule = {
    "match": "(?i)busy",
    "steps": [
        [
            {
                "error": {
                    "status": 529,
                    "type": "overloaded_error",
                    "message": "Overloaded",
                    "retry": True,
                    "times": 3,
                }
            },
            {"text": "Answered after the retries."},
        ]
    ],
}
"""The API is overloaded three times (the CLI retries), then answers."""

WHICH_COLOR: Rule = {
    "match": "(?i)which",
    "steps": [
        [
            {
                "tool_use": {
                    "name": "AskUserQuestion",
                    "input": {
                        "questions": [
                            {
                                "question": "Which color?",
                                "header": "Color",
                                "multiSelect": False,
                                "options": [
                                    {"label": "Red", "description": "warm"},
                                    {"label": "Blue", "description": "cold"},
                                ],
                            }
                        ]
                    },
                }
            }
        ],
        [{"text": "Noted."}],
    ],
}
"""An AskUserQuestion with two described options."""

PLAN: Rule = {
    "match": "(?i)plan",
    "steps": [
        # As in real use: the plan goes to the plan file, whose text the CLI then sends.
        [
            {
                "tool_use": {
                    "name": "Write",
                    "input": {
                        "file_path": "{plan_file}",
                        "content": "# Greeting plan\n\n1. Change `hello.py`.\n2. Add a test.\n",
                    },
                }
            }
        ],
        [{"tool_use": {"name": "ExitPlanMode", "input": {}}}],
        [{"text": "Going ahead."}],
    ],
}
"""In plan mode: a plan written to the plan file, then ExitPlanMode (the approval picker)."""

PLAIN = [[{"text": "Plain answer."}]]


def scenario(*rules: Rule) -> dict[str, Any]:
    """A scenario of ``rules`` (first match wins) answering anything else "Plain answer."."""
    return {"rules": list(rules), "default": PLAIN}
