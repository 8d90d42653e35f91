"""Record the notification streams the conversation tests and the clients' tests replay.

Runs the real daemon, the real Claude Code CLI and the stand-in model (the same set-up as
tests/conftest.py), plays one chat per fixture and writes every notification of its
channel, in order, to tests/data/streams/<name>.jsonl (one {method, params} per
line). Temporary directories are replaced with stable paths (/home/dev, /home/dev/project)
so a fixture only changes when the daemon or the CLI does.

    uv run python -m tests.conversation.record_streams [--out DIR] [name ...]

With SIDECAR_TEST_CLI set (the compatibility run's CLI) the daemon runs that CLI; record
into another directory (--out) to compare its streams with the pinned CLI's.
Then rewrite the golden entries (``UPDATE_GOLDEN=1 uv run pytest tests/conversation``) and
review both diffs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from claude_sidecar.scripted import ScriptedModel, load_scenario  # noqa: E402

from tests.env import COMPAT_CLI  # noqa: E402
from tests.harness import Note, Sidecar, wait_until_dead  # noqa: E402

OUT = ROOT / "tests" / "data" / "streams"
STABLE_HOME = "/home/dev"
STABLE_PROJECT = "/home/dev/project"
STABLE_MODEL_HOST = "127.0.0.1:8080"

THINKING = "\n".join(
    [
        "The user wants a function that checks for palindromes.",
        "I should normalise case and ignore non-letters,",
        "then compare the string with its reverse.",
    ]
)
ANSWER = """Here is a small **palindrome** check:

```python
def is_palindrome(text: str) -> bool:
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]
```

- It ignores case and punctuation.
- `is_palindrome("A man, a plan, a canal: Panama")` is `True`.
"""

SCENARIO = {
    "rules": [
        {
            "name": "ponder",
            "match": "(?i)palindrome",
            "chunk": 12,
            "delay": 0.005,
            "steps": [[{"thinking": THINKING}, {"text": ANSWER}]],
        },
        {
            "name": "write",
            "match": "(?i)readme",
            "steps": [
                [
                    {"text": "I'll update the README."},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {
                                "file_path": "{cwd}/README.md",
                                "content": "# Project\n\nA tiny web shop.\n\n"
                                "## Usage\n\nRun `make serve`.\n",
                            },
                        }
                    },
                ],
                [{"text": "README.md is updated."}],
            ],
        },
        {
            "name": "edit",
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
                [{"text": "OK, I left hello.py as it is."}],
            ],
        },
        {
            "name": "both-files",
            "match": "(?i)both files",
            "steps": [
                [
                    {"tool_use": {"name": "Read", "input": {"file_path": "{cwd}/README.md"}}},
                    {"tool_use": {"name": "Read", "input": {"file_path": "{cwd}/hello.py"}}},
                ],
                [{"text": "Both files are short."}],
            ],
        },
        {
            "name": "long",
            "match": "(?i)long",
            "chunk": 5,
            "delay": 0.02,
            "steps": [[{"text": "word " * 400}]],
        },
        {
            "name": "question",
            "match": "(?i)button",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "AskUserQuestion",
                            "input": {
                                "questions": [
                                    {
                                        "question": "Which colour should the button be?",
                                        "header": "Colour",
                                        "multiSelect": False,
                                        "options": [
                                            {"label": "Red", "description": "warm"},
                                            {"label": "Blue", "description": "cool"},
                                        ],
                                    },
                                    {
                                        "question": "Which states need styles?",
                                        "header": "States",
                                        "multiSelect": True,
                                        "options": [
                                            {"label": "hover", "description": "mouse over"},
                                            {"label": "focus", "description": "keyboard focus"},
                                            {"label": "disabled", "description": "not clickable"},
                                        ],
                                    },
                                ]
                            },
                        }
                    }
                ],
                [{"text": "Blue, with hover and focus styles."}],
            ],
        },
        {
            "name": "bash",
            "match": "(?i)count",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": "seq 1 12", "description": "Count to twelve"},
                        }
                    }
                ],
                [{"text": "Counted to twelve."}],
            ],
        },
        {
            "name": "fail",
            "match": "(?i)fail",
            "steps": [
                [{"error": {"status": 500, "type": "api_error", "message": "scripted failure"}}]
            ],
        },
        {
            "name": "plan",
            "match": "(?i)plan",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {
                                "file_path": "{plan_file}",
                                "content": "# Greeting plan\n\n"
                                "1. Change `hello.py` to greet the world.\n"
                                "2. Add a test for the greeting.\n",
                            },
                        }
                    }
                ],
                [{"tool_use": {"name": "ExitPlanMode", "input": {}}}],
                [{"text": "Going ahead with the plan."}],
            ],
        },
        {
            "name": "sub-agent",
            "match": "SUBTASK",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": "echo hi", "description": "Say hi"},
                        }
                    }
                ],
                [{"text": "Sub result: hi"}],
            ],
        },
        {
            "name": "delegate",
            "match": "(?i)delegate",
            "steps": [
                [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {
                                "description": "say hi",
                                "prompt": "SUBTASK: say hi with echo",
                                "subagent_type": "general-purpose",
                                "run_in_background": False,
                            },
                        }
                    }
                ],
                [{"text": "The agent is done."}],
            ],
        },
        {
            "name": "overloaded",
            "match": "(?i)busy",
            "steps": [
                [
                    # Two failures: the CLI retries after ~0.5 s, then ~1 s (it waits no less).
                    {
                        "error": {
                            "status": 529,
                            "type": "overloaded_error",
                            "message": "Overloaded",
                            "retry": True,
                            "times": 2,
                        }
                    },
                    {"text": "Answered on the third try."},
                ]
            ],
        },
        {
            "name": "huge",
            "match": "(?i)huge",
            # Past CLI 2.1.330's threshold (967,000 of 1M tokens): it compacts before the
            # next request.
            "usage": {"input_tokens": 990000, "output_tokens": 8},
            "steps": [[{"text": "That filled the context."}]],
        },
    ],
    "default": [[{"text": "A scripted answer."}]],
}

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def allow(request: dict[str, Any]) -> dict[str, Any]:
    return {"decision": "allow"}


@dataclass
class Fixture:
    prompt: str
    answer: Answer = allow
    channel: dict[str, Any] = field(default_factory=dict)
    interrupt_after_deltas: int | None = None
    # Sent while the first prompt's answer streams (after this many deltas): it queues.
    queued: str | None = None
    queue_after_deltas: int = 5
    # Sent one after the other once each turn before has ended.
    then: tuple[str, ...] = ()


FIXTURES: dict[str, Fixture] = {
    "streamed-thinking": Fixture("write a palindrome check"),
    "write-allowed": Fixture("update the readme"),
    "edit-denied": Fixture(
        "greet the world",
        answer=lambda r: {"decision": "deny", "message": "Keep the greeting short."},
    ),
    "interrupted": Fixture("a long answer please", interrupt_after_deltas=20),
    "ask-question": Fixture(
        "style the button",
        answer=lambda r: {
            "decision": "allow",
            "answers": {
                "Which colour should the button be?": "Blue",
                "Which states need styles?": "hover, focus",
            },
        },
    ),
    "bash-output": Fixture("count to twelve"),
    "api-error": Fixture("this will fail"),
    "plan-approved": Fixture(
        "make a plan for hello.py",
        channel={"permissionMode": "plan"},
        answer=lambda r: {"decision": "allow", "mode": "acceptEdits"},
    ),
    "sub-agent": Fixture("delegate a small task"),
    "parallel-tools": Fixture("read both files"),
    "queued-prompt": Fixture("a long answer please", queued="and a short one after it"),
    "cleared": Fixture("hello", then=("/clear", "hello again")),
    # Two exchanges: CLI 2.1.233 compacts nothing shorter.
    "compacted": Fixture("hello", then=("hello again", "/compact", "what did we talk about?")),
    "auto-compacted": Fixture("fill a huge context", then=("and one more question",)),
    "api-retry": Fixture("is the API busy?"),
}


async def play(sidecar: Sidecar, project: Path, fixture: Fixture) -> list[Note]:
    """One chat: open a channel, send the prompt, answer its permission requests, wait for
    the end of the turn; returns the channel's notifications."""
    opened = await sidecar.open_channel(cwd=str(project), **fixture.channel)
    channel = opened["channelId"]
    seen = 0
    for prompt in (fixture.prompt, *fixture.then):
        seen = await play_turn(sidecar, channel, prompt, fixture, seen)
    # What the CLI prints after the turn (command_lifecycle `completed`) belongs to it too.
    await asyncio.sleep(0.5)
    notes = sidecar.of(channel)
    await sidecar.request("claude/closeChannel", {"channelId": channel})
    return notes


async def play_turn(
    sidecar: Sidecar, channel: str, prompt: str, fixture: Fixture, seen: int
) -> int:
    """Send ``prompt``, answer what is asked, wait until the channel is idle again (a
    queued prompt's turn included); returns how many notifications were seen."""
    await sidecar.send(channel, prompt)
    interrupted = queued = False
    turns = 0
    while True:
        note = await sidecar.wait_for(
            lambda n: n.channel == channel
            and n.method in ("claude/permissionRequest", "claude/turnEnded", "claude/delta"),
            after=seen,
        )
        seen = sidecar.notes.index(note) + 1
        if note.method == "claude/turnEnded":
            turns += 1
            if not queued or turns == 2 or len(note.params.get("messageIds", [])) == 2:
                break
            continue
        if note.method == "claude/delta":
            deltas = len(sidecar.of(channel, "claude/delta"))
            if fixture.queued and not queued and deltas >= fixture.queue_after_deltas:
                queued = True
                await sidecar.send(channel, fixture.queued)
            if (
                not interrupted
                and fixture.interrupt_after_deltas
                and deltas >= fixture.interrupt_after_deltas
            ):
                interrupted = True
                await sidecar.request("claude/interrupt", {"channelId": channel})
            continue
        if note.params.get("autoDecision"):
            continue
        await sidecar.request(
            "claude/respondPermission",
            {
                "channelId": channel,
                "requestId": note.params["requestId"],
                **fixture.answer(note.params),
            },
        )
    await sidecar.wait_for_state(channel, "idle", after=seen)
    return seen


@dataclass
class Stable:
    """What differs between two recordings and what it becomes: the temporary directories
    (also in the CLI's project-folder names, where '/' became '-') and the stand-in
    model's port (the CLI names it in API error messages)."""

    tmp: Path
    model_host: str

    def __call__(self, text: str) -> str:
        for real, fixed in (
            (self.tmp / "project", STABLE_PROJECT),
            (self.tmp / "home", STABLE_HOME),
        ):
            text = text.replace(str(real), fixed)
            text = text.replace(str(real).replace("/", "-"), fixed.replace("/", "-"))
        return text.replace(self.model_host, STABLE_MODEL_HOST)


def stable_tool_input(notes: list[dict[str, Any]], stable: Stable) -> None:
    """Replace the temporary paths in streamed tool input, whose pieces cut paths in two:
    each block's pieces are joined, fixed, and cut again into as many pieces (so `seq`
    stays 1, 2, 3, ...)."""
    blocks: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for note in notes:
        params = note["params"]
        if note["method"] == "claude/delta" and params["kind"] == "toolInput":
            blocks.setdefault((params.get("parentToolUseId"), params["index"]), []).append(params)
            continue
        message = params.get("message")
        event = message.get("event") if isinstance(message, dict) else None
        if isinstance(event, dict) and event.get("type") == "content_block_stop":
            pieces = blocks.pop((message.get("parent_tool_use_id"), event.get("index")), [])
            text = stable("".join(p["text"] for p in pieces))
            size = -(-len(text) // max(len(pieces), 1))
            for i, piece in enumerate(pieces):
                piece["text"] = text[i * size : (i + 1) * size]


def prepare(project: Path) -> None:
    """The files the scenarios edit."""
    (project / "README.md").write_text("# Project\n\nA web shop.\n")
    (project / "hello.py").write_text("print('hello')\n")


async def main(names: list[str], out: Path = OUT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="cs-fixtures-") as tmp_name,
        ScriptedModel(load_scenario(SCENARIO)) as model,
    ):
        tmp = Path(tmp_name).resolve()
        home, project = tmp / "home", tmp / "project"
        home.mkdir()
        project.mkdir()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE")) and k != "CLAUDECODE"
        }
        env.update(
            HOME=str(home),
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY="sk-ant-test-dummy",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        if COMPAT_CLI:
            env["CLAUDE_SIDECAR_CLI"] = COMPAT_CLI
        stable = Stable(tmp, model.url.removeprefix("http://"))
        sidecar = Sidecar(env)
        await sidecar.start()
        try:
            for name in names:
                prepare(project)
                notes = await play(sidecar, project, FIXTURES[name])
                # The entries are what the tests compute from the rest: not recorded.
                records = [
                    {"method": n.method, "params": n.params}
                    for n in notes
                    if n.method != "claude/entry"
                ]
                stable_tool_input(records, stable)
                lines = [stable(json.dumps(r, ensure_ascii=False)) for r in records]
                leftover = [line for line in lines if str(tmp) in line]
                assert not leftover, f"a temporary path is left in {leftover[0][:300]}"
                (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
                print(f"{name}: {len(lines)} notifications", file=sys.stderr)
        finally:
            await sidecar.stop()
            assert await wait_until_dead(sidecar.pids) == [], "CLI processes outlived the daemon"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Record the streams of the fixtures named.")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument("names", nargs="*", metavar="name", help="default: every fixture")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in FIXTURES]
    if unknown:
        parser.error(f"unknown fixture(s) {unknown}; known: {', '.join(FIXTURES)}")
    asyncio.run(main(args.names or list(FIXTURES), args.out))
