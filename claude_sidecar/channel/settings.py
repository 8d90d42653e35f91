"""A channel's settings: what it runs with now and what a restart continues with.

The client chooses some (options at ``newChannel``, ``setModel``, ``setPermissionMode``);
the CLI reports the rest as it goes (its session id, model and mode in ``system/init``
and ``status`` lines, the retry it waits for, the background tasks it runs). Kept
here in one place, they make the channel's status, its ``claude/channelInfo`` and the
options of a CLI that continues the session (restart, fork).
"""

from __future__ import annotations

from typing import Any

import msgspec

from claude_sidecar.channel import channel_info
from claude_sidecar.cli import wire
from claude_sidecar.feed.events import StatusChanged
from claude_sidecar.protocol.api import (
    BackgroundTask,
    ChannelInfo,
    ChannelState,
    ExitInfo,
    NewChannelParams,
    RetryInfo,
    WorktreeInfo,
)

# system lines the settings keep track of: retries and background tasks.
NOTED_SYSTEM = frozenset(
    {"api_retry", "background_tasks_changed", "task_started", "task_notification"}
)


class ChannelSettings:
    """The session, model, mode, effort, retry and tasks of one channel."""

    def __init__(self, options: NewChannelParams, session_id: str, *, fork: bool) -> None:
        self.options = options
        self.session_id = session_id if fork or not options.resume else options.resume
        self.model = options.model
        # The model the client asked for (newChannel or setModel); None: the CLI's default.
        self.requested_model = options.model
        # What the CLI reports can be a mode this daemon does not list (a newer CLI's).
        self.permission_mode: str | None = options.permission_mode
        self.effort = options.effort
        # What the CLI answered to `initialize` (its commands, models, ...).
        self.reported = wire.InitializeReply()
        # The retry the CLI is waiting for (from system/api_retry), until the next answer.
        self.retry: RetryInfo | None = None
        # Background tasks (shells, sub-agents) by task id, as the CLI reports them.
        self.tasks: dict[str, BackgroundTask] = {}
        # The git worktree the CLI runs in (set by the hub; None: an ordinary folder).
        self.worktree: WorktreeInfo | None = None

    @property
    def cwd(self) -> str:
        """The directory the CLI runs in."""
        return self.options.cwd

    def started(self, reply: wire.InitializeReply) -> None:
        """Take the CLI's ``initialize`` answer; its mode is the channel's unless the
        client chose one."""
        self.reported = reply
        if reply.current_permission_mode is not None and self.permission_mode is None:
            self.permission_mode = reply.current_permission_mode

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

    def info(self) -> ChannelInfo:
        """What the CLI reported at start, with the channel's current model, mode and effort."""
        return channel_info.channel_info(
            self.reported,
            model=self.model,
            permission_mode=self.permission_mode,
            effort=self.effort,
            worktree=self.worktree,
        )

    def status(self, state: ChannelState, exit: ExitInfo | None) -> StatusChanged:
        """The channel's status event with these settings."""
        return StatusChanged(
            state,
            self.session_id,
            self.model,
            self.permission_mode,
            exit,
            self.retry,
            self.worktree,
        )

    def reported_line(self, line: wire.CliLine) -> bool:
        """Take the session, model and mode a ``system/init`` or ``status`` line reports;
        True if any changed."""
        changed = False
        if line.session_id and line.session_id != self.session_id:
            self.session_id, changed = line.session_id, True
        if line.model and line.model != self.model:
            self.model, changed = line.model, True
        if line.permissionMode and line.permissionMode != self.permission_mode:
            self.permission_mode, changed = line.permissionMode, True
        return changed

    def reported_system(self, subtype: str, raw: bytes) -> bool:
        """Take a retry or task line (``NOTED_SYSTEM``); True if the status changed."""
        if subtype == "api_retry":
            retry = wire.api_retry_decoder.decode(raw)
            self.retry = RetryInfo(
                attempt=retry.attempt,
                max_retries=retry.max_retries,
                retry_in_ms=retry.retry_delay_ms,
                error=retry.error,
                error_status=retry.error_status,
            )
            return True
        if subtype == "background_tasks_changed":
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
        return False
