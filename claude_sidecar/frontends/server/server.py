"""The ``claude/*`` front end: one JSON-RPC client, many channels.

Each handler serves one method of ``api.METHODS``; its params are decoded once into the
method's msgspec type and its result (a msgspec struct) is encoded by msgspec.
The JSON-RPC mechanics (a task per request, answers, cancellation) are in ``jsonrpc``,
on pygls's public API; notifications are encoded by ``outbox`` and written straight to
the client's stream.

The same server serves one connection of the shared daemon (``frontends.daemon``, known
here only as the connection's ``sharing.Sharing``): the hub and the chats are then the
daemon's, a connection's chats are the ones it is attached to, and its end detaches it
instead of closing them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid as uuidlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.server import JsonRPCServer

from claude_sidecar import __version__
from claude_sidecar.channel import mcp_servers, rewind
from claude_sidecar.channel.channel import Channel
from claude_sidecar.cli.discovery import describe_cli
from claude_sidecar.cli.transport import prepare_spawning
from claude_sidecar.conversation.paging import channel_scope
from claude_sidecar.feed import events
from claude_sidecar.frontends.server import handshake
from claude_sidecar.frontends.server.attach import attach_answer
from claude_sidecar.frontends.server.jsonrpc import Handler as RequestHandler
from claude_sidecar.frontends.server.jsonrpc import Requests, SidecarProtocol
from claude_sidecar.frontends.server.outbox import Outbox, frame, settled_seq
from claude_sidecar.hub.hub import Hub
from claude_sidecar.protocol import api
from claude_sidecar.protocol.errors import (
    EditorUnavailable,
    InvalidParams,
    NotShared,
    ServerNotInitialized,
    SidecarError,
)
from claude_sidecar.sessions.reader import history_page, read_whole_history

if TYPE_CHECKING:
    from cattrs import Converter

    from claude_sidecar.frontends.server.sharing import Sharing

log = logging.getLogger(__name__)


# One converter for the process, made as this module loads: lsprotocol registers its hooks
# on each new one (~47 ms of CPU), which every connection to a shared daemon paid; a daemon
# forked from a process that imported this module (the tests' fork server) gets it made.
_CONVERTER = get_converter()


def _converter() -> Converter:
    return _CONVERTER


class SidecarServer(JsonRPCServer):
    """The daemon's ``claude/*`` front end: one JSON-RPC client, many channels.

    It subscribes to the hub's channel events (``open_feed``: one ``Outbox`` per channel
    turns them into notifications) and owns the daemon's life: ``initialize`` configures
    it, ``shutdown`` closes every channel, ``exit`` ends the serving loop
    (``exit_code``), and ``close`` and ``kill_now`` end every channel and spare CLI.
    """

    protocol: SidecarProtocol

    def __init__(
        self,
        *,
        cli_path: str | None = None,
        env: Mapping[str, str] | None = None,
        shared: Sharing | None = None,
    ) -> None:
        # lsprotocol's converter only structures the answers to the daemon's own requests.
        super().__init__(protocol_cls=SidecarProtocol, converter_factory=_converter)
        # This connection's share of the shared daemon (None: a private daemon).
        self.shared = shared
        if shared is None:
            self.hub = Hub(self, ask_editor=self.ask_editor, cli_path=cli_path, env=env)
        else:
            self.hub = shared.hub
        # What the client chose at initialize (its share of the hub's options).
        self.client = self.hub.options
        self.initialized = False
        self.shutting_down = False
        self.client_name: str | None = None
        self.client_gone = asyncio.Event()
        # Set by `exit`: the serving loop ends, the process exits with ``exit_code``.
        self.exited = asyncio.Event()
        self.exit_code = 1
        # Where frames go (set by the serving loop): batched writes to the client.
        self._queue_frame: Callable[[bytes], None] = _unconnected
        # Seconds between claude/delta notifications of one channel (0: no coalescing).
        self.coalesce = 0.0
        # Whether channels send the CLI's lines as claude/message (rawMessages).
        self.raw_messages = False
        self.cli = api.CliInfo(path=None, version=None, error="not looked for yet")
        # The initializationOptions keys the client sent that this daemon does not know.
        self.ignored_options: list[str] = []
        # claude/callEditorTool requests waiting for this client: (chat, tool) by the
        # future that fails them if the connection ends first.
        self._asking: dict[asyncio.Future[Any], tuple[str, str]] = {}
        self.requests = Requests(
            self._request_handlers(), {"exit": self._exit}, self._gate, self.send_frame
        )
        self.protocol.requests = self.requests

    def _request_handlers(self) -> dict[str, RequestHandler]:
        missing = {m.name for m in api.METHODS} ^ HANDLERS.keys()
        if missing:
            raise RuntimeError(f"method table and handlers disagree on: {sorted(missing)}")
        served: dict[str, RequestHandler] = {
            m.name: _decoding(self, m, HANDLERS[m.name]) for m in api.METHODS
        }
        served["initialize"] = self._initialize
        served["shutdown"] = self._shutdown
        return served

    def _gate(self, method: str) -> SidecarError | JsonRpcException | None:
        """Refuse on arrival what the daemon's life does not allow now. (Checked on
        arrival, not in the request's task: by the time it runs, a later ``initialize``
        may already have been processed.)"""
        if self.shutting_down:
            # A client would wait forever for an answer that never comes.
            return JsonRpcInvalidRequest(
                f"{method}: the server is shutting down; only `exit` is accepted now"
            )
        if method.startswith("claude/") and not self.initialized:
            return ServerNotInitialized(method)
        if method == "shutdown":
            # Refuse what comes after it even while channels are still closing.
            self.shutting_down = True
        return None

    def _initialize(self, raw: Any) -> api.InitializeResult:
        if raw is not None and not isinstance(raw, dict):
            raise InvalidParams("params", "is not an object", "send LSP's InitializeParams")
        # Of LSP's InitializeParams only initializationOptions means something here: a
        # newer client's capabilities and other LSP fields are ignored.
        raw_options = (raw or {}).get("initializationOptions")
        prefix = "initializationOptions."
        if isinstance(raw_options, dict) and raw_options.get("protocol") is not None:
            # The protocol first: a client this daemon cannot serve hears that, not what
            # a protocol apart from this one made of its other options.
            client_name = raw_options.get("clientName")
            handshake.check_client(
                api.decode_params(
                    "initialize",
                    api.ClientProtocol,
                    raw_options["protocol"],
                    prefix + "protocol.",
                    ignored=[],
                ),
                client_name if isinstance(client_name, str) else None,
                os.environ,
            )
        ignored: list[str] = []
        options = api.decode_params(
            "initialize", api.InitializationOptions, raw_options, prefix, ignored=ignored
        )
        ignored.sort()
        if ignored:
            log.warning(handshake.unknown_options_warning(ignored))
        self.configure(options)
        self.ignored_options = ignored
        log.info("initialized by %s", options.client_name or "an unnamed client")
        return self.initialize_result()

    async def _shutdown(self, raw: Any) -> None:
        await self.close()
        # What was still running gets its answer now (cancelled), not never.
        self.requests.cancel_others()

    async def _exit(self, raw: Any) -> None:
        await self.close(grace=1.0)
        self.exit_code = 0 if self.shutting_down else 1
        self.exited.set()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message could not be read (pygls's serving loop): log it, tell the client."""
        log.error("could not handle a message from the client: %s", error)
        self.protocol.notify(
            "window/showMessage", {"type": 1, "message": f"claude-sidecar: {error}"}
        )

    def configure(self, options: api.InitializationOptions) -> None:
        """Apply the client's ``initializationOptions`` (the hub takes its share)."""
        self.client_name = options.client_name
        self.coalesce = options.coalesce_deltas_ms / 1000
        self.raw_messages = options.raw_messages
        self.client = options
        if self.shared is None:
            self.hub.configure(options)
            self.client = self.hub.options
        else:
            self.shared.named(options.client_name)
            if options.warm_pool.cwd is not None:
                # The daemon's pool (its --warm-pool size), with a spare for this client.
                self.hub.pool.prepare(api.NewChannelParams(cwd=options.warm_pool.cwd), options)
                self.hub.listing.warm(options.warm_pool.cwd)
        # Told at once, so an editor can say "no CLI" before the user opens a chat.
        self.cli = describe_cli(self.hub.cli_path_for(options), self.hub.env)
        # Checked now (a few ms) rather than on the first chat's way to its first answer.
        prepare_spawning()
        self.initialized = True

    def connect(self, queue_frame: Callable[[bytes], None]) -> None:
        """Send notifications through ``queue_frame`` (one complete frame per call)."""
        self._queue_frame = queue_frame

    def open_feed(self, channel_id: str, client: api.InitializationOptions) -> Outbox:
        """The feed of a new channel: its events become ``claude/*`` notifications, kept
        back until the channel has started (``events.Subscriber``; a private daemon's
        only client is this one)."""
        # The writer's own queue, no layer between: every delta passes here.
        return Outbox(
            channel_id,
            self._queue_frame,
            held=True,
            coalesce=self.coalesce,
            raw_messages=self.raw_messages,
        )

    @property
    def channel_count(self) -> int:
        """How many channels are open."""
        return self.hub.channel_count

    async def close(self, grace: float = 5.0) -> None:
        """End every channel and spare CLI, each given ``grace`` seconds to exit (a
        connection of the shared daemon: detach from its chats, which keep running)."""
        self.hub.listing.forget(self.sessions_changed)
        self.hub.roster.unwatch(self.channels_changed)
        if self.shared is not None:
            self.shared.detach_all()
            for left, (channel_id, tool) in list(self._asking.items()):
                if not left.done():
                    why = "the editor asked left before answering"
                    left.set_exception(EditorUnavailable(channel_id, tool, why))
            return
        await self.hub.close_all(grace=grace)

    def kill_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        if self.shared is None:
            self.hub.kill_all_now()

    def initialize_result(self) -> api.InitializeResult:
        """The ``initialize`` result: the ``claude/*`` surface and the CLI in use."""
        return api.InitializeResult(
            capabilities=api.ServerCapabilities(
                experimental=api.Experimental(
                    claude_sidecar=api.SidecarFeatures(
                        protocol_version=api.PROTOCOL_VERSION,
                        oldest_client_protocol=api.OLDEST_CLIENT_PROTOCOL,
                        features=handshake.features(shared=self.shared is not None),
                        ignored_options=list(self.ignored_options),
                        methods=[m.name for m in api.METHODS],
                        notifications=list(api.NOTIFICATIONS),
                        client_requests=list(api.CLIENT_REQUESTS),
                        cli=self.cli,
                    )
                )
            ),
            server_info=api.ServerInfo(name="claude-sidecar", version=__version__),
        )

    async def ask_editor(
        self, channel_id: str, tool: str, arguments: dict[str, Any], timeout: float
    ) -> Any:
        """Send ``claude/callEditorTool`` to the client and return its result.

        After ``timeout`` seconds the client is sent ``$/cancelRequest`` and
        ``TimeoutError`` raised; a late answer then lands on a future nobody awaits.
        """
        params = api.CallEditorToolParams(channel_id=channel_id, tool=tool, arguments=arguments)
        request_id = str(uuidlib.uuid4())
        answer = self.protocol.send_request_async(
            "claude/callEditorTool", msgspec.to_builtins(params), msg_id=request_id
        )
        # A connection of the shared daemon that ends fails these at once (close()),
        # so the tool call need not wait out its timeout for a client that is gone.
        left = asyncio.get_running_loop().create_future()
        self._asking[left] = (channel_id, tool)
        try:
            # shield: cancelling pygls's future would make the late answer an error.
            async with asyncio.timeout(timeout):
                done, _ = await asyncio.wait(
                    (asyncio.shield(answer), left), return_when=asyncio.FIRST_COMPLETED
                )
                return await next(iter(done))
        except TimeoutError:
            self.protocol.notify("$/cancelRequest", {"id": request_id})
            raise
        finally:
            self._asking.pop(left, None)
            if not answer.done():
                # A late answer (a result, or the editor's "cancelled" error) lands on
                # this future; it is taken and dropped there, not left for asyncio to report.
                answer.add_done_callback(_drop_answer)

    def sessions_changed(self, cwd: str, session_ids: list[str]) -> None:
        """Tell the client that sessions it was given ``partial`` have been read whole."""
        if not self.client_gone.is_set():
            notification = api.SessionsChangedNotification(cwd=cwd, session_ids=session_ids)
            self._queue_frame(frame("claude/sessionsChanged", notification))

    def with_clients(self, channels: list[api.ChannelSummary]) -> list[api.ChannelSummary]:
        """``channels`` with the connections attached to each (a shared daemon's)."""
        shared = self.shared
        if shared is None:
            return channels
        return [msgspec.structs.replace(c, clients=shared.clients(c.channel_id)) for c in channels]

    def channels_changed(self, notification: api.ChannelsChangedNotification) -> None:
        """Send ``claude/channelsChanged`` (this connection watches the chats)."""
        if not self.client_gone.is_set():
            channels = self.with_clients(notification.channels)
            changed = api.ChannelsChangedNotification(channels=channels, closed=notification.closed)
            self._queue_frame(frame("claude/channelsChanged", changed))

    def send_frame(self, data: bytes) -> None:
        """Send one already-framed JSON-RPC message to the client (a request's answer)."""
        self._queue_frame(data)

    def lose_client(self, error: OSError | ValueError) -> None:
        """The client's stream failed: nobody is listening any more.

        ValueError means the stream was already closed. The serve loop sees the event
        and closes every channel.
        """
        if not self.client_gone.is_set():
            log.error("the client's stream is gone (%s); shutting down", error)
            self.client_gone.set()


Handler = Callable[[SidecarServer, Any], Awaitable[msgspec.Struct]]


def _unconnected(data: bytes) -> None:
    log.warning("no client stream connected: dropping a frame of %d bytes", len(data))


def _opened(channel: Channel) -> api.NewChannelResult:
    return api.NewChannelResult(
        channel_id=channel.id,
        pid=channel.pid,
        session_id=channel.session_id,
        info=channel.info(),
    )


def _shared(ls: SidecarServer, method: str) -> Sharing:
    if ls.shared is None:
        raise NotShared(method)
    return ls.shared


def _opened_by(ls: SidecarServer, channel: Channel) -> api.NewChannelResult:
    """The answer to the client that opened ``channel``; in the shared daemon it is
    attached first, so the notifications so far (from seq 1) go out before the answer,
    as over --stdio."""
    if ls.shared is not None:
        ls.shared.attach(channel.id, 0, None)
    return _opened(channel)


async def new_channel(ls: SidecarServer, p: api.NewChannelParams) -> api.Result:
    running = await ls.hub.holder(p.resume) if p.resume is not None else None
    if running is not None:
        # Two CLIs on one session file would diverge: join the chat that has it.
        joined = await _joined(ls, running, p.limit)
        return msgspec.structs.replace(_opened(running), attached=joined)
    return _opened_by(ls, await ls.hub.new_channel(p, client=ls.client))


async def _joined(ls: SidecarServer, channel: Channel, limit: int | None) -> api.AttachResult:
    """``claude/attach`` without afterSeq (with ``limit``: the last page) for the shared
    daemon; over --stdio the client already gets the chat's notifications, so the same
    snapshot without subscribing. Only the page is read of a resumed session's file."""
    await channel.conversation.reach(channel_scope(channel.id), None, limit)
    if ls.shared is not None:
        return ls.shared.attach(channel.id, None, limit)
    return attach_answer(channel, settled_seq(channel.feed), limit=limit)


async def send_message(ls: SidecarServer, p: api.SendMessageParams) -> api.Result:
    if ls.shared is not None:
        ls.shared.touch(p.channel_id)
    channel = ls.hub.get(p.channel_id)
    if channel.exit is not None:
        # The CLI died (a closed channel is gone from the hub): bring it back with its
        # session, so the conversation continues where it was.
        channel = await ls.hub.restart(p.channel_id)
    message_id = channel.send_user_message(p.cli_content(), p.uuid)
    return api.SendMessageResult(message_id=message_id)


async def interrupt(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    await ls.hub.get(p.channel_id).interrupt()
    return api.Ok()


async def close_channel(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    exit_info = await ls.hub.close_channel(p.channel_id)
    if ls.shared is not None:
        ls.shared.forget(p.channel_id)
    return api.CloseChannelResult(exit=exit_info)


async def list_channels(ls: SidecarServer, p: api.ListChannelsParams) -> api.Result:
    return api.ListChannelsResult(channels=ls.with_clients(ls.hub.list()))


async def watch_channels(ls: SidecarServer, p: api.WatchChannelsParams) -> api.Result:
    if not p.watch:
        ls.hub.roster.unwatch(ls.channels_changed)
        return api.ListChannelsResult(channels=[])
    ls.hub.roster.watch(ls.channels_changed)
    channels = ls.hub.list()
    ls.hub.roster.sent([c.channel_id for c in channels])
    return api.ListChannelsResult(channels=ls.with_clients(channels))


async def respond_permission(ls: SidecarServer, p: api.RespondPermissionParams) -> api.Result:
    ls.hub.check_mode("mode", p.mode, ls.client)
    channel = ls.hub.get(p.channel_id)
    channel.respond_permission(p)
    if ls.shared is not None:
        # The first answer wins: every attached client (this one too, which may ignore
        # it) learns that the request needs no answer from it any more. Straight to the
        # front end's feed: the conversation learns the decision from the CLI's lines.
        channel.feed.publish(events.PermissionWithdrawn(p.request_id, "answeredElsewhere"))
    return api.Ok()


async def fork_session(ls: SidecarServer, p: api.ForkSessionParams) -> api.Result:
    return _opened_by(ls, await ls.hub.fork(p, ls.client))


async def rewind_files(ls: SidecarServer, p: api.RewindFilesParams) -> api.Result:
    return await rewind.rewind_files(ls.hub.get(p.channel_id), p.message_id, p.dry_run)


async def list_sessions(ls: SidecarServer, p: api.ListSessionsParams) -> Any:
    if p.allow_partial:
        return await ls.hub.listing.page(p.cwd, p.limit, p.cursor, ls.sessions_changed)
    return await ls.hub.sessions.list(p.cwd, p.limit, p.cursor)


async def get_history(ls: SidecarServer, p: api.GetHistoryParams) -> Any:
    if p.limit is not None:
        # Per-message, the legacy view has no page of its own: paged, it is left out.
        return await history_page(ls.hub.sessions, p.session_id, p.cwd, p.before, p.limit)
    return await read_whole_history(ls.hub.sessions, p.session_id, p.cwd, p.before)


async def mcp_status(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return await mcp_servers.status(ls.hub.get(p.channel_id))


async def mcp_reconnect(ls: SidecarServer, p: api.McpServerParams) -> api.Result:
    await mcp_servers.reconnect(ls.hub.get(p.channel_id), p.server_name)
    return api.Ok()


async def mcp_toggle(ls: SidecarServer, p: api.McpToggleParams) -> api.Result:
    await mcp_servers.toggle(ls.hub.get(p.channel_id), p.server_name, p.enabled)
    return api.Ok()


async def set_model(ls: SidecarServer, p: api.SetModelParams) -> api.Result:
    await ls.hub.get(p.channel_id).set_model(p.model, p.effort)
    return api.Ok()


async def set_permission_mode(ls: SidecarServer, p: api.SetPermissionModeParams) -> api.Result:
    ls.hub.check_mode("mode", p.mode, ls.client)
    await ls.hub.get(p.channel_id).set_permission_mode(p.mode)
    return api.Ok()


async def channel_info(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return ls.hub.get(p.channel_id).info()


async def get_transcript(ls: SidecarServer, p: api.TranscriptParams) -> api.Result:
    channel = ls.hub.get(p.channel_id)
    await channel.conversation.reach(channel_scope(channel.id), p.before, p.limit)
    seq = settled_seq(channel.feed)
    entries, page = channel.conversation.page(channel_scope(channel.id), p.before, p.limit)
    return api.Transcript(channel.id, seq, entries, page.has_more, page.next_cursor)


async def context_usage(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return await ls.hub.get(p.channel_id).context_usage()


async def stop_task(ls: SidecarServer, p: api.StopTaskParams) -> api.Result:
    await ls.hub.get(p.channel_id).stop_task(p.task_id)
    return api.Ok()


async def rename_session(ls: SidecarServer, p: api.RenameSessionParams) -> api.Result:
    await ls.hub.sessions.rename(p.session_id, p.cwd, p.title)
    return api.Ok()


async def delete_session(ls: SidecarServer, p: api.DeleteSessionParams) -> api.Result:
    ls.hub.check_unused(p.session_id)
    await ls.hub.sessions.delete(p.session_id, p.cwd)
    return api.Ok()


async def attach(ls: SidecarServer, p: api.AttachParams) -> api.Result:
    shared = _shared(ls, "claude/attach")
    # (A page that the answer may carry is read beforehand, in a worker thread.)
    await ls.hub.get(p.channel_id).conversation.reach(channel_scope(p.channel_id), None, p.limit)
    return shared.attach(p.channel_id, p.after_seq, p.limit)


async def detach(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    shared = _shared(ls, "claude/detach")
    ls.hub.get(p.channel_id)
    shared.detach(p.channel_id)
    return api.Ok()


async def stop_daemon(ls: SidecarServer, p: api.StopDaemonParams) -> api.Result:
    shared = _shared(ls, "claude/stopDaemon")
    closed = await shared.stop(force=p.force, only_if_no_chats=p.only_if_no_chats)
    return api.StopDaemonResult(closed_channels=closed)


async def worktree_changes(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return await ls.hub.worktree_changes(p.channel_id)


async def merge_worktree(ls: SidecarServer, p: api.MergeWorktreeParams) -> api.Result:
    return await ls.hub.merge_worktree(p)


async def remove_worktree(ls: SidecarServer, p: api.RemoveWorktreeParams) -> api.Result:
    removed = await ls.hub.remove_worktree(p)
    if ls.shared is not None:
        for channel_id in removed.closed_channels:
            ls.shared.forget(channel_id)
    return removed


HANDLERS: dict[str, Handler] = {
    "claude/newChannel": new_channel,
    "claude/sendMessage": send_message,
    "claude/interrupt": interrupt,
    "claude/closeChannel": close_channel,
    "claude/listChannels": list_channels,
    "claude/watchChannels": watch_channels,
    "claude/respondPermission": respond_permission,
    "claude/rewindFiles": rewind_files,
    "claude/forkSession": fork_session,
    "claude/listSessions": list_sessions,
    "claude/getHistory": get_history,
    "claude/mcpStatus": mcp_status,
    "claude/mcpReconnect": mcp_reconnect,
    "claude/mcpToggle": mcp_toggle,
    "claude/setModel": set_model,
    "claude/setPermissionMode": set_permission_mode,
    "claude/channelInfo": channel_info,
    "claude/getTranscript": get_transcript,
    "claude/contextUsage": context_usage,
    "claude/stopTask": stop_task,
    "claude/renameSession": rename_session,
    "claude/deleteSession": delete_session,
    "claude/attach": attach,
    "claude/detach": detach,
    "claude/stopDaemon": stop_daemon,
    "claude/worktreeChanges": worktree_changes,
    "claude/mergeWorktree": merge_worktree,
    "claude/removeWorktree": remove_worktree,
}


def _drop_answer(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled() and answer.exception() is not None:
        log.info("the editor answered a request after its timeout: %s", answer.exception())


def _decoding(server: SidecarServer, method: api.Method, handler: Handler) -> RequestHandler:
    """``handler`` taking the method's raw params, decoded once into its msgspec type."""

    async def serve(raw: Any) -> msgspec.Struct:
        return await handler(server, api.decode_params(method.name, method.params, raw))

    return serve


def build_server(
    *, cli_path: str | None = None, env: Mapping[str, str] | None = None
) -> SidecarServer:
    """Create the server with every ``claude/*`` method and the JSON-RPC lifecycle."""
    return SidecarServer(cli_path=cli_path, env=env)
