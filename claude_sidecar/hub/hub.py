"""The set of channels of one daemon: ids, creation, restart, fork, lookup and teardown,
and the git worktrees chats run in (made, reviewed, merged, removed)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import uuid as uuidlib
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from claude_sidecar.channel import editor_tools
from claude_sidecar.channel.channel import Channel
from claude_sidecar.channel.editor_tools import EditorToolServer
from claude_sidecar.channel.permissions import Rules
from claude_sidecar.cli.discovery import find_cli
from claude_sidecar.cli.launch import build_launch
from claude_sidecar.conversation import through_exchange
from claude_sidecar.feed.events import NOWHERE, Feed, Subscriber
from claude_sidecar.hub.pool import WarmPool
from claude_sidecar.hub.roster import Roster
from claude_sidecar.hub.worktree_watch import WorktreeWatch
from claude_sidecar.protocol.api import (
    ChannelSummary,
    Entry,
    ExitInfo,
    ForkSessionParams,
    InitializationOptions,
    MergeWorktreeParams,
    MergeWorktreeResult,
    NewChannelParams,
    PromptEntry,
    RemoveWorktreeParams,
    RemoveWorktreeResult,
    TurnEntry,
    WorktreeChangesResult,
    WorktreeInfo,
)
from claude_sidecar.protocol.errors import (
    ChannelNotFound,
    ChatBusy,
    InvalidParams,
    SessionInUse,
    SidecarError,
    UnmergedWork,
)
from claude_sidecar.runtime.background import Background
from claude_sidecar.sessions.footers import ChannelFooters, context_after, last_choices
from claude_sidecar.sessions.quick_listing import QuickListing
from claude_sidecar.sessions.reader import Resumed, read_resumed
from claude_sidecar.sessions.store import SessionStore
from claude_sidecar.worktrees import changes as worktree_changes
from claude_sidecar.worktrees import layout, merge

log = logging.getLogger(__name__)

# A new chat's spare is started when its first turn ends, or after this many seconds.
REFILL_AFTER = 30.0
PRIME_TIMEOUT = 30.0


class Hub:
    """Owns every channel; the front end's handlers go through it.

    Its collaborators come in through the constructor: the front end that receives the
    channels' events (``subscriber``) and the way to ask the editor to run a tool. What
    the client chose at ``initialize`` comes in once, through ``configure``; in a shared
    daemon each client brings its own (``client``, kept per channel for its restarts),
    and ``options`` are the daemon's defaults.
    """

    def __init__(
        self,
        subscriber: Subscriber,
        *,
        ask_editor: editor_tools.AskClient | None = None,
        cli_path: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._subscriber = subscriber
        self._ask_editor = ask_editor
        self._default_cli_path = cli_path
        self._env = env
        self.options = InitializationOptions()
        self.rules = Rules()
        self._channels: dict[str, Channel] = {}
        self._ids = itertools.count(1)
        self._spare_ids = itertools.count(1)
        self.pool = WarmPool(self._start_spare, self._launch_key, self._prime_spare)
        self._background = Background("hub")
        self._restarts: dict[str, asyncio.Future[Channel]] = {}
        # Session id (lower case) -> the resume of it under way, done once the channel is
        # open (or failed to): see ``holder``.
        self._resuming: dict[str, asyncio.Future[None]] = {}
        # The options of the client that opened each channel, when not ``options``.
        self._clients: dict[str, InitializationOptions] = {}
        # The CLI's stored sessions (what restart and fork resume).
        self.sessions = SessionStore(env)
        # claude/listSessions with allowPartial, its index completed in the background.
        self.listing = QuickListing(env)
        # Every chat at a glance, for the clients that watch (claude/watchChannels).
        self.roster = Roster(self.summary)
        # Each worktree chat's watch over what its agent changed, by channel id.
        self._watches: dict[str, WorktreeWatch] = {}
        # One merge or removal at a time per repository (by its main checkout).
        self._repository_locks: dict[str, asyncio.Lock] = {}

    def configure(self, options: InitializationOptions) -> None:
        """Take the client's ``initializationOptions``; with ``warmPool.cwd``, start a spare
        CLI there at once (the editor knows its workspace: the first chat need not wait)."""
        self.options = options
        self.rules = Rules(options.auto_allow_tools)
        self.pool.options = options.warm_pool
        if options.editor_tools:
            # Loaded while the user picks a chat, not when the first one opens.
            self._background.spawn(editor_tools.load_mcp(), "load-mcp")
        if options.warm_pool.cwd is not None:
            self.pool.prepare(NewChannelParams(cwd=options.warm_pool.cwd))
            self.listing.warm(options.warm_pool.cwd)

    @property
    def cli_path(self) -> str | None:
        """The CLI the client named at ``initialize``, else the daemon's ``--cli``."""
        return self.cli_path_for(self.options)

    def cli_path_for(self, client: InitializationOptions) -> str | None:
        """The CLI ``client`` named at ``initialize``, else the daemon's ``--cli``."""
        return client.cli_path or self._default_cli_path

    @property
    def channel_count(self) -> int:
        """How many channels are open (warm-pool spares are not channels)."""
        return len(self._channels)

    @property
    def env(self) -> Mapping[str, str] | None:
        """The environment CLIs start with (None: the daemon's own)."""
        return self._env

    def check_mode(
        self, field: str, mode: str | None, client: InitializationOptions | None = None
    ) -> None:
        """Refuse bypassPermissions unless the client opted in at ``initialize``."""
        opted_in = (client or self.options).allow_dangerously_skip_permissions
        if mode == "bypassPermissions" and not opted_in:
            raise InvalidParams(
                field,
                "is bypassPermissions, which this client did not enable",
                "send initializationOptions.allowDangerouslySkipPermissions: "
                "true in `initialize` to allow it",
            )

    async def new_channel(
        self,
        options: NewChannelParams,
        *,
        fork: bool = False,
        resume_at: str | None = None,
        history: list[Entry] | None = None,
        client: InitializationOptions | None = None,
    ) -> Channel:
        """Start a CLI for ``options`` and return its channel once the CLI is ready.

        With ``fork``, ``options.resume`` names the source session and the channel gets a
        new session id; ``resume_at`` cuts the copied history after that message.
        A resumed or forked channel's conversation starts with ``history`` (by default,
        the resumed session's stored entries): ``claude/getTranscript`` shows it.
        ``client`` is the opening client's ``initializationOptions`` (default: ``options``).
        """
        client = client or self.options
        self.check_mode("permissionMode", options.permission_mode, client)
        if options.resume is not None and not fork:
            key = options.resume.lower()
            while (under_way := self._resuming.get(key)) is not None:
                await asyncio.shield(under_way)  # (a caller that did not ask ``holder``)
            # Taken before the next await, so that a second resume of the session waits
            # for this one (``holder``) rather than start a second CLI on its file.
            resuming = self._resuming[key] = asyncio.get_running_loop().create_future()
            try:
                return await self._open(options, fork, resume_at, history, client)
            finally:
                del self._resuming[key]
                resuming.set_result(None)
        return await self._open(options, fork, resume_at, history, client)

    async def _open(
        self,
        options: NewChannelParams,
        fork: bool,
        resume_at: str | None,
        history: list[Entry] | None,
        client: InitializationOptions,
    ) -> Channel:
        if options.resume is not None and (options.model is None or options.effort is None):
            options = await self._as_chosen_before(options)
        if client.editor_tools and editor_tools.SERVER_NAME in (options.mcp_servers or {}):
            raise InvalidParams(
                f"mcpServers.{editor_tools.SERVER_NAME}",
                "is reserved for the editor's own tools (editorTools)",
                "give that server another name",
            )
        worktree, made = None, False
        if options.worktree is not None:
            if options.resume is not None:
                worktree, cwd = await layout.enter(options.cwd, options.worktree)
            else:
                worktree, cwd = await layout.create(options.cwd, options.worktree)
                made = True
            options = msgspec.structs.replace(options, cwd=cwd, worktree=None)
        elif layout.is_worktree_folder(options.cwd):
            # Resumed or forked in a worktree: the chat stays there.
            worktree = await layout.find(options.cwd)
        elif options.resume is not None:
            worktree = await self._worktree_of_session(options.cwd, options.resume)
            if worktree is not None:
                options = msgspec.structs.replace(options, cwd=worktree.path)
        try:
            return await self._open_in(options, fork, resume_at, history, client, worktree)
        except BaseException:
            if made:
                assert worktree is not None
                await self._unmake(worktree)
            raise

    @staticmethod
    async def _unmake(worktree: WorktreeInfo) -> None:
        """Remove a worktree made for a chat that did not start (the start's error is
        what the client hears)."""
        try:
            await merge.remove(worktree)
        except SidecarError as e:
            log.warning("could not remove worktree %s again: %s", worktree.path, e.message)

    async def _worktree_of_session(self, cwd: str, session_id: str) -> WorktreeInfo | None:
        """The worktree of ``cwd``'s repository where session ``session_id`` was recorded,
        when it is not stored for ``cwd`` itself: resumed from the main checkout, the CLI
        finds a session of one of its worktrees and runs in that worktree, and so does the
        chat."""
        if await self.sessions.exists(cwd, session_id):
            return None
        recorded = await self.sessions.locate(session_id)
        if recorded is None or not layout.is_worktree_folder(recorded):
            return None
        if not os.path.isdir(recorded):
            return None
        worktree = await layout.find(recorded)
        if worktree is None or not Path(cwd).resolve().is_relative_to(Path(worktree.root)):
            return None
        return worktree

    async def _open_in(
        self,
        options: NewChannelParams,
        fork: bool,
        resume_at: str | None,
        history: list[Entry] | None,
        client: InitializationOptions,
        worktree: WorktreeInfo | None,
    ) -> Channel:
        channel_id = f"ch-{next(self._ids)}"
        feed = self._subscriber.open_feed(channel_id, client)
        if client is not self.options:
            self._clients[channel_id] = client
        stored: asyncio.Task[Resumed] | None = None
        if history is None and options.resume is not None:
            # Read while the CLI starts (it reads the same file, slower): its last page
            # from the file's end (``sessions.reader``), never after the CLI.
            stored = asyncio.ensure_future(
                read_resumed(self.sessions, options.resume, options.cwd, self._env)
            )
        try:
            channel = None
            if not fork and worktree is None:
                channel = await self._from_pool(channel_id, options, feed, client)
            if channel is None:
                channel = await self._start(
                    channel_id,
                    options,
                    str(uuidlib.uuid4()),
                    feed,
                    fork=fork,
                    resume_at=resume_at,
                    client=client,
                    worktree=worktree,
                )
            channel.conversation.watcher = self.roster.track(channel_id)
            try:
                self._check_reported(channel, options)
            except InvalidParams:
                self._channels.pop(channel_id, None)
                await channel.close(grace=1.0)
                raise
            if stored is not None:
                assert options.resume is not None
                channel.conversation.expect_seed()
                recorded = await asyncio.to_thread(self.sessions.footers.load, options.resume)
                seeding = self._seed_when_read(channel, stored)
                if recorded:
                    # The answer says what its recorded turns cost and left in the context,
                    # which only the conversation tells (those of a branch left or a
                    # compaction do not count): read beside the CLI, it is ready or nearly.
                    await seeding
                else:
                    self._background.spawn(seeding, f"seed-{channel_id}")
            else:
                channel.conversation.seed(history or [])
                if options.resume is not None and history:
                    await self._carry_on(channel, history, options.resume, fork=fork)
            # Its turn footers are kept beside the session: a resumed chat shows them again.
            channel.conversation.footers = ChannelFooters(self.sessions.footers, channel.settings)
        except BaseException:
            if stored is not None:
                stored.cancel()
            self._clients.pop(channel_id, None)
            self.roster.closed(channel_id)
            dropped = feed.discard()
            if dropped:
                log.warning(
                    "channel %s failed to start; dropped %d notification(s): %.500r",
                    channel_id,
                    len(dropped),
                    b"".join(dropped),
                )
            raise
        feed.release()
        self.roster.opened(channel_id)
        if worktree is not None:
            watch = self._watches[channel_id] = WorktreeWatch(channel, self._background)
            watch.watch(channel)
        elif not fork:
            self._refill_pool(channel, options, client)
        return channel

    def _launch_key(self, client: InitializationOptions | None) -> Hashable:
        """What of ``client``'s settings a CLI is started with (its CLI, editor tools,
        rules and bypass opt-in): a spare started for one client serves another only when
        these are equal."""
        o = client or self.options
        return msgspec.json.encode(
            (
                self.cli_path_for(o),
                o.editor_tools,
                o.editor_tool_timeout,
                o.auto_allow_tools,
                o.allow_dangerously_skip_permissions,
            )
        )

    def _refill_pool(
        self, channel: Channel, options: NewChannelParams, client: InitializationOptions
    ) -> None:
        """Start a spare like ``channel`` once its first turn is over: a CLI starting
        meanwhile would take CPU from that turn (when the user is waiting most)."""

        async def refill() -> None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(REFILL_AFTER):
                    await channel.first_turn_done.wait()
            self.pool.prepare(options, client)

        self._background.spawn(refill(), f"refill-after-{channel.id}")

    async def _from_pool(
        self,
        channel_id: str,
        options: NewChannelParams,
        feed: Feed,
        client: InitializationOptions,
    ) -> Channel | None:
        """A spare CLI from the warm pool set up for ``options`` of ``client``, or None if
        there is none."""
        spare = await self.pool.take(options, client)
        if spare is None:
            return None
        try:
            if options.model is not None:
                await spare.set_model(options.model)
            mode = options.permission_mode
            if mode is not None and mode != spare.settings.permission_mode:
                await spare.set_permission_mode(mode)
        except SidecarError as e:
            log.warning(
                "warm pool: could not set up spare pid %d (%s); starting a new CLI",
                spare.pid,
                e.message,
            )
            await spare.close(grace=1.0)
            return None
        spare.adopt(channel_id, options, feed)
        self._channels[channel_id] = spare
        log.info("channel %s: took spare CLI pid %d from the warm pool", channel_id, spare.pid)
        return spare

    async def _start_spare(
        self, options: NewChannelParams, client: InitializationOptions | None
    ) -> Channel:
        spare_id = f"spare-{next(self._spare_ids)}"
        # A spare's events go nowhere: it is quiet until its first message anyway, and
        # the chat that takes it gets its own feed.
        return await self._start(
            spare_id, options, str(uuidlib.uuid4()), NOWHERE, register=False, client=client
        )

    @staticmethod
    async def _prime_spare(spare: Channel) -> None:
        # The CLI's /context: it builds the system prompt, tool schemas and attachments
        # (and counts their tokens), the work a first turn otherwise does while the user
        # waits. It writes no session.
        try:
            await spare.control("get_context_usage", PRIME_TIMEOUT)
        except SidecarError as e:
            log.info(
                "warm pool: priming spare pid %d failed (%s); it serves as it is",
                spare.pid,
                e.message,
            )

    async def restart(self, channel_id: str) -> Channel:
        """Start a new CLI for a channel whose CLI died, resuming its session.

        The channel keeps its id and its seq numbering; the conversation continues with
        its history. If the restart fails the old, exited channel stays in place.
        """
        pending = self._restarts.get(channel_id)
        if pending is not None:
            # Two messages raced for a dead channel: one restart serves both.
            return await asyncio.shield(pending)
        task = asyncio.ensure_future(self._restart(channel_id))
        self._restarts[channel_id] = task
        try:
            return await asyncio.shield(task)
        finally:
            self._restarts.pop(channel_id, None)

    async def _restart(self, channel_id: str) -> Channel:
        old = self.get(channel_id)
        options = old.settings.continuation()
        if not await self.sessions.exists(old.cwd, old.session_id):
            # The CLI died before the first message and stored nothing: `--resume` would
            # fail, so start the same session id afresh.
            options = msgspec.structs.replace(options, resume=None)
        log.info("channel %s: restarting its CLI (session %s)", channel_id, old.session_id)
        try:
            channel = await self._start(
                channel_id,
                options,
                old.session_id,
                old.feed,
                client=self._clients.get(channel_id),
                worktree=old.settings.worktree,
            )
        except BaseException:
            self._channels[channel_id] = old
            raise
        channel.continue_from(old)
        if (watch := self._watches.get(channel_id)) is not None:
            watch.watch(channel)
        return channel

    async def _start(
        self,
        channel_id: str,
        options: NewChannelParams,
        session_id: str,
        feed: Feed,
        *,
        fork: bool = False,
        resume_at: str | None = None,
        register: bool = True,
        client: InitializationOptions | None = None,
        worktree: WorktreeInfo | None = None,
    ) -> Channel:
        client = client or self.options
        cli = find_cli(self.cli_path_for(client), self._env)
        tools, sdk_servers = None, {}
        declared = client.editor_tools
        if declared and self._ask_editor is not None:
            ask = self._ask_editor

            async def ask_for_channel(tool: str, arguments: dict[str, Any], timeout: float) -> Any:
                # channel.id, not channel_id: a spare from the pool gets its id later.
                return await ask(channel.id, tool, arguments, timeout)

            await editor_tools.load_mcp()
            tools = EditorToolServer(declared, ask_for_channel, client.editor_tool_timeout)
            sdk_servers = {editor_tools.SERVER_NAME: editor_tools.tool_names(declared)}
        rules = self.rules if client is self.options else Rules(client.auto_allow_tools)
        channel = Channel(
            channel_id, options, session_id, feed, rules, fork=fork, editor_tools=tools
        )
        channel.settings.worktree = worktree
        launch = build_launch(
            cli,
            options,
            session_id,
            self._env,
            allow_bypass=client.allow_dangerously_skip_permissions,
            fork=fork,
            resume_at=resume_at,
            sdk_servers=sdk_servers,
        )
        if not register:
            await channel.start(launch)
            return channel
        # Registered while it starts, so that closing the daemon closes it too.
        self._channels[channel_id] = channel
        try:
            await channel.start(launch)
        except BaseException:
            self._channels.pop(channel_id, None)
            raise
        return channel

    @staticmethod
    def _check_reported(channel: Channel, options: NewChannelParams) -> None:
        """Refuse an output style or agent the CLI does not know: it would silently run
        without it. Only the started CLI knows the user's and project's own."""
        reported = channel.settings.reported
        styles = reported.available_output_styles
        if options.output_style is not None and styles and options.output_style not in styles:
            raise InvalidParams(
                "outputStyle",
                f"is {options.output_style!r}, which this CLI does not know",
                f"use one of: {', '.join(styles)}",
            )
        agents = [a.name for a in reported.agents]
        if options.agent is not None and agents and options.agent not in agents:
            raise InvalidParams(
                "agent",
                f"is {options.agent!r}, which this CLI does not know",
                f"use one of: {', '.join(agents)} (or define it in .claude/agents/)",
            )

    async def fork(
        self, p: ForkSessionParams, client: InitializationOptions | None = None, **changes: Any
    ) -> Channel:
        """A new channel continuing a copy of a live channel's or a stored session's history;
        ``changes`` replace fields of its options (an ACP fork's own mode and MCP servers);
        ``client`` as for ``new_channel``."""
        source = (
            self.get(p.channel_id)
            if p.channel_id
            else next((c for c in self._channels.values() if c.session_id == p.session_id), None)
        )
        if source is not None:
            session_id, cwd = source.session_id, p.cwd or source.cwd
            options = source.settings.continuation(cwd=cwd)
        else:
            assert p.session_id is not None
            if p.cwd is None:
                raise InvalidParams(
                    "cwd",
                    "is required to fork a session that has no channel",
                    "pass the directory the session was recorded in",
                )
            session_id, cwd = p.session_id, p.cwd
            options = NewChannelParams(cwd=cwd, resume=session_id)
        resume_at = None
        if p.at_message_id is not None:
            resume_at = source.conversation.exchange_ends.get(p.at_message_id) if source else None
            if resume_at is None:
                resume_at = await self.sessions.exchange_end(session_id, cwd, p.at_message_id)
            if resume_at is None:
                raise InvalidParams(
                    "atMessageId",
                    "is not a user message of this session with an answer",
                    "pass a messageId that claude/sendMessage returned on the source channel",
                )
        history = await self._fork_history(source, session_id, cwd, p.at_message_id)
        options = msgspec.structs.replace(options, **changes)
        return await self.new_channel(
            options, fork=True, resume_at=resume_at, history=history, client=client
        )

    async def _as_chosen_before(self, options: NewChannelParams) -> NewChannelParams:
        """``options`` of a resumed (or forked) session with the model and effort the user
        chose for its last turns where the client chose none now: the chat goes on as it was
        and its pickers show them at once."""
        assert options.resume is not None
        footers = await asyncio.to_thread(self.sessions.footers.load, options.resume)
        model, effort = last_choices(footers)
        return msgspec.structs.replace(
            options, model=options.model or model, effort=options.effort or effort
        )

    async def _carry_on(
        self, channel: Channel, history: list[Entry], source: str, *, fork: bool
    ) -> None:
        """A resumed or forked channel goes on from its history's recorded turns: what they
        cost and the context meter the last of them left. A fork records their footers
        under its own session too, so that resuming it shows them (and counts them) again."""
        turns = [e for e in history if isinstance(e, TurnEntry)]
        if not turns:
            return
        footers = await asyncio.to_thread(self.sessions.footers.load, source)
        channel.carry_on(sum(t.cost_usd for t in turns), context_after(history, footers))
        if fork:
            copied = {t.id for t in turns}
            footer_log = self.sessions.footers

            def copy() -> None:
                for f in footers:
                    if f.entry.id in copied:
                        footer_log.record(
                            channel.session_id,
                            f.prompts,
                            f.entry,
                            f.context,
                            model=f.model,
                            effort=f.effort,
                        )

            await asyncio.to_thread(copy)

    async def _seed_when_read(self, channel: Channel, stored: asyncio.Task[Resumed]) -> None:
        """Put a resumed session's conversation in front of the channel's once it is read
        (kept encoded: see ``conversation.entries``), and carry on from its turns. Until
        then the channel's conversation is not ready (``expect_seed``): its pages wait."""
        try:
            resumed = await stored
        except BaseException:
            channel.conversation.seed(())  # its readers are not left waiting
            raise
        channel.conversation.seed(resumed.before)
        if resumed.turns:
            channel.carry_on(resumed.cost_usd, resumed.context)

    async def _fork_history(
        self, source: Channel | None, session_id: str, cwd: str, at_message_id: str | None
    ) -> list[Entry]:
        """What a fork's conversation starts with: the source channel's own entries when
        it is between turns (its turn footers and permission answers are only there), else
        the stored session's; cut after the exchange of ``at_message_id``."""
        if source is not None and source.state in ("idle", "exited"):
            entries = await source.conversation.whole()
        else:
            entries = await self.sessions.stored(session_id, cwd)
        if at_message_id is None:
            return entries  # (its queued prompts are left out by the seed)
        return through_exchange(entries, at_message_id) or []

    def check_unused(self, session_id: str) -> None:
        """Refuse to delete a session a channel of this daemon uses: its CLI would recreate
        the file with its next entries (a fragment listed as a session of its own), and a
        restart would resume a session that is gone."""
        user = next(
            (c for c in self._channels.values() if c.session_id.lower() == session_id.lower()), None
        )
        if user is not None:
            raise SessionInUse(session_id, user.id)

    async def holder(self, session_id: str) -> Channel | None:
        """The open channel whose conversation is session ``session_id``, once it is open:
        a resume of it still under way is waited for (until then the channel has no
        conversation to show, and it may yet fail); None when no channel has it."""
        resuming = self._resuming.get(session_id.lower())
        if resuming is not None:
            await asyncio.shield(resuming)
        return self.holding(session_id)

    def holding(self, session_id: str) -> Channel | None:
        """The open channel whose conversation is session ``session_id``, if any."""
        wanted = session_id.lower()
        return next((c for c in self._channels.values() if c.session_id.lower() == wanted), None)

    @property
    def channels(self) -> list[Channel]:
        """Every open channel, oldest first."""
        return list(self._channels.values())

    def get(self, channel_id: str) -> Channel:
        """The channel named ``channel_id`` or ``ChannelNotFound``."""
        channel = self._channels.get(channel_id)
        if channel is None:
            raise ChannelNotFound(channel_id)
        return channel

    async def close_channel(self, channel_id: str) -> ExitInfo:
        """Forget one channel, then close it; later requests naming it get ChannelNotFound."""
        channel = self.get(channel_id)
        del self._channels[channel_id]
        self._clients.pop(channel_id, None)
        self.roster.closed(channel_id)
        self._watches.pop(channel_id, None)
        channel.files_may_have_changed = None
        try:
            return await channel.close()
        except BaseException:
            channel.kill_now()
            raise

    def list(self) -> list[ChannelSummary]:
        """Describe every channel, oldest first."""
        return [self._describe(c) for c in self._channels.values()]

    def summary(self, channel_id: str) -> ChannelSummary | None:
        """Describe channel ``channel_id`` as :meth:`list` does (None: it is not open)."""
        channel = self._channels.get(channel_id)
        return self._describe(channel) if channel is not None else None

    def _describe(self, c: Channel) -> ChannelSummary:
        summary = ChannelSummary(
            channel_id=c.id,
            pid=c.pid,
            session_id=c.session_id,
            cwd=c.cwd,
            state=c.state,
            model=c.settings.model,
            permission_mode=c.settings.permission_mode,
            exit=c.exit,
            pending_permissions=list(c.permissions.values()),
            tasks=list(c.settings.tasks.values()),
            worktree=c.settings.worktree,
            changes=watch.totals if (watch := self._watches.get(c.id)) is not None else None,
        )
        return self.roster.annotate(summary, c.conversation.last_prompt())

    # ------------------------------------------------------------ worktrees

    def worktree_of(self, channel: Channel) -> WorktreeInfo:
        """The worktree ``channel`` runs in, or ``InvalidParams`` naming ``channelId``."""
        info = channel.settings.worktree
        if info is None:
            raise InvalidParams(
                "channelId",
                f"names chat `{channel.id}`, which runs in no worktree ({channel.cwd})",
                "name a chat opened with claude/newChannel's `worktree`",
            )
        return info

    async def worktree_changes(self, channel_id: str) -> WorktreeChangesResult:
        """``claude/worktreeChanges``: what the chat's worktree changed against its base."""
        return await worktree_changes.changes(self.worktree_of(self.get(channel_id)))

    def _repository_lock(self, info: WorktreeInfo) -> asyncio.Lock:
        return self._repository_locks.setdefault(info.root, asyncio.Lock())

    async def merge_worktree(self, p: MergeWorktreeParams) -> MergeWorktreeResult:
        """``claude/mergeWorktree``: the chat's branch (and its uncommitted work) into the
        branch its worktree was made from; refused while the chat runs a turn."""
        channel = self.get(p.channel_id)
        info = self.worktree_of(channel)
        async with self._repository_lock(info):
            for other in self._in_worktree(info):
                if other.state not in ("idle", "exited"):
                    raise ChatBusy(other.id, other.state, "claude/mergeWorktree")
            message = p.message or await self._commit_message(channel, info)
            answer, moved = await merge.merge(info, p.strategy, message)
        for other in self._in_worktree(info):
            other.settings.worktree = moved
            other.publish_status()
            if (watch := self._watches.get(other.id)) is not None:
                watch.poke()
        return answer

    async def _commit_message(self, channel: Channel, info: WorktreeInfo) -> str:
        """The message of the commit of the agent's uncommitted work: the first line of the
        chat's first prompt, as the chat's title would be."""
        for entry in await channel.conversation.whole():
            if isinstance(entry, PromptEntry) and entry.parent_id is None and entry.text.strip():
                return entry.text.strip().splitlines()[0][:72]
        return f"Work of the chat in worktree {info.name}"

    async def remove_worktree(self, p: RemoveWorktreeParams) -> RemoveWorktreeResult:
        """``claude/removeWorktree``: close the chat (and any other chat in the worktree)
        and remove the worktree and its branch; without ``force``, refused when work that
        was never merged would be lost."""
        channel = self.get(p.channel_id)
        info = self.worktree_of(channel)
        async with self._repository_lock(info):
            commits, files = await merge.unmerged(info)
            if (commits or files) and not p.force:
                raise UnmergedWork(info.branch, commits, files)
            exit_info = ExitInfo(code=None, signal=None, stderr_tail="")
            closed = self._in_worktree(info)
            for other in closed:
                ended = await self.close_channel(other.id)
                if other is channel:
                    exit_info = ended
            await merge.remove(info)
            await self._bring_sessions_home(info, [c.cwd for c in closed])
        return RemoveWorktreeResult(
            path=info.path,
            branch=info.branch,
            session_id=channel.session_id,
            exit=exit_info,
            discarded_commits=commits,
            discarded_files=files,
            closed_channels=[c.id for c in closed],
        )

    async def _bring_sessions_home(self, info: WorktreeInfo, cwds: Sequence[str]) -> None:
        """Move the sessions recorded in a removed worktree (its root and the folders of
        its chats) to the same folders of the checkout it was made from, so that the
        checkout lists them and resumes them there: with the worktree gone, nothing would
        find them (the CLI looks for a session under the folder it runs in, or a worktree
        that still exists)."""
        for cwd in dict.fromkeys([info.path, *cwds]):
            inside = os.path.relpath(cwd, info.path)
            if inside.startswith(os.pardir):
                continue
            home = os.path.normpath(os.path.join(info.root, inside))
            try:
                moved = await self.sessions.move_all(cwd, home)
            except OSError as e:
                log.warning("could not move the sessions of %s to %s: %s", cwd, home, e)
                continue
            if moved:
                log.info("moved %d session(s) of removed worktree %s to %s", len(moved), cwd, home)

    def _in_worktree(self, info: WorktreeInfo) -> tuple[Channel, ...]:
        """The open chats that run in the worktree ``info`` (a fork shares its source's)."""
        return tuple(
            c
            for c in self._channels.values()
            if c.settings.worktree is not None and c.settings.worktree.path == info.path
        )

    async def close_all(self, grace: float = 5.0) -> None:
        """Close every channel concurrently (used at shutdown and when the client leaves)."""
        self._background.cancel()
        self.listing.close()
        channels = list(self._channels.values())
        if channels:
            log.info("closing %d channel(s)", len(channels))
        results = await asyncio.gather(
            *(c.close(grace=grace) for c in channels), self.pool.close(), return_exceptions=True
        )
        for channel, result in zip(channels, results, strict=False):
            if isinstance(result, BaseException):
                log.error("channel %s: close failed: %r", channel.id, result)
                channel.kill_now()
            self._channels.pop(channel.id, None)
            self._clients.pop(channel.id, None)
            self.roster.closed(channel.id)
            self._watches.pop(channel.id, None)

    def kill_all_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        for channel in self._channels.values():
            channel.kill_now()
        self.pool.kill_now()
