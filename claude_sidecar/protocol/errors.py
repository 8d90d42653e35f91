"""Every error the daemon reports, with its JSON-RPC code.

Each class carries structured fields in ``data`` so a client can act on the error
without parsing the message. The codes are documented in docs/protocol.md; the
table ``ERROR_CODES`` below is the single source for that section.
"""

from __future__ import annotations

import signal as signals
from pathlib import Path
from typing import Any


def process_end(exit_code: int | None, signal: int | None) -> str:
    """How a process ended, as a message says it: ``exit code 1``, ``killed by SIGKILL,
    signal 9``; users read it, so the half that does not apply is left out, not ``None``."""
    if signal is not None:
        try:
            name = signals.Signals(signal).name
        except ValueError:
            return f"killed by signal {signal}"
        return f"killed by {name}, signal {signal}"
    if exit_code is not None:
        return f"exit code {exit_code}"
    return "its exit status unknown"


class SidecarError(Exception):
    """Base of every error the daemon sends as a JSON-RPC error response.

    Independent of any JSON-RPC library (each front end answers it in its own way), so
    that a front end loads only its own: the ACP agent never imports pygls.
    """

    CODE = -32603
    NAME = "internalError"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.CODE
        # `name` and the error's own fields.
        self.data: dict[str, Any] = {"name": self.NAME, **data}


class InvalidParams(SidecarError):
    """A request parameter is missing, has the wrong type, or an invalid value."""

    CODE = -32602
    NAME = "invalidParams"

    def __init__(self, field: str, problem: str, fix: str) -> None:
        super().__init__(f"invalid params: `{field}` {problem}; {fix}", field=field)


class ServerNotInitialized(SidecarError):
    """A ``claude/*`` request arrived before ``initialize``."""

    CODE = -32002
    NAME = "serverNotInitialized"

    def __init__(self, method: str) -> None:
        super().__init__(
            f"{method} was sent before `initialize`; send `initialize` first",
            method=method,
        )


class ChannelNotFound(SidecarError):
    """The ``channelId`` names no channel of this daemon."""

    CODE = -32001
    NAME = "channelNotFound"

    def __init__(self, channel_id: str) -> None:
        super().__init__(
            f"no channel `{channel_id}`; use a channelId returned by claude/newChannel "
            "(claude/listChannels lists the open ones)",
            channelId=channel_id,
        )


class ChannelExited(SidecarError):
    """The channel's CLI process has exited; the request cannot be served."""

    CODE = -32003
    NAME = "channelExited"

    def __init__(self, channel_id: str, exit_code: int | None, signal: int | None) -> None:
        super().__init__(
            f"channel `{channel_id}` has exited ({process_end(exit_code, signal)}); "
            "send it a message (claude/sendMessage restarts it with its session) or close "
            "it with claude/closeChannel",
            channelId=channel_id,
            exitCode=exit_code,
            signal=signal,
        )


class CliNotFound(SidecarError):
    """No Claude Code CLI binary was found in any of the places looked."""

    CODE = -32004
    NAME = "cliNotFound"

    def __init__(self, looked: list[str]) -> None:
        places = "; ".join(looked)
        super().__init__(
            f"Claude Code CLI not found (looked in: {places}); install it "
            "(`npm install -g @anthropic-ai/claude-code` or `pip install claude-agent-sdk`), "
            "or pass `--cli PATH` / set CLAUDE_SIDECAR_CLI / the `cliPath` initialize option",
            looked=looked,
        )


class CliStartFailed(SidecarError):
    """The CLI binary exists but could not be started or died during start-up."""

    CODE = -32005
    NAME = "cliStartFailed"

    def __init__(self, reason: str, stderr_tail: str = "") -> None:
        super().__init__(
            f"the Claude Code CLI failed to start: {reason}; check the CLI path, the cwd and "
            "the stderr tail in `data.stderrTail`",
            reason=reason,
            stderrTail=stderr_tail,
        )


class ControlRequestFailed(SidecarError):
    """The CLI answered a control request with an error."""

    CODE = -32006
    NAME = "controlRequestFailed"

    def __init__(self, subtype: str, error: str) -> None:
        super().__init__(
            f"the CLI refused `{subtype}`: {error}; check the value you sent "
            "(the channel is still usable)",
            subtype=subtype,
            cliError=error,
        )


class ControlRequestTimeout(SidecarError):
    """The CLI did not answer a control request in time."""

    CODE = -32007
    NAME = "controlRequestTimeout"

    def __init__(self, subtype: str, timeout: float) -> None:
        super().__init__(
            f"the CLI did not answer `{subtype}` within {timeout:g} s; the CLI may be hung: "
            "retry, or close the channel with claude/closeChannel",
            subtype=subtype,
            timeoutSeconds=timeout,
        )


class PermissionRequestNotFound(SidecarError):
    """The permission request was already answered, cancelled, or never asked."""

    CODE = -32008
    NAME = "permissionRequestNotFound"

    def __init__(self, channel_id: str, request_id: str) -> None:
        super().__init__(
            f"channel `{channel_id}` has no pending permission request `{request_id}`: it was "
            "already answered, withdrawn (claude/permissionCancelled), or never asked; "
            "claude/listChannels lists the pending ones",
            channelId=channel_id,
            requestId=request_id,
        )


class SessionNotFound(SidecarError):
    """No stored session with that id for that directory."""

    CODE = -32009
    NAME = "sessionNotFound"

    def __init__(self, session_id: str, cwd: str) -> None:
        super().__init__(
            f"no stored session `{session_id}` for `{cwd}`; claude/listSessions lists the "
            "sessions of a directory (pass the directory the session was recorded in)",
            sessionId=session_id,
            cwd=cwd,
        )


class TaskNotFound(SidecarError):
    """The channel has no running background task with that id."""

    CODE = -32010
    NAME = "taskNotFound"

    def __init__(self, channel_id: str, task_id: str, running: list[str]) -> None:
        listed = ", ".join(running) if running else "none"
        super().__init__(
            f"channel `{channel_id}` has no running background task `{task_id}` (running: "
            f"{listed}); it may have ended already (a `system/task_notification` message "
            "says so); claude/listChannels lists each channel's tasks",
            channelId=channel_id,
            taskId=task_id,
            running=running,
        )


class SessionInUse(SidecarError):
    """The session is the conversation of an open channel of this daemon."""

    CODE = -32011
    NAME = "sessionInUse"

    def __init__(self, session_id: str, channel_id: str) -> None:
        super().__init__(
            f"session `{session_id}` is open in channel `{channel_id}`; close the channel "
            "with claude/closeChannel first, then delete the session",
            sessionId=session_id,
            channelId=channel_id,
        )


class NotShared(SidecarError):
    """A method of the shared daemon was sent to a private one (``--stdio``)."""

    CODE = -32012
    NAME = "notShared"

    def __init__(self, method: str) -> None:
        super().__init__(
            f"{method} needs the shared daemon: this one serves one editor over --stdio; "
            "run `claude-sidecar connect` as the daemon command to share chats",
            method=method,
        )


class ChatsRunning(SidecarError):
    """``claude/stopDaemon`` while chats are in a turn, without ``force``."""

    CODE = -32013
    NAME = "chatsRunning"

    def __init__(self, channel_ids: list[str]) -> None:
        super().__init__(
            f"{len(channel_ids)} chat(s) are in a turn ({', '.join(channel_ids)}); wait for "
            "them to end, interrupt them, or send claude/stopDaemon with force: true",
            channelIds=channel_ids,
        )


class ChatsOpen(SidecarError):
    """``claude/stopDaemon`` with ``onlyIfNoChats`` while the daemon has chats."""

    CODE = -32014
    NAME = "chatsOpen"

    def __init__(self, channel_ids: list[str]) -> None:
        super().__init__(
            f"the daemon has {len(channel_ids)} chat(s) ({', '.join(channel_ids)}); "
            "send claude/stopDaemon without onlyIfNoChats to close them",
            channelIds=channel_ids,
        )


class AuthRequired(SidecarError):
    """The CLI has no credentials, or the API refused them: the user must sign in.

    Known only when a turn reaches the model (the CLI starts without credentials), so it
    is a turn's error (``claude/turnEnded``) and the ACP agent's answer to the prompt.
    """

    CODE = -32015
    NAME = "authRequired"

    def __init__(
        self,
        reason: str,
        how: str,
        fix: str,
        routes: list[str],
        cli_text: str,
        status: int | None = None,
    ) -> None:
        said = (
            "Claude Code has no credentials"
            if reason == "noCredentials"
            else f"the model API refused Claude Code's credentials (HTTP {status})"
        )
        super().__init__(
            f"{said}; {fix}",
            reason=reason,
            how=how,
            fix=fix,
            routes=routes,
            cliText=cli_text,
            status=status,
        )


class ProtocolMismatch(SidecarError):
    """The client and the daemon speak ``claude/*`` protocols too far apart: ``initialize``
    fails, and ``upgrade`` says which side to upgrade (``fix`` is the command)."""

    CODE = -32016
    NAME = "protocolMismatch"

    def __init__(
        self,
        upgrade: str,
        client: str,
        daemon_protocol: int,
        oldest_client_protocol: int,
        client_protocol: int,
        client_oldest: int,
        daemon_version: str,
        fix: str,
    ) -> None:
        if upgrade == "client":
            said = (
                f"This claude-sidecar daemon ({daemon_version}, protocol {daemon_protocol}) no "
                f"longer serves clients of protocol {client_protocol} (the oldest it serves is "
                f"{oldest_client_protocol}): upgrade {client}: {fix}"
            )
        else:
            said = (
                f"{client} needs a claude-sidecar daemon of protocol {client_oldest} or newer; "
                f"this daemon ({daemon_version}) speaks protocol {daemon_protocol}: upgrade "
                f"claude-sidecar: {fix}, then restart the editor"
            )
        super().__init__(
            said,
            upgrade=upgrade,
            daemonProtocol=daemon_protocol,
            oldestClientProtocol=oldest_client_protocol,
            clientProtocol=client_protocol,
            clientOldest=client_oldest,
            daemonVersion=daemon_version,
            fix=fix,
        )


class GitFailed(SidecarError):
    """A git command the daemon ran for a worktree failed in a way it did not expect."""

    CODE = -32017
    NAME = "gitFailed"

    def __init__(self, command: list[str], cwd: str, stderr: str) -> None:
        super().__init__(
            f"`git {' '.join(command)[:300]}` failed in {cwd}: {stderr[:2000]}; check the "
            "repository there (`git status`), then try again",
            command=command,
            cwd=cwd,
            stderr=stderr,
        )


class GitIdentityMissing(SidecarError):
    """git has no name or email to make a commit with (``user.name``, ``user.email``)."""

    CODE = -32022
    NAME = "gitIdentityMissing"

    def __init__(self, cwd: str, stderr: str) -> None:
        fix = (
            'git config --global user.name "Your Name" && '
            "git config --global user.email you@example.com"
        )
        super().__init__(
            f"git has no name and email to commit the chat's work with in {cwd}; set them "
            f"(`{fix}`, or without --global for this repository only), then try again",
            cwd=cwd,
            fix=fix,
            stderr=stderr,
        )


class ChatBusy(SidecarError):
    """A request that needs the chat between turns came while it runs one."""

    CODE = -32018
    NAME = "chatBusy"

    def __init__(self, channel_id: str, state: str, method: str) -> None:
        super().__init__(
            f"chat `{channel_id}` is in a turn (state {state}); wait for it to end or "
            f"interrupt it (claude/interrupt), then send {method} again",
            channelId=channel_id,
            state=state,
        )


class MergeConflict(SidecarError):
    """Merging a worktree's branch conflicts; nothing was changed."""

    CODE = -32019
    NAME = "mergeConflict"

    def __init__(self, branch: str, target: str, strategy: str, files: list[str]) -> None:
        super().__init__(
            f"merging {branch} into {target} ({strategy}) conflicts in {len(files)} file(s): "
            f"{', '.join(files[:20])}; nothing was changed: resolve them in the worktree "
            "(e.g. ask the chat to merge the target branch) and merge again",
            branch=branch,
            target=target,
            strategy=strategy,
            files=files,
        )


class UncommittedChanges(SidecarError):
    """A merge would change files that have uncommitted changes in the user's checkout."""

    CODE = -32020
    NAME = "uncommittedChanges"

    def __init__(self, checkout: str, files: list[str]) -> None:
        super().__init__(
            f"the merge would change {len(files)} file(s) with uncommitted changes in "
            f"{checkout}: {', '.join(files[:20])}; commit or stash them there, then merge again",
            checkout=checkout,
            files=files,
        )


class UnmergedWork(SidecarError):
    """Removing a worktree would lose work that was never merged (without ``force``)."""

    CODE = -32021
    NAME = "unmergedWork"

    def __init__(self, branch: str, commits: list[str], uncommitted_files: list[str]) -> None:
        lost = []
        if commits:
            lost.append(f"{len(commits)} unmerged commit(s) ({'; '.join(commits[:5])})")
        if uncommitted_files:
            lost.append(
                f"{len(uncommitted_files)} uncommitted file(s) "
                f"({', '.join(uncommitted_files[:10])})"
            )
        super().__init__(
            f"removing {branch} would lose {' and '.join(lost)}; merge it first "
            "(claude/mergeWorktree) or send claude/removeWorktree with force: true",
            branch=branch,
            commits=commits,
            uncommittedFiles=uncommitted_files,
        )


ERROR_CODES: tuple[type[SidecarError], ...] = (
    InvalidParams,
    ServerNotInitialized,
    ChannelNotFound,
    ChannelExited,
    CliNotFound,
    CliStartFailed,
    ControlRequestFailed,
    ControlRequestTimeout,
    PermissionRequestNotFound,
    SessionNotFound,
    TaskNotFound,
    SessionInUse,
    NotShared,
    ChatsRunning,
    ChatsOpen,
    AuthRequired,
    ProtocolMismatch,
    GitFailed,
    ChatBusy,
    MergeConflict,
    UncommittedChanges,
    UnmergedWork,
    GitIdentityMissing,
)
"""Every error class, in the order docs/protocol.md lists them."""


class UnsafePlace(SidecarError):
    """The shared daemon's socket directory or file could be reached or replaced by
    another user (a start-up error, not a JSON-RPC answer)."""

    NAME = "unsafeSocketPlace"

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        super().__init__(f"{path} {problem}; {fix}", path=str(path))


class AlreadyServing(SidecarError):
    """Another daemon holds the shared socket's lock (a start-up error)."""

    NAME = "alreadyServing"

    def __init__(self, socket: Path) -> None:
        super().__init__(f"a daemon already serves {socket}", socket=str(socket))


class DaemonUnreachable(SidecarError):
    """The shared daemon could not be reached or started (a start-up error)."""

    NAME = "daemonUnreachable"


class EditorUnavailable(SidecarError):
    """No attached client can run the editor tool a chat's CLI called: none offers it, or
    the client asked left before answering (the model gets it as the tool's error)."""

    NAME = "editorUnavailable"

    def __init__(self, channel_id: str, tool: str, why: str) -> None:
        super().__init__(
            f"{why}: chat {channel_id}, tool {tool!r}", channelId=channel_id, tool=tool
        )
