"""Fixtures for the scripted-model tests: a driver for the real Claude Code CLI."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.scripted import ScriptedModel

from tests.env import COMPAT_CLI, isolated_env


class CliSession:
    """One real CLI process in stream-json mode, driven line by line.

    ``acceptEdits`` rather than ``bypassPermissions``: the CLI refuses the
    latter as root unless IS_SANDBOX=1, and acceptEdits already allows Write
    and Edit inside the working directory.
    """

    def __init__(
        self, binary: Path, base_url: str, home: Path, workspace: Path, *extra_args: str
    ) -> None:
        cmd = [
            str(binary),
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-mode",
            "acceptEdits",
            *extra_args,
        ]
        self.proc = subprocess.Popen(
            cmd,
            cwd=workspace,
            env=isolated_env(home, base_url, XDG_CONFIG_HOME=str(home / ".config")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                self.lines.put(json.loads(raw))
            except ValueError:
                continue  # non-JSON noise is allowed on stdout
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw)

    def send(self, text: str) -> str:
        """Send one user message; returns the uuid stamped on it."""
        assert self.proc.stdin is not None
        msg_uuid = str(uuid.uuid4())
        line = {
            "type": "user",
            "session_id": "",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": None,
            "uuid": msg_uuid,
        }
        self.proc.stdin.write(json.dumps(line).encode() + b"\n")
        self.proc.stdin.flush()
        return msg_uuid

    def read_turn(self, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Every output line up to and including the next ``result`` line.

        ``timeout`` only guards against a hang: a CLI's first turn took over 10 s on a
        2-core machine at load 12 (the test command beside other work).
        """
        out: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no result within {timeout}s; got {out!r}; stderr={self.stderr_text()!r}"
                ) from None
            if item is None:
                raise AssertionError(
                    f"CLI exited before a result; got {out!r}; stderr={self.stderr_text()!r}"
                )
            out.append(item)
            if item.get("type") == "result":
                return out

    def turn(self, text: str) -> list[dict[str, Any]]:
        """Send ``text`` and read the turn it starts (every line up to its ``result``)."""
        self.send(text)
        return self.read_turn()

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for the CLI to exit (killed after ``timeout``)."""
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture
def claude() -> Path:
    """The CLI the daemon would use (the pinned bundled binary in this project's venv; the
    older one in the compatibility run)."""
    return Path(COMPAT_CLI or find_cli())


class StartCli(Protocol):
    """The ``start_cli`` fixture: a CLI talking to ``model``, with ``extra_args``."""

    def __call__(self, model: ScriptedModel, *extra_args: str) -> CliSession: ...


@pytest.fixture
def start_cli(claude: Path, home: Path, workspace: Path) -> Iterator[StartCli]:
    """Factory: ``start_cli(model, *extra_args)`` -> a running :class:`CliSession`."""
    sessions: list[CliSession] = []

    def start(model: ScriptedModel, *extra_args: str) -> CliSession:
        session = CliSession(claude, model.url, home, workspace, *extra_args)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()
