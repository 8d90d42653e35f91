"""Tasks that run beside the requests: each is kept until it ends, and a failure is logged.

Every task the daemon starts on its own (a channel's reader and writer, a call to the
editor's MCP server, starting a warm-pool spare, closing one) is started here, so none
is garbage-collected while it runs, none fails silently, and an owner that goes away
cancels its tasks together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from claude_sidecar.protocol.errors import SidecarError

log = logging.getLogger(__name__)

T = TypeVar("T")


class Background:
    """The background tasks of one owner (a channel, the hub, the warm pool)."""

    def __init__(self, owner: str) -> None:
        # Shown in log lines; a warm-pool spare's channel is renamed when a chat takes it.
        self.owner = owner
        self._tasks: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(
        self,
        coro: Coroutine[Any, Any, T],
        name: str,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> asyncio.Task[T]:
        """Run ``coro`` as a task; if it fails, log it (a ``SidecarError`` as a warning,
        anything else as an error with its traceback) and call ``on_failure``."""
        task = asyncio.create_task(coro, name=f"{self.owner}-{name}")

        def ended(task: asyncio.Task[T]) -> None:
            self._tasks.discard(task)
            if task.cancelled() or (error := task.exception()) is None:
                return
            if isinstance(error, SidecarError):
                # Anticipated (no CLI, a CLI that would not start): one line, no traceback.
                log.warning("%s: %s failed: %s", self.owner, name, error.message)
            else:
                log.error("%s: %s failed", self.owner, name, exc_info=error)
            if on_failure is not None:
                on_failure(error)

        self._tasks.add(task)
        task.add_done_callback(ended)
        return task

    def cancel(self) -> None:
        """Cancel every task still running."""
        for task in list(self._tasks):
            task.cancel()

    async def wait(self) -> None:
        """Wait until every task has ended (their failures are logged, not raised)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
