"""A warm pool: CLI processes started ahead of the ``claude/newChannel`` that needs them.

Starting a CLI and completing its ``initialize`` handshake is most of a new chat's wait.
After each new chat the pool starts a spare CLI with the same options, so the next chat
in that directory takes an initialized process instead of waiting for one. Model and
permission mode are left out of the match: the daemon applies them to the spare by
control request. A spare is also started for one client's launch settings (its CLI, its
editor tools, its rules: the shared daemon serves several clients) and serves only a client
with the same. With ``primeContext`` a started spare also builds its context ahead (a model
call); a chat takes it without waiting for that. Spares are bounded (``size``), closed when
idle for ``idle_seconds`` and closed with the daemon, which waits for neither a spare's start
nor its priming; a spare that dies is simply dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any

import msgspec

from claude_sidecar.channel.channel import Channel
from claude_sidecar.protocol.api import InitializationOptions, NewChannelParams, WarmPoolOptions
from claude_sidecar.runtime.background import Background

log = logging.getLogger(__name__)

Spawn = Callable[[NewChannelParams, InitializationOptions | None], Coroutine[Any, Any, Channel]]
"""Starts a CLI for the given options and client (None: the daemon's defaults) and returns
its channel once it is initialized."""

Prime = Callable[[Channel], Coroutine[Any, Any, None]]
"""Has a started spare do ahead what its first turn would (``primeContext``); logs a failure."""

LaunchKey = Callable[[InitializationOptions | None], Hashable]
"""What of a client's settings a spare is started with (equal keys: a spare serves both)."""


def pool_key(options: NewChannelParams) -> bytes | None:
    """What a spare must match to serve ``options``; None if no spare can (a resume or
    fork needs its own history, a chat in a worktree its own folder)."""
    if options.resume is not None or options.worktree is not None:
        return None
    return msgspec.json.encode(spare_options(options))


def spare_options(options: NewChannelParams) -> NewChannelParams:
    """The options a spare is started with: the model and mode come later, per chat."""
    return msgspec.structs.replace(options, model=None, permission_mode=None)


@dataclass
class _Spare:
    key: tuple[bytes, Hashable]
    starting: asyncio.Task[Channel]
    priming: asyncio.Task[None] | None = None
    reaper: asyncio.TimerHandle | None = None


class WarmPool:
    """Spare initialized CLIs, keyed by the options they were started with."""

    def __init__(self, spawn: Spawn, launch_key: LaunchKey, prime: Prime) -> None:
        self._spawn = spawn
        self._launch_key = launch_key
        self._prime = prime
        # initializationOptions.warmPool; replaced by the server at initialize.
        self.options = WarmPoolOptions()
        self._spares: list[_Spare] = []
        self._background = Background("warm pool")
        # Apart: closing the daemon cancels them (a taken spare's too) instead of waiting.
        self._primings = Background("warm pool priming")
        self._closed = False

    def _key(
        self, options: NewChannelParams, client: InitializationOptions | None
    ) -> tuple[bytes, Hashable] | None:
        chat = pool_key(options)
        return None if chat is None else (chat, self._launch_key(client))

    def prepare(
        self, options: NewChannelParams, client: InitializationOptions | None = None
    ) -> None:
        """Start a spare for chats like ``options`` of ``client`` (None: the daemon's
        defaults) unless one is there already.

        When the pool is full the oldest spare makes room: the latest chat's options are
        the likeliest next.
        """
        key = self._key(options, client)
        if (
            key is None
            or self._closed
            or self.options.size <= 0
            or any(s.key == key for s in self._spares)
        ):
            return
        while len(self._spares) >= self.options.size:
            self._discard(self._spares.pop(0), "making room")
        starting = self._background.spawn(self._spawn(spare_options(options), client), "spare")
        spare = _Spare(key, starting)
        self._spares.append(spare)
        starting.add_done_callback(lambda task: self._started(spare, task))

    def _started(self, spare: _Spare, task: asyncio.Task[Channel]) -> None:
        if task.cancelled():
            return
        if task.exception() is not None:  # logged by Background
            with contextlib.suppress(ValueError):
                self._spares.remove(spare)
            return
        if spare in self._spares:
            log.info("warm pool: spare CLI pid %d ready", task.result().pid)
            if self.options.prime_context:
                spare.priming = self._primings.spawn(self._prime(task.result()), "prime")
            spare.reaper = asyncio.get_running_loop().call_later(
                self.options.idle_seconds, self._reap, spare
            )

    def _reap(self, spare: _Spare) -> None:
        if spare in self._spares:
            self._spares.remove(spare)
            self._discard(spare, f"idle for {self.options.idle_seconds:g} s")

    async def take(
        self, options: NewChannelParams, client: InitializationOptions | None = None
    ) -> Channel | None:
        """A started spare for ``options`` of ``client`` (waiting for one still starting,
        not for its priming: the CLI goes on with that beside the chat's first turn), or None."""
        key = self._key(options, client)
        if key is None:
            return None
        spare = next((s for s in self._spares if s.key == key), None)
        if spare is None:
            return None
        self._spares.remove(spare)
        if spare.reaper is not None:
            spare.reaper.cancel()
        try:
            channel = await asyncio.shield(spare.starting)
        except asyncio.CancelledError:
            self._discard(spare, "the request was cancelled")
            raise
        except Exception:  # already logged; the caller starts a CLI itself
            return None
        if channel.exit is not None:
            log.info("warm pool: spare pid %d had exited; not used", channel.pid)
            return None
        return channel

    def _discard(self, spare: _Spare, reason: str) -> None:
        if spare.reaper is not None:
            spare.reaper.cancel()
        if spare.priming is not None:
            spare.priming.cancel()
        log.info("warm pool: closing a spare CLI (%s)", reason)
        self._background.spawn(self._close(spare.starting), "close-spare")

    @staticmethod
    async def _close(starting: asyncio.Task[Channel]) -> None:
        if not starting.done():
            # Not waited for (closing the daemon would wait for a CLI slow to answer
            # `initialize`): a start cancelled ends its CLI.
            starting.cancel()
        await asyncio.wait({starting})
        if starting.cancelled() or starting.exception() is not None:
            return
        await starting.result().close(grace=2.0)

    async def close(self) -> None:
        """Close every spare (those still starting too) and wait until they are gone."""
        self._closed = True
        spares, self._spares = self._spares, []
        for spare in spares:
            self._discard(spare, "the daemon is closing")
        self._primings.cancel()
        await self._primings.wait()
        await self._background.wait()

    def kill_now(self) -> None:
        """SIGKILL every started spare; the last resort when the event loop is gone."""
        for spare in self._spares:
            if (
                spare.starting.done()
                and not spare.starting.cancelled()
                and spare.starting.exception() is None
            ):
                spare.starting.result().kill_now()
