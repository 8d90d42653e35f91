"""One conversation: a CLI process, its in-queue, its state, and the routing of its lines.

The channel reads every stdout line once and routes it: content deltas go to
``Feed.delta``, control traffic goes to ``control``, permission asks to
``permissions``, edit hooks to ``files``, everything else is published verbatim. It
keeps a small state machine whose every change is logged and published
(``events.StatusChanged``). Its process comes from a ``transport.Spawn``, so a test can
hand it lines without a CLI.
"""

from __future__ import annotations

import asyncio
import logging
import uuid as uuidlib
from typing import Any

import msgspec

from . import channel_info, compat, permissions, turns, wire
from .api import (
    BackgroundTask,
    CancelReason,
    ChannelInfo,
    ChannelState,
    ContextUsageResult,
    DeltaKind,
    Effort,
    ExitInfo,
    NewChannelParams,
    RespondPermissionParams,
    RetryInfo,
    TurnError,
    TurnOutcome,
    TurnUsage,
)
from .background import Background
from .control import ControlProtocol, Route
from .discovery import known_cli_version
from .editor_tools import SERVER_NAME, EditorToolServer
from .errors import (
    ChannelExited,
    CliStartFailed,
    ControlRequestFailed,
    ControlRequestTimeout,
    TaskNotFound,
)
from .events import (
    NOWHERE,
    ChannelEvent,
    CliMessage,
    Feed,
    FileUpdated,
    Progress,
    StatusChanged,
    TurnEnded,
)
from .files import EDIT_HOOKS, EditLog, FileChange
from .launch import LaunchSpec
from .transcript_wait import TranscriptWait
from .transport import CliProcess, Spawn, Transport

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0
CONTROL_TIMEOUT = 30.0
# The CLI answers an interrupt at once; one that does not is hung, and the client must
# hear so quickly (the channel can then be closed, which escalates to SIGKILL).
INTERRUPT_TIMEOUT = 5.0

# system lines the channel keeps track of: retries and background tasks.
_NOTED_SYSTEM = frozenset(
    {"api_retry", "background_tasks_changed", "task_started", "task_notification"}
)

# A stream delta's type -> the claude/delta kind and the delta's field holding the text.
_DELTA_KINDS: dict[str, tuple[DeltaKind, str]] = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("toolInput", "partial_json"),
}


class Channel:
    """One CLI process serving one conversation."""

    def __init__(
        self,
        channel_id: str,
        options: NewChannelParams,
        session_id: str,
        feed: Feed = NOWHERE,
        rules: permissions.Rules | None = None,
        fork: bool = False,
        editor_tools: EditorToolServer | None = None,
        spawn: Spawn = Transport.spawn,
    ) -> None:
        self.id = channel_id
        self.options = options
        self.cwd = options.cwd
        self.session_id = session_id if fork or not options.resume else options.resume
        self.model = options.model
        # The model the client asked for (newChannel or setModel); None: the CLI's default.
        self.requested_model = options.model
        # What the CLI reports can be a mode this daemon does not list (a newer CLI's).
        self.permission_mode: str | None = options.permission_mode
        self.effort = options.effort
        self.state: ChannelState = "starting"
        self.exit: ExitInfo | None = None
        # What the CLI answered to `initialize` (its commands, models, ...).
        self.reported = wire.InitializeReply()
        # The retry the CLI is waiting for (from system/api_retry), until the next answer.
        self.retry: RetryInfo | None = None
        # Background tasks (shells, sub-agents) by task id, as the CLI reports them.
        self.tasks: dict[str, BackgroundTask] = {}
        # The running turn (None when idle); the CLI's running cost at the last result.
        self._turn: turns.TurnClock | None = None
        self._reported_cost = 0.0
        # Cost of this channel's earlier CLI processes (it was restarted with its session).
        self.cost_before = 0.0
        self._closing = False
        self._feed = feed
        self._spawn = spawn
        self._process: CliProcess | None = None
        self._launch = LaunchSpec(argv=[], env={}, cwd=options.cwd)
        # The in-queue: lines for the CLI's stdin, in order; None closes stdin.
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._background = Background(channel_id)
        self._writer: asyncio.Task[None] | None = None
        self._control = ControlProtocol(self._name, self._queue.put_nowait, self._show)
        self.permissions = permissions.PendingAsks(
            self._name, self._queue.put_nowait, self._publish, rules or permissions.Rules()
        )
        self._interrupting = False
        self.edits = EditLog()
        # The last top-level assistant message of each prompt's exchange: a fork "at" a
        # prompt keeps the history up to there.
        self.exchange_ends: dict[str, str] = {}
        self._editor_tools = editor_tools
        self._control.serve("can_use_tool", Route(wire.can_use_tool_decoder, self._ask))
        self._control.serve("hook_callback", Route(wire.hook_callback_decoder, self._run_hook))
        self._control.serve("mcp_message", Route(wire.mcp_message_decoder, self._call_mcp))
        # uuids of user messages the CLI has not yet taken up (it echoes each one when it
        # does): a turn's result means idle only when none is left.
        self._unconsumed: set[str] = set()
        # Those it took up in the running turn (turnEnded's messageIds when the CLI's
        # result line does not list them, as 2.1.233's does not).
        self._turn_prompts: list[str] = []
        # Set for a CLI that writes its transcript after the result line (older CLIs).
        self._transcript: TranscriptWait | None = None
        self._exited = asyncio.Event()
        # Set when the first turn ends (or the CLI exits): the warm pool waits for it.
        self.first_turn_done = asyncio.Event()

    # ------------------------------------------------------------ life cycle

    def continuation(self, **changes: Any) -> NewChannelParams:
        """Options for a new CLI continuing this channel's session, as the client has it
        now (current permission mode, chosen model); used by restart and fork."""
        return msgspec.structs.replace(
            self.options,
            resume=self.session_id,
            model=self.requested_model,
            effort=self.effort,
            permission_mode=self.permission_mode or self.options.permission_mode,
            **changes,
        )

    def adopt(self, channel_id: str, options: NewChannelParams, feed: Feed) -> None:
        """Make a spare from the warm pool the channel a client asked for: it takes the
        client's id, options and feed, and announces its state there."""
        log.info("channel %s: is spare %s (pid %d)", channel_id, self.id, self.pid)
        self.id, self.options, self._feed = channel_id, options, feed
        self._background.owner = channel_id
        self._publish_status()

    def _name(self) -> str:
        return self.id

    @property
    def feed(self) -> Feed:
        """Where this channel's events go (kept across a restart)."""
        return self._feed

    @property
    def has_editor_tools(self) -> bool:
        """Whether the daemon serves the editor's tools to this channel's CLI."""
        return self._editor_tools is not None

    @property
    def pid(self) -> int:
        """The CLI's process id (0 before it is spawned)."""
        return self._process.pid if self._process else 0

    async def start(self, launch: LaunchSpec) -> None:
        """Spawn the CLI and complete the ``initialize`` handshake.

        Raises ``CliStartFailed`` if the process cannot start or exits before answering.
        """
        self._launch = launch
        try:
            self._process = process = await self._spawn(launch.argv, cwd=launch.cwd, env=launch.env)
        except OSError as e:
            launch.remove_files()
            raise CliStartFailed(f"{type(e).__name__}: {e}") from e
        self._writer = self._background.spawn(self._write_loop(), "writer", self._crashed)
        self._background.spawn(self._read_loop(), "reader", self._crashed)
        try:
            reply = await self.control("initialize", START_TIMEOUT, hooks=EDIT_HOOKS)
        except ChannelExited as e:
            reason = (
                f"it exited during start-up (exit code {e.data['exitCode']}, "
                f"signal {e.data['signal']})"
            )
            raise CliStartFailed(reason, process.stderr_tail()) from e
        except (ControlRequestTimeout, ControlRequestFailed) as e:
            tail = process.stderr_tail()
            await self.close(grace=0.5)
            raise CliStartFailed(f"`initialize` failed: {e.message}", tail) from e
        try:
            self.reported = (
                wire.initialize_reply_decoder.decode(reply) if reply else wire.InitializeReply()
            )
        except msgspec.MsgspecError as e:
            log.warning(
                "channel %s: unexpected initialize answer (%s); no channel info", self.id, e
            )
        if self.reported.claude_code_version is None:
            # Older CLIs (2.1.233) do not say their version at initialize: ask the binary
            # (once per binary; `--version` answers at once).
            version = await asyncio.to_thread(known_cli_version, launch.argv[0], launch.env)
            self.reported = msgspec.structs.replace(self.reported, claude_code_version=version)
        if compat.older_than(
            self.reported.claude_code_version, compat.WRITES_TRANSCRIPT_BEFORE_RESULT
        ):
            self._transcript = TranscriptWait(launch.env, self.cwd)
        mode = self.reported.current_permission_mode
        if mode is not None and self.permission_mode is None:
            self.permission_mode = mode
        self._set_state("idle")

    def info(self) -> ChannelInfo:
        """What the CLI reported at start, with the channel's current model, mode and effort."""
        return channel_info.channel_info(
            self.reported,
            model=self.model,
            permission_mode=self.permission_mode,
            effort=self.effort,
        )

    @property
    def total_cost(self) -> float:
        """What the channel's turns have cost so far, over every CLI process it had."""
        return self.cost_before + self._reported_cost

    async def close(self, grace: float = 5.0) -> ExitInfo:
        """Shut the CLI down (stdin EOF, grace, SIGTERM, SIGKILL) and wait for the reader."""
        assert self._process is not None and self._writer is not None
        if self.exit is None:
            self._closing = True
            self._cancel_asks("closed", permissions.DENIED_ON_CLOSE)
            # stdin is closed by the writer, after every line queued before it.
            self._queue.put_nowait(None)
            try:
                async with asyncio.timeout(grace):
                    await asyncio.wait({self._writer})
            except TimeoutError:
                log.warning("channel %s: the CLI is not reading its input", self.id)
            await self._process.shutdown(grace=grace)
            await self._exited.wait()
        self._background.cancel()
        if self._editor_tools is not None:
            await self._editor_tools.close()
        assert self.exit is not None
        return self.exit

    def _crashed(self, error: BaseException) -> None:
        # A dead reader or writer would leave the CLI blocked on a pipe: end it.
        self.kill_now()

    def kill_now(self) -> None:
        """SIGKILL the CLI's process group; used when the daemon itself is going away."""
        if self._process is not None and self.exit is None:
            self._process.kill_now()

    # ------------------------------------------------------------ requests

    def send_user_message(self, content: list[dict[str, Any]], message_id: str | None) -> str:
        """Queue a user turn; returns its uuid. Messages sent during a turn queue up."""
        self._require_alive()
        message_id = message_id or str(uuidlib.uuid4())
        self._queue.put_nowait(wire.user_message(content, message_id))
        self._unconsumed.add(message_id)
        if self.state == "idle":
            self._set_state("running")
        return message_id

    async def interrupt(self) -> None:
        """Stop the running turn; the channel stays usable.

        The CLI withdraws pending permission asks itself; any it leaves are denied here, so
        no ask outlives the turn.
        """
        self._interrupting = True
        if self._turn is not None:
            self._turn.interrupted = True
        try:
            await self.control("interrupt", INTERRUPT_TIMEOUT)
        finally:
            self._interrupting = False
            self._cancel_asks("interrupted", permissions.DENIED_ON_INTERRUPT)

    def respond_permission(self, p: RespondPermissionParams) -> None:
        """Send the client's decision on a pending ask; each ask is answered once."""
        self._require_alive()
        self.permissions.answer(p)
        self._settle_permissions()

    async def set_model(self, model: str | None, effort: Effort | None = None) -> None:
        """Switch the model (and, when given, the effort) for the following turns."""
        await self.control("set_model", CONTROL_TIMEOUT, model=model)
        self.model = self.requested_model = model
        if effort is not None:
            # The CLI has no set_effort request; its flag settings layer takes effortLevel
            # at runtime (what `/effort` changes), and the next turn sends it.
            await self.control(
                "apply_flag_settings", CONTROL_TIMEOUT, settings={"effortLevel": effort}
            )
            self.effort = effort
        self._publish_status()

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode."""
        await self.control("set_permission_mode", CONTROL_TIMEOUT, mode=mode)
        self.permission_mode = mode
        self._publish_status()

    async def stop_task(self, task_id: str) -> None:
        """Stop one background task; the CLI reports its end as ``system/task_*`` lines."""
        self._require_alive()
        if task_id not in self.tasks:
            raise TaskNotFound(self.id, task_id, sorted(self.tasks))
        await self.control("stop_task", CONTROL_TIMEOUT, task_id=task_id)

    async def context_usage(self) -> ContextUsageResult:
        """The CLI's breakdown of the context window (``/context``)."""
        reply = await self.control("get_context_usage", CONTROL_TIMEOUT)
        try:
            return channel_info.context_usage(wire.context_usage_decoder.decode(reply))
        except msgspec.MsgspecError as e:
            raise ControlRequestFailed("get_context_usage", f"unexpected answer: {e}") from e

    async def control(self, subtype: str, timeout: float, **fields: Any) -> msgspec.Raw:
        """Send a control request to the CLI and wait for its answer (empty if it had none)."""
        self._require_alive()
        return await self._control.request(subtype, timeout, **fields)

    def report_file_change(self, change: FileChange) -> None:
        """Record a change made outside the edit tools (e.g. a rewind) and tell the client."""
        self.edits.changes.append(change)
        self._publish(FileUpdated(change))

    def _require_alive(self) -> None:
        if self.exit is not None:
            raise ChannelExited(self.id, self.exit.code, self.exit.signal)

    # ------------------------------------------------------------ the CLI's requests

    def _ask(self, request_id: str, ask: wire.CanUseTool) -> None:
        if self.permissions.ask(request_id, ask):
            self._set_state("awaitingPermission")

    def _run_hook(self, request_id: str, hook: wire.HookCallback) -> None:
        change = self.edits.hook(hook)
        if change is not None:
            self._publish(FileUpdated(change))
        # An empty hook output: no opinion, the tool proceeds as it would have.
        self._queue.put_nowait(wire.control_success(request_id, {}))

    def _call_mcp(self, request_id: str, mcp: wire.McpMessage) -> None:
        self._background.spawn(self._serve_mcp(request_id, mcp), "mcp")

    async def _serve_mcp(self, request_id: str, mcp: wire.McpMessage) -> None:
        if self._editor_tools is None or mcp.server_name != SERVER_NAME:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": mcp.message.get("id"),
                "error": {
                    "code": -32601,
                    "message": f"no in-process MCP server {mcp.server_name!r}",
                },
            }
        else:
            reply = await self._editor_tools.handle(mcp.message)
        if self.exit is None:
            self._queue.put_nowait(wire.control_success(request_id, {"mcp_response": reply}))

    def _cancel_asks(self, reason: CancelReason, deny_message: str | None) -> None:
        """Withdraw every pending ask from the client; deny it to the CLI if it still runs."""
        self.permissions.cancel_all(reason, deny_message)
        self._settle_permissions()

    def _settle_permissions(self) -> None:
        if not self.permissions and self.state == "awaitingPermission":
            self._set_state("running")

    # ------------------------------------------------------------ state

    def _set_state(self, state: ChannelState) -> None:
        if state == self.state:
            return
        log.info("channel %s: %s -> %s", self.id, self.state, state)
        if state in ("running", "awaitingPermission"):
            if self._turn is None:
                self._turn = turns.TurnClock()
            self._turn.waiting(state == "awaitingPermission")
        self.state = state
        self._publish_status()

    def _publish(self, event: ChannelEvent) -> None:
        self._feed.publish(event)

    def _show(self, raw: bytes) -> None:
        self._feed.publish(CliMessage(raw))

    def _publish_status(self) -> None:
        self._feed.publish(
            StatusChanged(
                self.state, self.session_id, self.model, self.permission_mode, self.exit, self.retry
            )
        )

    # ------------------------------------------------------------ I/O loops

    async def _write_loop(self) -> None:
        assert self._process is not None
        while True:
            data = await self._queue.get()
            if data is None:
                self._process.close_stdin()
                return
            try:
                await self._process.write(data)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The reader sees EOF and reports the exit; nothing more to write.
                log.info("channel %s: stdin closed (%s)", self.id, e)
                return

    async def _read_loop(self) -> None:
        process = self._process
        assert process is not None
        try:
            async for batch in process.batches():
                for raw in batch:
                    if (
                        self._transcript is not None
                        and self._transcript.unwritten is not None
                        and _is_result(raw)
                    ):
                        await self._transcript.written(self.id, self.session_id)
                    try:
                        self._route(raw)
                    except Exception:
                        # A routing bug must not stop the reader: the CLI would block on a
                        # full pipe and the channel would hang. Log it and keep reading.
                        log.exception("channel %s: failed to route a line: %.200r", self.id, raw)
        finally:
            ended = await process.wait()
            self.exit = ExitInfo(
                code=ended.code, signal=ended.signal, stderr_tail=process.stderr_tail()
            )
            # Release waiters before telling the client: if the client is gone, the
            # notification fails, and close() must not wait for it.
            self._exited.set()
            self.first_turn_done.set()
            self._launch.remove_files()
            if self._writer is not None:
                self._writer.cancel()
            self._cancel_asks("closed", deny_message=None)
            self._control.fail_all(ChannelExited(self.id, ended.code, ended.signal))
            log.info(
                "channel %s: CLI exited (code %s, signal %s)", self.id, ended.code, ended.signal
            )
            self.retry = None
            if self._turn is not None:
                self._end_turn_by_exit(ended.code, ended.signal)
            self._set_state("exited")

    def _route(self, raw: bytes) -> None:
        if not raw or raw.isspace():  # isspace: no copy of a many-MB line, unlike strip()
            return
        try:
            line = wire.line_decoder.decode(raw)
        except msgspec.ValidationError:
            # Valid JSON that is not a typed message: pass it on, the client may know it.
            self._feed.publish(CliMessage(raw))
            return
        except msgspec.DecodeError:
            log.warning("channel %s: skipping non-JSON line: %.200r", self.id, raw)
            return
        kind = line.type
        event = line.event
        if self.retry is not None and kind in ("stream_event", "assistant", "result"):
            # The model answered again: the retry is over.
            self.retry = None
            self._publish_status()
        if event is not None and kind == "stream_event":
            delta = event.delta
            if delta is not None and event.type == "content_block_delta":
                known = _DELTA_KINDS.get(delta.type)
                text = getattr(delta, known[1]) if known is not None else None
                if known is not None and text is not None:
                    self._feed.delta(known[0], event.index or 0, text, line.parent_tool_use_id)
                    return
            self._feed.publish(CliMessage(raw))
        elif kind == "control_response" and line.response is not None:
            self._control.resolve(line.response)
        elif kind == "control_request" and line.request_id is not None:
            self._control.receive(line.request_id, line.request, raw)
        elif kind == "control_cancel_request" and line.request_id in self.permissions:
            assert line.request_id is not None
            self.permissions.withdraw(
                line.request_id, "interrupted" if self._interrupting else "withdrawn"
            )
            self._settle_permissions()
        elif kind == "system" and line.subtype == "thinking_tokens":
            self._feed.publish(Progress(raw))
        else:
            self._feed.publish(CliMessage(raw))
            if (
                self._transcript is not None
                and kind in ("user", "assistant")
                and line.uuid
                and line.parent_tool_use_id is None
                and line.uuid not in self._unconsumed
            ):
                # An answer or a tool result: the CLI stores it in the session file. (Not
                # a prompt's echo: a prompt queued for the next turn is stored with it.)
                self._transcript.unwritten = line.uuid
            if kind == "system" and line.subtype in ("init", "status"):
                self._note_settings(line)
                if line.subtype == "init" and self.state == "idle":
                    # A turn the CLI started by itself, e.g. when a background agent ends.
                    self._set_state("running")
            elif kind == "system" and line.subtype in _NOTED_SYSTEM:
                self._note_system(line.subtype, raw)
            elif kind == "user" and line.uuid in self._unconsumed:
                self._unconsumed.discard(line.uuid)
                self._turn_prompts.append(line.uuid)
                self.edits.prompt(line.uuid)
            elif kind == "assistant" and line.parent_tool_use_id is not None:
                self.edits.made_by_subagent(
                    wire.assistant_tool_uses_decoder.decode(raw).tool_use_ids(),
                    line.parent_tool_use_id,
                )
            elif kind == "assistant" and line.uuid:
                if (prompt := self.edits.current_prompt) is not None:
                    self.exchange_ends[prompt] = line.uuid
            elif kind == "result":
                self._note_result(raw)

    def _note_settings(self, line: wire.CliLine) -> None:
        """Track the session, model and mode the CLI reports (init each turn, status on change)."""
        changed = False
        if line.session_id and line.session_id != self.session_id:
            self.session_id, changed = line.session_id, True
        if line.model and line.model != self.model:
            self.model, changed = line.model, True
        if line.permissionMode and line.permissionMode != self.permission_mode:
            self.permission_mode, changed = line.permissionMode, True
        if changed:
            self._publish_status()

    def _note_system(self, subtype: str, raw: bytes) -> None:
        """Track the retry the CLI waits for and the background tasks it runs."""
        if subtype == "api_retry":
            retry = wire.api_retry_decoder.decode(raw)
            self.retry = RetryInfo(
                attempt=retry.attempt,
                max_retries=retry.max_retries,
                retry_in_ms=retry.retry_delay_ms,
                error=retry.error,
                error_status=retry.error_status,
            )
            self._publish_status()
        elif subtype == "background_tasks_changed":
            self.tasks = {
                t.task_id: BackgroundTask(
                    task_id=t.task_id, task_type=t.task_type, description=t.description
                )
                for t in wire.background_tasks_decoder.decode(raw).tasks
            }
        elif subtype == "task_started":
            task = wire.task_decoder.decode(raw)
            self.tasks[task.task_id] = BackgroundTask(
                task_id=task.task_id, task_type=task.task_type, description=task.description
            )
        else:  # task_notification: the task is over
            self.tasks.pop(wire.task_decoder.decode(raw).task_id, None)

    def _end_turn(self, line: wire.ResultLine) -> None:
        turn, self._turn = self._turn, None
        judged = turns.judge(line, turn is not None and turn.interrupted, self._reported_cost)
        self._reported_cost = line.total_cost_usd or self._reported_cost + judged.cost_usd
        self._publish(
            TurnEnded(
                judged.outcome,
                duration_ms=line.duration_ms,
                permission_wait_ms=turn.waited_ms() if turn else 0,
                cost_usd=judged.cost_usd,
                total_cost_usd=self.total_cost,
                usage=judged.usage,
                num_turns=line.num_turns,
                message_ids=line.user_message_uuids or self._turn_prompts,
                error=judged.error,
            )
        )
        self._turn_prompts = []

    def _end_turn_by_exit(self, code: int | None, signal: int | None) -> None:
        turn, self._turn = self._turn, None
        self._turn_prompts = []
        assert turn is not None
        outcome: TurnOutcome
        error: TurnError | None
        if self._closing:
            outcome, error = "interrupted", None
        else:
            outcome, error = (
                "error",
                TurnError(
                    kind="cliExited",
                    message=f"the CLI exited during the turn (exit code {code}, signal {signal})",
                ),
            )
        self._publish(
            TurnEnded(
                outcome,
                duration_ms=turn.elapsed_ms(),
                permission_wait_ms=turn.waited_ms(),
                cost_usd=0.0,
                total_cost_usd=self.total_cost,
                usage=TurnUsage(),
                error=error,
            )
        )

    def _note_result(self, raw: bytes) -> None:
        self.first_turn_done.set()
        if self.state == "starting":
            # e.g. a `resume` of an unknown session: the CLI prints an error result and exits.
            return
        try:
            line = wire.result_decoder.decode(raw)
        except msgspec.MsgspecError as e:
            log.warning("channel %s: unexpected result line (%s)", self.id, e)
            line = wire.ResultLine(is_error=True, result=f"unreadable result line: {e}")
        self._end_turn(line)
        # Messages sent mid-turn are either merged into the running turn (echoed before
        # this result) or start a turn of their own after it (not echoed yet).
        if self._unconsumed:
            self._turn = turns.TurnClock()
        else:
            self._set_state("idle")


def _is_result(raw: bytes) -> bool:
    try:
        return wire.line_type_decoder.decode(raw).type == "result"
    except msgspec.MsgspecError:
        return False
