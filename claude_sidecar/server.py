"""The pygls JSON-RPC server: decodes ``claude/*`` params, calls the hub, encodes results.

Each handler serves one method of ``api.METHODS``. Params are decoded once into the
method's msgspec type; results go back as builtins (pygls's codec cannot encode
msgspec structs). Notifications bypass pygls's codec: they are encoded by ``outbox``
and written straight to the client's stream.
"""

from __future__ import annotations

import asyncio
import logging
import uuid as uuidlib
from collections.abc import Awaitable, Callable, Generator, Mapping
from concurrent.futures import Future
from typing import Any

import msgspec
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method

from . import __version__, api, mcp_servers, rewind
from .channel import Channel
from .discovery import describe_cli
from .errors import ServerNotInitialized, SidecarError
from .hub import Hub
from .outbox import Outbox
from .transport import pdeathsig_wrapper

log = logging.getLogger(__name__)


class SidecarProtocol(LanguageServerProtocol):
    """pygls's protocol, refusing ``claude/*`` requests until ``initialize`` has run."""

    _server: SidecarServer
    _shutdown_requested = False

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        # Checked here, on arrival, not in the async handler: by the time a handler task
        # runs, a later `initialize` may already have been processed.
        if method_name.startswith("claude/") and not self._server.initialized:
            error = ServerNotInitialized(method_name)
            self._send_response(msg_id, None, error.to_response_error())
            return
        if self._shutdown or self._shutdown_requested:
            # pygls drops requests after `shutdown` silently; a client would wait forever.
            refusal = JsonRpcInvalidRequest(
                f"{method_name}: the server is shutting down; only `exit` is accepted now"
            )
            self._send_response(msg_id, None, refusal.to_response_error())
            return
        if method_name == "shutdown":
            # Refuse what comes after it even while channels are still closing.
            self._shutdown_requested = True
        super()._handle_request(msg_id, method_name, params)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        # A SidecarError is an answer the client asked for (a bad field, an unknown
        # channel), not a daemon fault: one log line instead of pygls's ERROR traceback.
        if not future.cancelled() and isinstance(error := future.exception(), SidecarError):
            self._request_futures.pop(msg_id, None)
            log.info(
                "request %s answered with %s (%d): %s",
                msg_id,
                error.NAME,
                error.CODE,
                error.message,
            )
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):
            message = self._structure(message)
            if message is None:
                return
        if self._shutdown and isinstance(message, RPCRequest) and message.method != "exit":
            self._handle_request(message.id, message.method, message.params)
            return
        super().handle_message(message)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        # pygls's own work (and our handler) first, then the daemon's answer: pygls would
        # advertise LSP document features the daemon does not have.
        yield from super().lsp_initialize(params)
        return msgspec.to_builtins(self._server.initialize_result())

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls calls this as json.loads' object_hook, for every object of a message:
        # an object inside `params` with a "jsonrpc" key would be taken for a message of
        # its own, the message would fail to decode and its request would never be
        # answered. Only the message itself is structured (in handle_message).
        return data

    def _structure(self, data: dict[str, Any]) -> Any:
        """The message pygls's handlers take, or None after answering one that cannot be
        decoded (a request gets an error answer instead of silence)."""
        if "method" in data and "params" not in data:
            # JSON-RPC lets a request leave out `params`; pygls would fail to decode it.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if "method" in data and data.get("id") is not None:
                log.info("request %s (%s) could not be decoded: %s", data["id"], data["method"], e)
                self._send_response(data["id"], None, e.to_response_error())
            else:
                log.warning("dropped a message that could not be decoded: %.200r", data)
            return None


class SidecarServer(LanguageServer):
    """The daemon's ``claude/*`` front end: one JSON-RPC client, many channels.

    It subscribes to the hub's channel events (``open_feed``: one ``Outbox`` per channel
    turns them into notifications) and owns the daemon's life: ``close`` and ``kill_now``
    end every channel and spare CLI.
    """

    def __init__(
        self, *, cli_path: str | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        # lsprotocol's converter leaves custom params as plain dicts (pygls's default
        # turns them into namedtuples and loses keys).
        super().__init__(
            "claude-sidecar",
            __version__,
            protocol_cls=SidecarProtocol,
            converter_factory=get_converter,
        )
        self.hub = Hub(self, ask_editor=self.ask_editor, cli_path=cli_path, env=env)
        self.initialized = False
        self.client_name: str | None = None
        self.client_gone = asyncio.Event()
        # Where notifications go (set by the serving loop): batched writes to the client.
        self._queue_frame: Callable[[bytes], None] | None = None
        # Seconds between claude/delta notifications of one channel (0: no coalescing).
        self.coalesce = 0.0
        self.cli = api.CliInfo(path=None, version=None, error="not looked for yet")

    def configure(self, options: api.InitializationOptions) -> None:
        """Apply the client's ``initializationOptions`` (the hub takes its share)."""
        self.client_name = options.client_name
        self.coalesce = options.coalesce_deltas_ms / 1000
        self.hub.configure(options)
        # Told at once, so an editor can say "no CLI" before the user opens a chat.
        self.cli = describe_cli(self.hub.cli_path, self.hub.env)
        # Checked now (a few ms) rather than on the first chat's way to its first answer.
        pdeathsig_wrapper()
        self.initialized = True

    def connect(self, queue_frame: Callable[[bytes], None]) -> None:
        """Send notifications through ``queue_frame`` (one complete frame per call)."""
        self._queue_frame = queue_frame

    def open_feed(self, channel_id: str) -> Outbox:
        """The feed of a new channel: its events become ``claude/*`` notifications, kept
        back until the channel has started (``events.Subscriber``)."""
        return Outbox(channel_id, self.send_frame, held=True, coalesce=self.coalesce)

    @property
    def channel_count(self) -> int:
        """How many channels are open."""
        return self.hub.channel_count

    async def close(self, grace: float = 5.0) -> None:
        """End every channel and spare CLI, each given ``grace`` seconds to exit."""
        await self.hub.close_all(grace=grace)

    def kill_now(self) -> None:
        """SIGKILL every CLI at once; the last resort when the event loop is gone."""
        self.hub.kill_all_now()

    def initialize_result(self) -> api.InitializeResult:
        """The ``initialize`` result: the ``claude/*`` surface and the CLI in use."""
        return api.InitializeResult(
            capabilities=api.ServerCapabilities(
                experimental=api.Experimental(
                    claude_sidecar=api.SidecarFeatures(
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
        try:
            # shield: cancelling pygls's future would make the late answer an error.
            async with asyncio.timeout(timeout):
                return await asyncio.shield(answer)
        except TimeoutError:
            self.protocol.notify("$/cancelRequest", {"id": request_id})
            raise

    def send_frame(self, data: bytes) -> None:
        """Write one already-framed JSON-RPC notification to the client."""
        queue_frame = self._queue_frame
        if queue_frame is None or self.client_gone.is_set():
            return
        try:
            queue_frame(data)
        except (BrokenPipeError, ConnectionResetError, ValueError) as e:
            self.lose_client(e)

    def lose_client(self, error: OSError | ValueError) -> None:
        """The client's stream failed: nobody is listening any more.

        ValueError means the stream was already closed. The serve loop sees the event
        and closes every channel.
        """
        if not self.client_gone.is_set():
            log.error("the client's stream is gone (%s); shutting down", error)
            self.client_gone.set()


Handler = Callable[[SidecarServer, Any], Awaitable[msgspec.Struct]]


def _opened(channel: Channel) -> api.NewChannelResult:
    return api.NewChannelResult(
        channel_id=channel.id,
        pid=channel.pid,
        session_id=channel.session_id,
        info=channel.settings.info(),
    )


async def new_channel(ls: SidecarServer, p: api.NewChannelParams) -> api.Result:
    return _opened(await ls.hub.new_channel(p))


async def send_message(ls: SidecarServer, p: api.SendMessageParams) -> api.Result:
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
    return api.CloseChannelResult(exit=await ls.hub.close_channel(p.channel_id))


async def list_channels(ls: SidecarServer, p: api.ListChannelsParams) -> api.Result:
    return api.ListChannelsResult(channels=ls.hub.list())


async def respond_permission(ls: SidecarServer, p: api.RespondPermissionParams) -> api.Result:
    ls.hub.check_mode("mode", p.mode)
    ls.hub.get(p.channel_id).respond_permission(p)
    return api.Ok()


async def fork_session(ls: SidecarServer, p: api.ForkSessionParams) -> api.Result:
    return _opened(await ls.hub.fork(p))


async def rewind_files(ls: SidecarServer, p: api.RewindFilesParams) -> api.Result:
    return await rewind.rewind_files(ls.hub.get(p.channel_id), p.message_id, p.dry_run)


async def list_sessions(ls: SidecarServer, p: api.ListSessionsParams) -> Any:
    return await ls.hub.list_sessions(p.cwd, p.limit, p.cursor)


async def get_history(ls: SidecarServer, p: api.GetHistoryParams) -> Any:
    return await ls.hub.history(p.session_id, p.cwd)


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
    ls.hub.check_mode("mode", p.mode)
    await ls.hub.get(p.channel_id).set_permission_mode(p.mode)
    return api.Ok()


async def channel_info(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return ls.hub.get(p.channel_id).settings.info()


async def context_usage(ls: SidecarServer, p: api.ChannelParams) -> api.Result:
    return await ls.hub.get(p.channel_id).context_usage()


async def stop_task(ls: SidecarServer, p: api.StopTaskParams) -> api.Result:
    await ls.hub.get(p.channel_id).stop_task(p.task_id)
    return api.Ok()


async def rename_session(ls: SidecarServer, p: api.RenameSessionParams) -> api.Result:
    await ls.hub.rename_session(p.session_id, p.cwd, p.title)
    return api.Ok()


async def delete_session(ls: SidecarServer, p: api.DeleteSessionParams) -> api.Result:
    await ls.hub.delete_session(p.session_id, p.cwd)
    return api.Ok()


HANDLERS: dict[str, Handler] = {
    "claude/newChannel": new_channel,
    "claude/sendMessage": send_message,
    "claude/interrupt": interrupt,
    "claude/closeChannel": close_channel,
    "claude/listChannels": list_channels,
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
    "claude/contextUsage": context_usage,
    "claude/stopTask": stop_task,
    "claude/renameSession": rename_session,
    "claude/deleteSession": delete_session,
}


def _register(server: SidecarServer, method: api.Method, handler: Handler) -> None:
    async def serve(ls: SidecarServer, raw_params: Any) -> Any:
        params = api.decode_params(method.name, method.params, raw_params)
        return msgspec.to_builtins(await handler(ls, params))

    serve.__name__ = handler.__name__
    server.feature(method.name)(serve)


def build_server(
    *, cli_path: str | None = None, env: Mapping[str, str] | None = None
) -> SidecarServer:
    """Create the server with every ``claude/*`` method and the LSP lifecycle wired up."""
    server = SidecarServer(cli_path=cli_path, env=env)
    missing = {m.name for m in api.METHODS} ^ HANDLERS.keys()
    if missing:
        raise RuntimeError(f"method table and handlers disagree on: {sorted(missing)}")
    for method in api.METHODS:
        _register(server, method, HANDLERS[method.name])

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: SidecarServer, params: types.InitializeParams) -> None:
        options = api.decode_params(
            "initialize",
            api.InitializationOptions,
            params.initialization_options,
            "initializationOptions.",
        )
        ls.configure(options)
        log.info("initialized by %s", options.client_name or "an unnamed client")

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: SidecarServer, params: None) -> None:
        await ls.close()

    @server.feature(types.EXIT)
    async def on_exit(ls: SidecarServer, params: None) -> None:
        await ls.close(grace=1.0)

    return server
