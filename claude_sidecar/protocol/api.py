"""The ``claude/*`` JSON-RPC surface: every method, parameter, result and notification.

These msgspec types are the single source of truth for the protocol. The server
decodes client params into them once, results and notifications are encoded from them,
and docs/protocol.md is checked against them by the test suite.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from claude_sidecar.protocol.errors import InvalidParams

PermissionMode = Literal["default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions"]
ChannelState = Literal["starting", "idle", "running", "awaitingPermission", "exited"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
SettingSource = Literal["user", "project", "local"]
DeltaKind = Literal["text", "thinking", "toolInput"]

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
PageSize = Annotated[int, msgspec.Meta(ge=1)]
"""How many entries a page of a conversation holds at most (``limit``)."""


class Params(msgspec.Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=True):
    """Base of every request's params: camelCase keys, unknown keys rejected."""


class Result(msgspec.Struct, rename="camel", omit_defaults=True):
    """Base of every result and notification: camelCase keys, unset optionals omitted."""


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a UUID in its text form (``8-4-4-4-12`` hex digits, any case).

    The one check of session and message ids: request params here, stored session ids
    and list cursors in the sessions package.
    """
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def is_absolute_path(value: str) -> bool:
    """Whether ``value`` is an absolute path the OS can take (a NUL byte cannot be in one).

    The one check of client-given directories, here and in the sessions package.
    """
    return "\x00" not in value and os.path.isabs(value)


def _require_uuid(field: str, value: str | None) -> None:
    if value is not None and not is_uuid(value):
        raise InvalidParams(
            field,
            f"is not a UUID ({value[:60]!r})",
            "pass a UUID such as '0b6f3c1e-8d2a-4f5b-9c7d-1e2f3a4b5c6d' or leave it out",
        )


def _require_recorded_cwd(value: str) -> None:
    """``cwd`` naming where a stored session was recorded: absolute, but it need not exist."""
    if not is_absolute_path(value):
        raise InvalidParams(
            "cwd",
            f"is not an absolute path ({value[:200]!r})",
            "pass the directory the session was recorded in",
        )


def _require_directory(field: str, value: str) -> None:
    if not is_absolute_path(value):
        raise InvalidParams(
            field,
            f"is not an absolute path ({value[:200]!r})",
            "pass the absolute path of an existing directory",
        )
    if not os.path.isdir(value):
        raise InvalidParams(
            field,
            f"is not an existing directory ({value[:200]!r})",
            "create it first or pass an existing directory",
        )


_MCP_FIELDS = {"stdio": ("command", str), "http": ("url", str), "sse": ("url", str)}


def _check_mcp_server(name: str, config: dict[str, Any]) -> None:
    """Check one ``mcpServers`` entry in the Claude Code config shape."""
    field = f"mcpServers.{name}"
    if not name or "\x00" in name:
        raise InvalidParams("mcpServers", "has an empty server name", "name every server")
    kind = config.get("type", "stdio")
    if not isinstance(kind, str) or kind not in _MCP_FIELDS:
        raise InvalidParams(
            f"{field}.type", f"is {kind!r}", "use stdio (with command), http or sse (with url)"
        )
    key, expected = _MCP_FIELDS[kind]
    if not isinstance(config.get(key), expected) or not config[key]:
        raise InvalidParams(
            f"{field}.{key}",
            f"is required for a {kind} server",
            f"give the server's {key} as a string",
        )
    args = config.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InvalidParams(
            f"{field}.args", "is not a list of strings", "pass the arguments as strings"
        )
    for key in ("env", "headers"):
        value = config.get(key, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise InvalidParams(
                f"{field}.{key}",
                "is not an object of strings",
                f'pass {key} as {{"NAME": "value"}}',
            )


def check_input_schema(field: str, schema: dict[str, Any]) -> None:
    """Refuse a tool input schema the CLI would drop: MCP wants a JSON-Schema object.

    The CLI silently leaves out a tool whose schema it cannot use, so the model would
    never see it; the editor must hear why instead. Lua encodes an empty table as
    ``[]``, the usual way a ``properties`` ends up a list.
    """
    if schema.get("type") != "object":
        raise InvalidParams(
            f"{field}.type",
            f'is {schema.get("type")!r}, not "object"',
            'a tool takes an object of arguments: set "type": "object"',
        )
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise InvalidParams(
            f"{field}.properties",
            f"is a {type(properties).__name__}, not an object",
            "send an object of property schemas (from Lua, "
            "an empty table encodes as [], so use vim.empty_dict())",
        )
    for name, sub in properties.items():
        if not isinstance(sub, dict):
            raise InvalidParams(
                f"{field}.properties.{name}",
                "is not a schema object",
                'describe each property with an object such as {"type": "string"}',
            )
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise InvalidParams(
            f"{field}.required",
            "is not a list of property names",
            "list the required properties by name",
        )
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise InvalidParams(
            f"{field}.required",
            f"names {unknown[0]!r}, which is not in `properties`",
            "declare every required property",
        )


# ---------------------------------------------------------------- initialize

PROTOCOL_VERSION = 1
"""The ``claude/*`` protocol this daemon speaks. It rises only on a breaking change (a
field removed, renamed or made required, a meaning changed); additions are features."""

OLDEST_CLIENT_PROTOCOL = 1
"""The oldest client protocol this daemon still serves (clients send ``protocol.version``)."""

FEATURES: dict[str, str] = {
    "attach": (
        "claude/attach, claude/detach and the `clients` of claude/listChannels (the shared "
        "daemon only): without it a client hides attaching to another editor's chat"
    ),
    "stopDaemon": (
        "claude/stopDaemon (the shared daemon only): without it a client hides stopping the daemon"
    ),
    "editorTools": (
        "the `editorTools` option and claude/callEditorTool: without it a client offers the "
        "model no editor tools"
    ),
    "signIn": (
        "the `authRequired` error of a turn, with the command that signs in: without it a "
        "client shows a failed turn's error as it comes"
    ),
    "rewind": "claude/rewindFiles: without it a client hides undoing the agent's edits",
    "fork": "claude/forkSession: without it a client hides branching a conversation",
    "transcriptPaging": (
        "the `before`/`limit` params and `hasMore`/`nextCursor` results of "
        "claude/getTranscript, claude/getHistory and claude/attach, and the `limit` of "
        "claude/newChannel (its `attached` answer's last page): without it a client "
        "asks for the whole conversation at once"
    ),
    "partialListing": (
        "the `allowPartial` param of claude/listSessions, the `partial` of its sessions and "
        "claude/sessionsChanged: without it a client lists without `allowPartial` (the "
        "first listing of a long session waits until it is read whole)"
    ),
    "watchChannels": (
        "claude/watchChannels, claude/channelsChanged and the `lastEventAt`/`lastPrompt` of "
        "claude/listChannels: without it a client's overview of the chats lists them again "
        "when it is shown"
    ),
    "worktrees": (
        "the `worktree` of claude/newChannel, claude/worktreeChanges, claude/mergeWorktree, "
        "claude/removeWorktree and claude/worktreeChanged: without it a client offers no "
        "chat in a worktree"
    ),
}
"""The optional features a connection may have (``claudeSidecar.features``), each with
what a client hides when the daemon does not list it."""

SHARED_ONLY_FEATURES = frozenset({"attach", "stopDaemon"})
"""Features only a connection of the shared daemon has (``--stdio`` serves one editor)."""


class ClientName(Params):
    """``initializationOptions.protocol.client``: which client this is, for the messages
    that tell its user to upgrade it."""

    name: str
    version: str | None = None


class ClientProtocol(Params):
    """``initializationOptions.protocol``: the protocol a client speaks and needs."""

    # 0 is allowed: older than any protocol served, it gets protocolMismatch.
    version: Annotated[int, msgspec.Meta(ge=0)]
    """The protocol the client speaks."""
    oldest: Annotated[int, msgspec.Meta(ge=1)] | None = None
    """The oldest daemon protocol the client works with (default: ``version``)."""
    client: ClientName | None = None

    @property
    def needs(self) -> int:
        """The oldest daemon protocol this client works with."""
        return self.version if self.oldest is None else self.oldest


class EditorTool(Params):
    """A tool the editor offers the agent (served as ``mcp__editor__<name>``)."""

    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    description: str = ""
    input_schema: dict[str, Any] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


class WarmPoolOptions(Params):
    """``initializationOptions.warmPool``: spare CLIs started ahead of new chats."""

    size: Annotated[int, msgspec.Meta(ge=0, le=8)] = 1
    idle_seconds: Annotated[float, msgspec.Meta(gt=0, le=86400)] = 300.0
    cwd: str | None = None
    prime_context: bool = False

    def __post_init__(self) -> None:
        if self.cwd is not None:
            _require_directory("warmPool.cwd", self.cwd)


class InitializationOptions(Params):
    """``initializationOptions`` of the LSP ``initialize`` request (all optional)."""

    client_name: str | None = None
    cli_path: str | None = None
    allow_dangerously_skip_permissions: bool = False
    auto_allow_tools: list[NonEmpty] = []
    editor_tools: list[EditorTool] = []
    editor_tool_timeout: Annotated[float, msgspec.Meta(gt=0, le=600)] = 30.0
    coalesce_deltas_ms: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 0
    # The CLI's own lines as claude/message: off, since the entries say what they mean.
    raw_messages: bool = False
    warm_pool: WarmPoolOptions = msgspec.field(default_factory=WarmPoolOptions)
    # Absent: a client from before the handshake, which speaks protocol 1.
    protocol: ClientProtocol | None = None

    def __post_init__(self) -> None:
        names = [tool.name for tool in self.editor_tools]
        if len(names) != len(set(names)):
            duplicate = next(n for n in names if names.count(n) > 1)
            raise InvalidParams(
                "editorTools", f"names {duplicate!r} twice", "give every editor tool its own name"
            )
        for i, tool in enumerate(self.editor_tools):
            check_input_schema(f"editorTools[{i}].inputSchema", tool.input_schema)


# ---------------------------------------------------------------- requests


class NewChannelParams(Params):
    """``claude/newChannel``: start one CLI process for one conversation."""

    cwd: str
    model: str | None = None
    permission_mode: PermissionMode | None = None
    resume: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: list[NonEmpty] | None = None
    disallowed_tools: list[NonEmpty] | None = None
    add_dirs: list[str] | None = None
    max_thinking_tokens: Annotated[int, msgspec.Meta(ge=0)] | None = None
    env: dict[str, str] | None = None
    mcp_servers: dict[str, dict[str, Any]] | None = None
    strict_mcp_config: bool = False
    effort: Effort | None = None
    max_turns: Annotated[int, msgspec.Meta(ge=1, le=10_000)] | None = None
    max_budget_usd: Annotated[float, msgspec.Meta(gt=0)] | None = None
    fallback_model: NonEmpty | None = None
    agent: NonEmpty | None = None
    settings: dict[str, Any] | None = None
    setting_sources: list[SettingSource] | None = None
    output_style: NonEmpty | None = None
    worktree: WorktreeOptions | None = None
    # An `attached` answer's last page only (claude/attach's `limit`): a chat of 100k
    # entries joined whole was every entry read, decoded and sent.
    limit: PageSize | None = None

    def __post_init__(self) -> None:
        _require_directory("cwd", self.cwd)
        if self.fallback_model is not None and self.fallback_model == self.model:
            raise InvalidParams(
                "fallbackModel",
                f"is the same as `model` ({self.model!r})",
                "name another model to fall back to, or leave it out",
            )
        if self.setting_sources is not None and len(set(self.setting_sources)) != len(
            self.setting_sources
        ):
            raise InvalidParams(
                "settingSources",
                "names a source twice",
                "list each of user, project, local at most once",
            )
        style = (self.settings or {}).get("outputStyle")
        if self.output_style is not None and style not in (None, self.output_style):
            raise InvalidParams(
                "outputStyle",
                f"differs from settings.outputStyle ({style!r})",
                "set the output style in one place",
            )
        for name, config in (self.mcp_servers or {}).items():
            _check_mcp_server(name, config)
        _require_uuid("resume", self.resume)
        for i, directory in enumerate(self.add_dirs or ()):
            _require_directory(f"addDirs[{i}]", directory)
        if self.system_prompt is not None and self.append_system_prompt is not None:
            raise InvalidParams(
                "appendSystemPrompt",
                "cannot be combined with systemPrompt",
                "pass one of systemPrompt (replace) or appendSystemPrompt (add)",
            )


class NewChannelResult(Result):
    channel_id: str
    pid: int
    session_id: str
    info: ChannelInfo
    # ``resume`` named a session an open chat holds: no new CLI; the chat's conversation as
    # claude/attach without afterSeq gives it (the shared daemon also attaches the connection).
    attached: AttachResult | None = None


class ChannelParams(Params):
    """Params naming one channel (``claude/interrupt``, ``claude/closeChannel``)."""

    channel_id: NonEmpty


class TextBlock(msgspec.Struct, tag="text", forbid_unknown_fields=True):
    """A text content block."""

    text: str


class ImageBlock(msgspec.Struct, tag="image", rename="camel", forbid_unknown_fields=True):
    """An image content block: base64 ``data`` of ``mediaType``."""

    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: NonEmpty


ContentBlock = TextBlock | ImageBlock


class SendMessageParams(Params):
    """``claude/sendMessage``: queue one user message on a channel."""

    channel_id: NonEmpty
    text: str | None = None
    content: list[ContentBlock] | None = None
    uuid: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.content is None):
            raise InvalidParams(
                "text",
                "and `content` are both set or both missing",
                "pass exactly one: `text` (a string) or `content` (blocks)",
            )
        if self.content is not None and not self.content:
            raise InvalidParams("content", "is empty", "pass at least one text or image block")
        _require_uuid("uuid", self.uuid)

    def cli_content(self) -> list[dict[str, Any]]:
        """The message content in the Anthropic shape the CLI expects."""
        if self.text is not None:
            return [{"type": "text", "text": self.text}]
        blocks: list[dict[str, Any]] = []
        for block in self.content or ():
            if isinstance(block, TextBlock):
                blocks.append({"type": "text", "text": block.text})
            else:
                blocks.append(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": block.media_type,
                            "data": block.data,
                        },
                    }
                )
        return blocks


class SendMessageResult(Result):
    message_id: str


PermissionDecision = Literal["allow", "allowAlways", "deny"]


class RespondPermissionParams(Params):
    """``claude/respondPermission``: the user's decision on one permission request."""

    channel_id: NonEmpty
    request_id: NonEmpty
    decision: PermissionDecision
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] | None = None
    message: str | None = None
    interrupt: bool = False
    answers: dict[str, str] | None = None
    annotations: dict[str, dict[str, Any]] | None = None
    mode: PermissionMode | None = None

    def __post_init__(self) -> None:
        if self.decision == "deny":
            for name, value in (
                ("updatedInput", self.updated_input),
                ("updatedPermissions", self.updated_permissions),
                ("answers", self.answers),
                ("mode", self.mode),
            ):
                if value is not None:
                    raise InvalidParams(
                        name, "cannot be combined with decision `deny`", "leave it out, or allow"
                    )
        elif self.interrupt:
            raise InvalidParams(
                "interrupt", "only applies to decision `deny`", "leave it out, or deny"
            )
        elif self.message is not None:
            raise InvalidParams(
                "message",
                "only applies to decision `deny` (the model sees it as the reason)",
                "leave it out, or deny",
            )
        if self.annotations is not None and self.answers is None:
            raise InvalidParams(
                "annotations", "needs `answers`", "pass the answers the annotations belong to"
            )


class RewindFilesParams(Params):
    """``claude/rewindFiles``: restore files to how they were when a prompt was sent."""

    channel_id: NonEmpty
    message_id: str
    dry_run: bool = False

    def __post_init__(self) -> None:
        _require_uuid("messageId", self.message_id)


class FileDiff(Result, omit_defaults=False):
    """What a rewind does (or would do) to one file."""

    path: str
    diff: str | None
    note: str | None = None


class RewindFilesResult(Result, omit_defaults=False):
    can_rewind: bool
    files_changed: list[str]
    insertions: int
    deletions: int
    diffs: list[FileDiff]


class ForkSessionParams(Params):
    """``claude/forkSession``: a new channel whose session starts with another's history."""

    channel_id: str | None = None
    session_id: str | None = None
    at_message_id: str | None = None
    cwd: str | None = None

    def __post_init__(self) -> None:
        if (self.channel_id is None) == (self.session_id is None):
            raise InvalidParams(
                "channelId",
                "and `sessionId` are both set or both missing",
                "pass exactly one: the live channel or the stored session",
            )
        _require_uuid("sessionId", self.session_id)
        _require_uuid("atMessageId", self.at_message_id)
        if self.cwd is not None:
            _require_directory("cwd", self.cwd)


class ListSessionsParams(Params):
    """``claude/listSessions``: the sessions the CLI stored for a directory, newest first."""

    cwd: str
    limit: Annotated[int, msgspec.Meta(ge=1, le=500)] = 50
    cursor: str | None = None
    allow_partial: bool = False
    """Answer at once: a session file not read whole yet may come from its head and tail
    (``partial``), and ``claude/sessionsChanged`` follows once it has been read."""

    def __post_init__(self) -> None:
        _require_directory("cwd", self.cwd)


class StoredSessionParams(Params):
    """Params naming a stored session: its id and the directory it was recorded in."""

    session_id: str
    cwd: str

    def __post_init__(self) -> None:
        _require_uuid("sessionId", self.session_id)
        _require_recorded_cwd(self.cwd)


class GetHistoryParams(StoredSessionParams):
    """``claude/getHistory``: a stored conversation as messages a client can render.

    ``before``/``limit`` page ``entries`` backwards as ``claude/getTranscript`` does (the
    cursor is a ``nextCursor`` of this session's getHistory); with ``limit`` the legacy
    ``messages`` list is empty."""

    before: str | None = None
    limit: PageSize | None = None


class DeleteSessionParams(StoredSessionParams):
    """``claude/deleteSession``: delete a stored session for good."""


class RenameSessionParams(StoredSessionParams):
    """``claude/renameSession``: give a stored session a custom title."""

    title: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.title.strip():
            raise InvalidParams(
                "title",
                "is empty or only whitespace",
                'pass the title to show, e.g. "Fix the login bug"',
            )
        # JSON may carry a lone surrogate ("\udc80"); it cannot be written to the file.
        if any("\ud800" <= c <= "\udfff" for c in self.title):
            raise InvalidParams(
                "title",
                "holds text that is not valid Unicode (a lone surrogate)",
                "send the title as valid UTF-8 text",
            )


# The results of claude/listSessions and claude/getHistory: the sessions package fills them
# from the CLI's session files.


class SessionSummary(Result):
    """One stored session, as a session picker shows it.

    ``title``: the session's custom title (``/rename`` or :func:`rename_session`), else the
    CLI's AI title, else its summary entry, else ``firstPrompt`` cut to 80 characters.
    ``customTitle``: the custom title alone (the last one set, stripped), omitted if the
    session never got one: it tells a title the user chose from a generated one.
    ``firstPrompt``: the first prompt the user typed (a slash command only if there is
    nothing else), whitespace collapsed, cut to 200 characters. ``updatedAt``/``createdAt``:
    the newest/oldest entry timestamp in the file (the file's mtime if none), ISO 8601 UTC
    with milliseconds.
    ``messageCount``: user prompts plus assistant responses on the current conversation
    chain (see :func:`read_history`); one response counts once however many blocks
    (thinking, text, tool calls) it has; API-error stand-ins and sub-agents do not count.
    ``cwd``: the working directory the CLI recorded; ``gitBranch``: the last one recorded.
    ``partial``: (only with ``allowPartial``) the file was read at its head and tail only,
    not yet whole: ``messageCount`` is not known (it is the count of the file's last whole
    read, 0 if none), and a title written only mid-file may be missing; a
    ``claude/sessionsChanged`` follows once it has been read. Omitted when false.
    ``worktree``: the name of the worktree of the listed folder's checkout
    (``.claude/worktrees/<name>``) the session was stored in: a chat opened there, listed
    with the folder it was made from; omitted for the folder's own sessions.
    """

    session_id: str
    title: str
    first_prompt: str
    updated_at: str
    created_at: str
    message_count: int
    custom_title: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    partial: bool = False
    worktree: str | None = None


class SessionPage(Result):
    """A page of sessions, newest first; ``nextCursor`` is null on the last page."""

    sessions: list[SessionSummary]
    next_cursor: str | None


HistoryKind = Literal["userPrompt", "assistantText", "thinking", "toolUse", "toolResult", "system"]


class HistoryMessage(Result):
    """One thing an editor renders in a conversation.

    ``uuid`` is the uuid of the file entry it comes from; for a ``userPrompt`` of the main
    conversation it is the message id ``claude/sendMessage`` returned (usable for rewind
    and fork). Several messages share a uuid when one entry held several blocks.

    * ``userPrompt``: ``text`` (a slash command as typed, e.g. ``/compact``; ``!cmd`` for
      shell-mode input), ``imageCount`` when images were attached.
    * ``assistantText`` / ``thinking``: ``text``.
    * ``toolUse``: ``toolName``, ``toolUseId``, ``input``.
    * ``toolResult``: ``toolUseId``, ``text`` (the text parts of the result), ``isError``,
      ``imageCount``, and ``permission`` (``allowed``/``denied``) when the user was asked.
    * ``system``: ``subtype`` and ``text``: ``compactBoundary``, ``compactSummary`` (the
      summary that replaced the earlier conversation), ``commandOutput`` (slash/shell
      command output), ``interrupted``, ``taskNotification`` (a background task or agent
      finished), ``apiError``, or another CLI system subtype in camelCase.

    ``parentToolUseId`` is set on messages of a sub-agent: the id of the ``Agent``/``Task``
    tool use that started it (its ``userPrompt`` is the prompt it was given).
    """

    kind: HistoryKind
    uuid: str
    timestamp: str | None = None
    text: str | None = None
    subtype: str | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    input: Any = None
    is_error: bool = False
    image_count: int = 0
    parent_tool_use_id: str | None = None
    permission: Literal["allowed", "denied"] | None = None


class History(Result, omit_defaults=False):
    """A session's conversation, oldest first, and what could not be read.

    ``warnings`` has one line per problem found (with its line number): corrupt or
    truncated lines, unknown entries, broken links. The messages are whatever could
    be read despite them. ``hasMore``/``nextCursor``: as ``claude/getTranscript``'s, over
    ``entries``.
    """

    session_id: str
    messages: list[HistoryMessage]
    warnings: list[str]
    entries: list[Entry]
    has_more: bool = False
    next_cursor: str | None = None


# ---------------------------------------------------------------- the conversation

ToolStatus = Literal[
    "pending", "awaitingPermission", "running", "done", "failed", "denied", "interrupted"
]
AskState = Literal["pending", "answered", "allowed", "denied", "cancelled"]
NoticeLevel = Literal["info", "warn", "error"]


class EntryPermission(Result):
    """How a tool use's permission request went.

    ``decision``: ``pending`` (waiting for the user), ``answered`` (the user answered and
    the tool's result will say how), ``allowed``, ``denied``, or ``cancelled`` (the turn
    ended or the CLI withdrew the ask). ``byRule``: a client rule (``autoAllowTools``)
    allowed it and nobody was asked. ``requestId`` is what ``claude/respondPermission``
    answers (absent in a stored session's history).
    """

    decision: AskState
    request_id: str | None = None
    by_rule: bool = False
    preview: str | None = None
    preview_note: str | None = None
    decision_reason: str | None = None


class EntryToolResult(Result):
    """The result of a tool use: the text parts of its content, and how many images."""

    text: str
    is_error: bool = False
    image_count: int = 0


class EntryFileChange(Result):
    """A file a tool use changed, with the size of the change (``claude/fileUpdated``
    carries its diff and contents)."""

    path: str
    added: int
    removed: int


class PromptEntry(Result, tag_field="kind", tag="prompt"):
    """A prompt: the user's (``id`` is the message id ``claude/sendMessage`` returned), or
    the one a sub-agent was given (``parentId`` set). ``queued``: sent while a turn runs
    and not taken up by the CLI yet."""

    id: str
    text: str
    image_count: int = 0
    queued: bool = False
    parent_id: str | None = None


class TextEntry(Result, tag_field="kind", tag="text"):
    """Text of an answer (markdown). ``streaming`` while deltas still append to it;
    ``aborted`` when an interrupt cut it short."""

    id: str
    text: str
    streaming: bool = False
    aborted: bool = False
    parent_id: str | None = None


class ThinkingEntry(Result, tag_field="kind", tag="thinking"):
    """The model's thinking, shown apart from its answer."""

    id: str
    text: str
    streaming: bool = False
    parent_id: str | None = None


class ToolEntry(Result, tag_field="kind", tag="tool"):
    """A tool use (``id`` is its tool_use id). ``input`` is null while it streams (the
    ``toolInput`` deltas append to ``partialInput``); ``files`` lists what it changed."""

    id: str
    name: str
    status: ToolStatus
    input: dict[str, Any] | None = None
    partial_input: str = ""
    permission: EntryPermission | None = None
    result: EntryToolResult | None = None
    files: list[EntryFileChange] = []
    parent_id: str | None = None


class NoticeEntry(Result, tag_field="kind", tag="notice"):
    """Something the CLI reported in the conversation: ``subtype`` ``compaction``,
    ``cleared`` (``/clear``), ``commandOutput`` (a slash or shell command's output),
    ``interrupted``, ``apiError``, ``taskNotification`` (a background task ended), or
    another CLI subtype in camelCase; and the daemon's own ``unreadableHistory`` (what of
    a resumed or forked session's file could not be read)."""

    id: str
    subtype: str
    level: NoticeLevel
    text: str
    parent_id: str | None = None


class TurnEntry(Result, tag_field="kind", tag="turn"):
    """The end of a turn (its footer): how it ended, how long it took, what it cost."""

    id: str
    outcome: TurnOutcome
    duration_ms: int
    permission_wait_ms: int
    cost_usd: float
    error: str | None = None
    parent_id: str | None = None


Entry = PromptEntry | TextEntry | ThinkingEntry | ToolEntry | NoticeEntry | TurnEntry
"""One thing in a conversation, by ``kind``. ``id`` is stable for the entry's life: a
later ``claude/entry`` with the same id replaces it. ``parentId`` is set on what a
sub-agent did: the id of the Agent/Task tool use that started it."""


class TranscriptParams(Params):
    """``claude/getTranscript``: a channel's conversation, whole or a page at a time.

    Without ``limit``, every entry (before ``before`` if given). With ``limit``, the last
    ``limit`` entries before ``before`` (or before the end), oldest first. ``before`` is a
    ``nextCursor`` of this channel's getTranscript (or claude/attach), passed unchanged.
    """

    channel_id: NonEmpty
    before: str | None = None
    limit: PageSize | None = None


class Transcript(Result, omit_defaults=False):
    """A live channel's conversation (``claude/getTranscript``): its entries in order,
    queued prompts last, current as of the notification numbered ``seq``.

    ``hasMore``: older entries exist; ``nextCursor`` (null when ``hasMore`` is false) is
    the ``before`` of the page before this one. The page without ``before`` also holds the
    prompts still queued, last, beyond ``limit``; a cursor never moves as entries are added.
    """

    channel_id: str
    seq: int
    entries: list[Entry]
    has_more: bool = False
    next_cursor: str | None = None


class McpServerParams(Params):
    """``claude/mcpReconnect``: restart one MCP server of a channel."""

    channel_id: NonEmpty
    server_name: NonEmpty


class McpToggleParams(Params):
    """``claude/mcpToggle``: enable or disable one MCP server of a channel."""

    channel_id: NonEmpty
    server_name: NonEmpty
    enabled: bool


class McpServerStatus(Result):
    """One MCP server as the channel's CLI sees it."""

    name: str
    status: str
    tools: list[str] = []
    error: str | None = None
    transport: str | None = None
    scope: str | None = None
    server_info: dict[str, Any] | None = None


class McpStatusResult(Result, omit_defaults=False):
    servers: list[McpServerStatus]


class SetModelParams(Params):
    """``claude/setModel``: switch the model of a channel (null or absent: the default),
    and with ``effort`` how hard it thinks."""

    channel_id: NonEmpty
    model: str | None = None
    effort: Effort | None = None


class SetPermissionModeParams(Params):
    """``claude/setPermissionMode``: switch a channel's permission mode."""

    channel_id: NonEmpty
    mode: PermissionMode


class ListChannelsParams(Params):
    """``claude/listChannels`` takes no parameters."""


class ExitInfo(Result):
    """How a channel's CLI process ended."""

    code: int | None
    signal: int | None
    stderr_tail: str


class PermissionRequest(Result):
    """A tool use waiting for the user's decision (or decided by a client rule)."""

    request_id: str
    tool_name: str
    tool_use_id: str | None
    input: dict[str, Any]
    suggestions: list[Any]
    display_name: str | None = None
    blocked_path: str | None = None
    description: str | None = None
    decision_reason: str | None = None
    requires_user_interaction: bool = False
    preview: str | None = None
    preview_note: str | None = None
    parent_tool_use_id: str | None = None
    auto_decision: Literal["allow"] | None = None


class BackgroundTask(Result):
    """A task running in the background of a channel (a shell, a sub-agent)."""

    task_id: str
    task_type: str | None = None
    description: str | None = None


class AttachedClient(Result):
    """A connection of a shared daemon attached to a chat."""

    connection_id: str
    client_name: str | None = None


class ChannelSummary(Result):
    """One open channel, as ``claude/listChannels`` lists it."""

    channel_id: str
    pid: int
    session_id: str
    cwd: str
    state: ChannelState
    model: str | None = None
    permission_mode: str | None = None
    exit: ExitInfo | None = None
    pending_permissions: list[PermissionRequest] = []
    tasks: list[BackgroundTask] = []
    # Shared daemon: the connections attached to the chat (empty over --stdio).
    clients: list[AttachedClient] = []
    # When the chat last did something (ISO 8601, UTC): an event of its CLI, a prompt, a
    # permission asked or answered.
    last_event_at: str | None = None
    # The first line of the last prompt sent to it (as far as its conversation is read).
    last_prompt: str | None = None
    worktree: WorktreeInfo | None = None
    # A worktree chat's changes against its base, as its last claude/worktreeChanged
    # counted them (None: not counted yet, or no worktree).
    changes: WorktreeTotals | None = None


class ListChannelsResult(Result):
    channels: list[ChannelSummary]


class WatchChannelsParams(Params):
    """``claude/watchChannels``: send this connection ``claude/channelsChanged`` whenever
    a chat of the daemon starts, ends or changes what claude/listChannels says of it
    (``watch: false`` stops it). The answer lists every chat as it is now."""

    watch: bool = True


class ChannelsChangedNotification(Result, omit_defaults=False):
    """``claude/channelsChanged`` (after claude/watchChannels): the chats that changed,
    each whole as claude/listChannels gives it (a new one too), and the ids of those that
    ended. Changes are sent together, within about 0.1 s; a chat that only goes on producing
    output is sent again at most every 2 s (its ``lastEventAt``). Not about one channel: no
    ``channelId`` or ``seq``."""

    channels: list[ChannelSummary]
    closed: list[str]


class AttachParams(Params):
    """``claude/attach``: receive a running chat's notifications on this connection (shared
    daemon). With ``afterSeq`` (the last seq this client saw of the chat) the missed
    notifications are sent first; without it the answer carries the chat as it is now:
    with ``limit``, its last ``limit`` entries (``claude/getTranscript`` pages back)."""

    channel_id: NonEmpty
    after_seq: Annotated[int, msgspec.Meta(ge=0)] | None = None
    limit: PageSize | None = None


class AttachResult(Result, omit_defaults=False):
    """A chat this connection is now attached to: notifications numbered after ``seq``
    follow live. ``replayed`` missed notifications were sent before this answer; when
    ``entries`` is set (no ``afterSeq``, or ``missed``: it was older than the chat's replay
    window) they are the conversation as of ``seq`` (its last ``limit`` entries if the
    request gave one), with the permission requests waiting for an answer. ``hasMore``/
    ``nextCursor``: older entries exist, and the ``before`` that claude/getTranscript
    takes for them."""

    channel_id: str
    pid: int
    session_id: str
    info: ChannelInfo
    seq: int
    replayed: int = 0
    missed: bool = False
    entries: list[Entry] | None = None
    pending_permissions: list[PermissionRequest] = []
    has_more: bool = False
    next_cursor: str | None = None


class StopDaemonParams(Params):
    """``claude/stopDaemon``: end a shared daemon and every chat in it. Refused while a
    chat is in a turn, unless ``force``; with ``only_if_no_chats``, refused while it has any
    chat (how ``connect`` replaces an idle daemon of another version)."""

    force: bool = False
    only_if_no_chats: bool = False


class StopDaemonResult(Result, omit_defaults=False):
    closed_channels: int


class StopTaskParams(Params):
    """``claude/stopTask``: stop one background task of a channel."""

    channel_id: NonEmpty
    task_id: NonEmpty


# ---------------------------------------------------------------- what the CLI reports


class SlashCommand(Result):
    """A slash command the channel's CLI accepts (type it as the message text)."""

    name: str
    description: str = ""
    argument_hint: str = ""
    aliases: list[str] = []
    builtin: bool = False


class AgentInfo(Result):
    """A sub-agent the model can start, or the channel can run as (``agent``)."""

    name: str
    description: str = ""
    model: str | None = None


class ModelInfo(Result):
    """A model a client can offer in its picker (``value`` goes to claude/setModel)."""

    value: str
    display_name: str
    description: str = ""
    resolved_model: str | None = None
    supports_effort: bool = False
    supported_effort_levels: list[str] = []
    supports_adaptive_thinking: bool = False
    supports_fast_mode: bool = False
    supports_auto_mode: bool = False


class AccountInfo(Result):
    """Where the CLI's credentials come from; never a key or a token."""

    api_provider: str | None = None
    api_key_source: str | None = None
    token_source: str | None = None
    email: str | None = None
    organization: str | None = None
    subscription_type: str | None = None


class ContextReading(Result, omit_defaults=False):
    """How full the context window is, as of the main conversation's last model call:
    the tokens that call was sent (input, cache reads and writes) of its model's window,
    as the CLI reported them. No tokens are counted for it (unlike ``claude/contextUsage``)."""

    total_tokens: int
    max_tokens: int
    percentage: float


class ChannelInfo(Result, omit_defaults=False):
    """What a channel's CLI reported when it started: ``claude/channelInfo``, with what
    the conversation has cost and how full its context is so far (for a resumed or forked
    channel, its recorded turns included)."""

    cli_version: str | None
    commands: list[SlashCommand]
    agents: list[AgentInfo]
    models: list[ModelInfo]
    output_style: str | None
    available_output_styles: list[str]
    account: AccountInfo | None
    fast_mode_state: str | None
    model: str | None
    permission_mode: str | None
    effort: Effort | None
    total_cost_usd: float = 0.0
    """What the conversation has cost so far (US dollars): the turns this daemon recorded
    for its session (a resumed channel's, or a fork's copied history), then its own."""
    context: ContextReading | None = None
    """The context window after the last model call of the main conversation (a resumed
    or forked one's: as recorded at its last turn); null until one is known."""
    worktree: WorktreeInfo | None = None
    """The git worktree the chat runs in; null for a chat in an ordinary folder."""


class ContextCategory(Result):
    """One share of the context window (system prompt, tools, messages, free space...)."""

    name: str
    tokens: int
    id: str | None = None
    kind: str | None = None
    deferred: bool = False


class ContextUsageResult(Result, omit_defaults=False):
    """``claude/contextUsage``: how full the channel's context window is."""

    total_tokens: int
    max_tokens: int
    percentage: float
    model: str | None
    categories: list[ContextCategory]
    auto_compact_threshold: int | None
    auto_compact_enabled: bool


class Ok(Result, omit_defaults=False):
    """The result of requests that only confirm."""

    ok: bool = True


class CloseChannelResult(Result):
    exit: ExitInfo


class CliInfo(Result, omit_defaults=False):
    """The CLI the daemon runs for new channels, or why there is none."""

    path: str | None
    version: str | None
    error: str | None = None
    source: str | None = None
    """Where it was found: ``--cli``, ``$CLAUDE_SIDECAR_CLI``, ``PATH``,
    ``claude-agent-sdk bundle`` or ``~/.claude/local`` (``cliPath`` counts as ``--cli``)."""
    tested: bool | None = None
    """Whether ``version`` is within ``testedVersions`` (null when the version is unknown)."""
    tested_versions: list[str] = msgspec.field(default_factory=list)
    """The CLI versions this daemon's test suite runs against."""


class AuthInfo(Result, omit_defaults=False):
    """How the CLI authenticates, as its ``auth status`` reports it: never a secret."""

    logged_in: bool | None
    """Null when the CLI could not say (see ``error``)."""
    method: str | None = None
    """The CLI's ``authMethod``: ``api_key``, ``api_key_helper``, ``claude.ai``, ``none``..."""
    source: str | None = None
    """Where a key comes from (the CLI's ``apiKeySource``): ``ANTHROPIC_API_KEY``,
    ``apiKeyHelper``..."""
    provider: str | None = None
    """``firstParty``, ``bedrock``, ``vertex``..."""
    base_url: str | None = None
    """``ANTHROPIC_BASE_URL`` without any user:password part; null for the default API."""
    error: str | None = None


class PlatformInfo(Result, omit_defaults=False):
    """The system the daemon runs on, and whether claude-sidecar supports it there."""

    system: str
    """``Linux``, ``macOS``, ``Windows``, ... (Python's ``platform.system()``)."""
    machine: str
    """The processor as the system names it: ``x86_64``, ``aarch64``, ``arm64``, ..."""
    support: Literal["supported", "throughWsl", "untested"]
    """``supported``: Linux on x86-64 or arm64 (WSL's included) and macOS;
    ``throughWsl``: Windows, where claude-sidecar runs inside WSL; ``untested``: any
    other system, where it may work."""


class DoctorReport(Result, omit_defaults=False):
    """What ``claude-sidecar doctor --json`` prints: the facts behind a working set-up."""

    daemon_version: str
    python: str
    platform: PlatformInfo
    cli: CliInfo
    auth: AuthInfo
    config_dir: str
    """The CLI's config home (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``): sessions live here."""
    problems: list[str]
    """What stops channels from working, each with its fix; empty when none."""
    warnings: list[str]
    """What may not work (e.g. a CLI outside the tested range)."""


class ServerInfo(Result, omit_defaults=False):
    name: str
    version: str


class SidecarFeatures(Result, omit_defaults=False):
    """The ``claude/*`` surface this daemon serves, and the CLI it runs.

    Sent as an experimental capability: typed LSP clients (lsp4j, vscode-languageclient)
    keep those as free-form JSON, where they would drop unknown result keys.
    """

    methods: list[str]
    notifications: list[str]
    client_requests: list[str]
    cli: CliInfo
    # Always sent; the defaults are what a daemon from before the handshake means (protocol 1),
    # so that `claude-sidecar connect` and `status` can read such a daemon's answer.
    protocol_version: int = 1
    """The ``claude/*`` protocol this daemon speaks (``api.PROTOCOL_VERSION``)."""
    oldest_client_protocol: int = 1
    """The oldest client protocol it serves (``api.OLDEST_CLIENT_PROTOCOL``)."""
    features: list[str] = msgspec.field(default_factory=list)
    """The optional features this connection can use (``api.FEATURES``)."""
    ignored_options: list[str] = msgspec.field(default_factory=list)
    """The ``initializationOptions`` keys this daemon did not know and ignored."""


class Experimental(Result, omit_defaults=False):
    claude_sidecar: SidecarFeatures


class ServerCapabilities(Result, omit_defaults=False):
    """Only what the daemon does: no LSP document features."""

    experimental: Experimental


class InitializeResult(Result, omit_defaults=False):
    """The result of ``initialize``."""

    capabilities: ServerCapabilities
    server_info: ServerInfo


# ---------------------------------------------------------------- notifications


class DeltaNotification(Result, gc=False):
    """``claude/delta``: one streamed content delta."""

    # gc=False: strings and numbers only, never in a cycle; one is built per delta.

    channel_id: str
    seq: int
    kind: DeltaKind
    index: int
    text: str
    parent_tool_use_id: str | None = None
    entry_id: str | None = None


class MessageNotification(Result):
    """``claude/message``: one CLI message, verbatim."""

    channel_id: str
    seq: int
    message: msgspec.Raw


class RetryInfo(Result):
    """The CLI is waiting to retry a failed model request (HTTP 429, 5xx, 529)."""

    attempt: int
    max_retries: int
    retry_in_ms: int
    error: str
    error_status: int | None = None


class StatusNotification(Result):
    """``claude/status``: the channel's state, model, mode or retry changed."""

    channel_id: str
    seq: int
    state: ChannelState
    session_id: str
    model: str | None = None
    permission_mode: str | None = None
    exit: ExitInfo | None = None
    retry: RetryInfo | None = None
    worktree: WorktreeInfo | None = None


CancelReason = Literal["withdrawn", "interrupted", "closed", "answeredElsewhere"]
TurnOutcome = Literal["success", "interrupted", "error", "maxTurns", "maxBudget"]
TurnErrorKind = Literal["api", "execution", "cliExited", "authRequired"]


class TurnError(Result):
    """Why a turn ended with outcome ``error``. ``code`` and ``data``: the error's
    JSON-RPC code and structured fields (as in the Errors table), for a kind that has
    them (``authRequired``)."""

    kind: TurnErrorKind
    message: str
    status: int | None = None
    code: int | None = None
    data: dict[str, Any] | None = None


class TurnUsage(Result, omit_defaults=False):
    """Tokens one turn used, over all its model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class TurnEndedNotification(Result):
    """``claude/turnEnded``: a turn is over, and how it went."""

    channel_id: str
    seq: int
    outcome: TurnOutcome
    duration_ms: int
    permission_wait_ms: int
    cost_usd: float
    total_cost_usd: float
    usage: TurnUsage
    num_turns: int = 0
    message_ids: list[str] = []
    error: TurnError | None = None
    context: ContextReading | None = None


class EntryNotification(Result):
    """``claude/entry``: an entry of the conversation was added or changed; it replaces
    any earlier entry with the same ``id``."""

    channel_id: str
    seq: int
    entry: Entry


class PermissionRequestNotification(PermissionRequest):
    """``claude/permissionRequest``: a tool use needs the user's decision."""

    channel_id: str = ""
    seq: int = 0


class PermissionCancelledNotification(Result):
    """``claude/permissionCancelled``: a pending request no longer needs an answer."""

    channel_id: str
    seq: int
    request_id: str
    reason: CancelReason


class SessionsChangedNotification(Result):
    """``claude/sessionsChanged``: stored sessions of ``cwd`` that a
    ``claude/listSessions`` with ``allowPartial`` gave as ``partial`` have been read whole:
    listing again gives their exact summaries. Not about a channel: no ``channelId``."""

    cwd: str
    session_ids: list[str]


class WorktreeFileCount(Result, omit_defaults=False):
    """One changed file of a worktree, counted (``claude/worktreeChanged``)."""

    path: str
    status: FileStatus
    added: int | None
    deleted: int | None


class WorktreeTotals(Result, omit_defaults=False):
    """What a worktree chat changed against its base, in short: how many files, and the
    lines added and deleted (claude/listChannels' ``changes``)."""

    files: int
    added: int
    deleted: int


class WorktreeChangedNotification(Result, omit_defaults=False):
    """``claude/worktreeChanged``: the set of files a worktree chat changed, or their
    counts, changed (checked after an edit tool's result and when a turn ends)."""

    channel_id: str
    seq: int
    files: list[WorktreeFileCount]
    added: int
    deleted: int


class FileUpdatedNotification(Result, omit_defaults=False):
    """``claude/fileUpdated``: a file changed on disk by an edit tool or a rewind."""

    channel_id: str
    seq: int
    path: str
    tool_name: str
    tool_use_id: str | None
    message_id: str | None
    old_content: str | None
    new_content: str | None
    diff: str | None
    notice: str | None = None
    parent_tool_use_id: str | None = None


class CallEditorToolParams(Result, omit_defaults=False):
    """``claude/callEditorTool``: a request the daemon sends the client (server -> client).

    The result is the tool's output: a string, or any JSON value (sent to the model as
    JSON text). A JSON-RPC error, or no answer within ``editorToolTimeout``, becomes a
    tool error the model sees.
    """

    channel_id: str
    tool: str
    arguments: dict[str, Any]


# ---------------------------------------------------------------- the table


# ---------------------------------------------------------------- worktrees

WORKTREE_NAME = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}(/[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,3}"
)
"""A worktree's name: what the CLI's ``--worktree`` takes, one to four ``/``-separated parts."""

MergeStrategy = Literal["merge", "squash", "rebase"]
FileStatus = Literal["added", "modified", "deleted", "renamed"]


class WorktreeOptions(Params):
    """``claude/newChannel``'s ``worktree``: the chat runs in a git worktree of its own."""

    name: NonEmpty | None = None
    base_ref: NonEmpty = "head"

    def __post_init__(self) -> None:
        if self.name is not None and (
            WORKTREE_NAME.fullmatch(self.name) is None
            or any(part.endswith((".", ".lock")) or ".." in part for part in self.name.split("/"))
        ):
            raise InvalidParams(
                "worktree.name",
                f"is not a worktree name ({self.name[:80]!r})",
                "use letters, digits, '.', '_' and '-' (up to 64), parts joined by '/'",
            )


class WorktreeInfo(Result, omit_defaults=False):
    """The git worktree a chat runs in (made by ``claude/newChannel``'s ``worktree``, or
    one under ``.claude/worktrees/`` that a resumed or forked chat runs in)."""

    name: str
    path: str
    branch: str
    base_ref: str
    base_commit: str
    base_branch: str | None
    root: str


class WorktreeCommit(Result, omit_defaults=False):
    """One commit of a worktree's branch that its base does not have."""

    commit: str
    subject: str


class WorktreeFile(Result, omit_defaults=False):
    """One file a worktree's agent changed (base commit -> files on disk)."""

    path: str
    status: FileStatus
    old_path: str | None
    added: int | None
    deleted: int | None
    binary: bool
    size: int
    uncommitted: bool
    diff: str | None
    omitted: Literal["binary", "tooLarge"] | None


class WorktreeChangesResult(Result, omit_defaults=False):
    """``claude/worktreeChanges``: what the chat's worktree changed against its base."""

    worktree: WorktreeInfo
    head: str
    commits: list[WorktreeCommit]
    files: list[WorktreeFile]
    added: int
    deleted: int


class MergeWorktreeParams(Params):
    """``claude/mergeWorktree``: bring a worktree chat's branch into its base branch."""

    channel_id: NonEmpty
    strategy: MergeStrategy
    message: NonEmpty | None = None


class MergeWorktreeResult(Result, omit_defaults=False):
    strategy: MergeStrategy
    target: str
    previous: str
    commit: str
    committed: str | None
    files: list[str]
    checkout: str | None


class RemoveWorktreeParams(Params):
    """``claude/removeWorktree``: close a worktree chat, remove its worktree and branch."""

    channel_id: NonEmpty
    force: bool = False


class RemoveWorktreeResult(Result, omit_defaults=False):
    path: str
    branch: str
    session_id: str
    exit: ExitInfo
    discarded_commits: list[str]
    discarded_files: list[str]
    closed_channels: list[str]


@dataclass(frozen=True)
class Method:
    """One ``claude/*`` request: its params and result types and what it does."""

    name: str
    params: type[Params]
    result: type[msgspec.Struct]
    summary: str


METHODS: tuple[Method, ...] = (
    Method(
        "claude/newChannel",
        NewChannelParams,
        NewChannelResult,
        "Start a CLI process for one conversation in `cwd`.",
    ),
    Method(
        "claude/sendMessage",
        SendMessageParams,
        SendMessageResult,
        "Queue a user message; returns its uuid as soon as it is queued.",
    ),
    Method("claude/interrupt", ChannelParams, Ok, "Stop the running turn."),
    Method(
        "claude/closeChannel",
        ChannelParams,
        CloseChannelResult,
        "End the CLI process gracefully and forget the channel.",
    ),
    Method(
        "claude/listChannels",
        ListChannelsParams,
        ListChannelsResult,
        "Every open channel with its state.",
    ),
    Method(
        "claude/watchChannels",
        WatchChannelsParams,
        ListChannelsResult,
        "Every open channel, then claude/channelsChanged whenever one changes.",
    ),
    Method(
        "claude/respondPermission",
        RespondPermissionParams,
        Ok,
        "Answer a permission request: allow, allow always, or deny.",
    ),
    Method(
        "claude/rewindFiles",
        RewindFilesParams,
        RewindFilesResult,
        "Undo the agent's file edits back to one of the user's messages.",
    ),
    Method(
        "claude/forkSession",
        ForkSessionParams,
        NewChannelResult,
        "Branch a conversation into a new channel; the source is untouched.",
    ),
    Method(
        "claude/listSessions",
        ListSessionsParams,
        SessionPage,
        "The sessions stored for a directory, newest first, a page at a time.",
    ),
    Method(
        "claude/getHistory",
        GetHistoryParams,
        History,
        "A stored conversation as messages a client can render.",
    ),
    Method(
        "claude/renameSession",
        RenameSessionParams,
        Ok,
        "Give a stored session a custom title (what claude/listSessions shows).",
    ),
    Method(
        "claude/deleteSession",
        DeleteSessionParams,
        Ok,
        "Delete a stored session for good (refused while a channel uses it).",
    ),
    Method(
        "claude/mcpStatus",
        ChannelParams,
        McpStatusResult,
        "Each MCP server of a channel: status and tools.",
    ),
    Method("claude/mcpReconnect", McpServerParams, Ok, "Restart one MCP server."),
    Method("claude/mcpToggle", McpToggleParams, Ok, "Enable or disable one MCP server."),
    Method("claude/setModel", SetModelParams, Ok, "Switch the channel's model."),
    Method(
        "claude/setPermissionMode",
        SetPermissionModeParams,
        Ok,
        "Switch the channel's permission mode.",
    ),
    Method(
        "claude/channelInfo",
        ChannelParams,
        ChannelInfo,
        "What the channel's CLI offers: commands, agents, models, output styles.",
    ),
    Method(
        "claude/getTranscript",
        TranscriptParams,
        Transcript,
        "A live channel's conversation: its entries, current as of a notification's seq.",
    ),
    Method(
        "claude/contextUsage",
        ChannelParams,
        ContextUsageResult,
        "How full the channel's context window is, by category.",
    ),
    Method("claude/stopTask", StopTaskParams, Ok, "Stop a background task of a channel."),
    Method(
        "claude/worktreeChanges",
        ChannelParams,
        WorktreeChangesResult,
        "A worktree chat's changes against its base: files, counts and diffs.",
    ),
    Method(
        "claude/mergeWorktree",
        MergeWorktreeParams,
        MergeWorktreeResult,
        "Merge, squash or rebase a worktree chat's branch into its base branch.",
    ),
    Method(
        "claude/removeWorktree",
        RemoveWorktreeParams,
        RemoveWorktreeResult,
        "Close a worktree chat and remove its worktree and branch.",
    ),
    Method(
        "claude/attach",
        AttachParams,
        AttachResult,
        "Shared daemon: receive a running chat's notifications here, with what was missed.",
    ),
    Method(
        "claude/detach",
        ChannelParams,
        Ok,
        "Shared daemon: stop receiving a chat's notifications; the chat keeps running.",
    ),
    Method(
        "claude/stopDaemon",
        StopDaemonParams,
        StopDaemonResult,
        "Shared daemon: close every chat and end the daemon (refused mid-turn unless forced).",
    ),
)

CLIENT_REQUESTS: dict[str, type[Result]] = {
    "claude/callEditorTool": CallEditorToolParams,
}
"""Requests the daemon sends to the client (the client answers them)."""

NOTIFICATIONS: dict[str, type[Result]] = {
    "claude/delta": DeltaNotification,
    "claude/message": MessageNotification,
    "claude/status": StatusNotification,
    "claude/permissionRequest": PermissionRequestNotification,
    "claude/permissionCancelled": PermissionCancelledNotification,
    "claude/fileUpdated": FileUpdatedNotification,
    "claude/turnEnded": TurnEndedNotification,
    "claude/entry": EntryNotification,
    "claude/sessionsChanged": SessionsChangedNotification,
    "claude/channelsChanged": ChannelsChangedNotification,
    "claude/worktreeChanged": WorktreeChangedNotification,
}


# ---------------------------------------------------------------- decoding

_FIELD_RE = re.compile(r"`\$\.([^`]+)`")
_MISSING_RE = re.compile(r"missing required field `([^`]+)`")
_UNKNOWN_RE = re.compile(r"unknown field `([^`]+)`")


P = TypeVar("P", bound=Params)


def decode_params(
    method: str,
    params_type: type[P],
    params: Any,
    prefix: str = "",
    ignored: list[str] | None = None,
) -> P:
    """Turn a request's raw params into ``params_type`` or raise ``InvalidParams``.

    ``prefix`` is prepended to field names in errors (e.g. ``initializationOptions.``).
    With ``ignored`` (``initialize``'s options, which a newer client may extend), a key no
    struct knows, at any depth, is left out instead of refused, and its path appended there.
    """
    if params is None:
        params = {}
    while True:
        try:
            return msgspec.convert(params, params_type, strict=True)
        except msgspec.ValidationError as e:
            unknown = _unknown_key(str(e)) if ignored is not None else None
            without = _without(params, unknown) if unknown is not None else None
            if unknown is None or without is None:
                raise _invalid(method, str(e), prefix) from e
            assert ignored is not None
            ignored.append(prefix + unknown)
            params = without
        except UnicodeEncodeError as e:
            # msgspec cannot even describe a value holding a lone surrogate (JSON "\udc80").
            raise InvalidParams(
                prefix.rstrip(".") or "params",
                "holds text that is not valid Unicode (a lone surrogate)",
                f"send valid UTF-8 text; see {method} in docs/protocol.md",
            ) from e
        except InvalidParams as e:
            if not prefix:
                raise
            # Raised by a struct's own checks: name the field as the client sees it.
            field = e.data["field"]
            raise InvalidParams(
                prefix + field,
                e.message.split(f"`{field}` ", 1)[-1].split("; ")[0],
                e.message.rsplit("; ", 1)[-1],
            ) from e


_STEP_RE = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def _unknown_key(text: str) -> str | None:
    """The path of the unknown key msgspec's error names (``warmPool.newer``), if it is one."""
    m = _UNKNOWN_RE.search(text)
    if m is None:
        return None
    at = _FIELD_RE.search(text)
    path = at.group(1) if at else ""
    if "[...]" in path:
        return None  # inside a free-form dict: no struct of ours
    return f"{path}.{m.group(1)}" if path else m.group(1)


def _without(params: Any, path: str) -> Any:
    """A copy of ``params`` without the key at ``path`` (copied along the path only, so the
    client's value is untouched), or None when the path does not lead to that key."""
    steps: list[str | int] = [int(index) if index else key for index, key in _STEP_RE.findall(path)]

    def drop(node: Any, rest: list[str | int]) -> Any:
        step = rest[0]
        if isinstance(step, str) and isinstance(node, dict) and step in node:
            if len(rest) == 1:
                return {k: v for k, v in node.items() if k != step}
            inner = drop(node[step], rest[1:])
            return None if inner is None else {**node, step: inner}
        if isinstance(step, int) and isinstance(node, list) and step < len(node) and rest[1:]:
            inner = drop(node[step], rest[1:])
            return None if inner is None else [*node[:step], inner, *node[step + 1 :]]
        return None

    return drop(params, steps)


def _invalid(method: str, text: str, prefix: str) -> InvalidParams:
    """Map msgspec's validation message to an ``InvalidParams`` naming the field."""
    fix = f"see {method} in docs/protocol.md"
    at = _FIELD_RE.search(text)
    # msgspec writes dict keys as `[...]`; the dict's own name is the useful part.
    path = at.group(1).replace("[...]", "") if at else ""
    if m := _MISSING_RE.search(text):
        field = f"{path}.{m.group(1)}" if path else m.group(1)
        return InvalidParams(prefix + field, "is required", fix)
    if m := _UNKNOWN_RE.search(text):
        field = f"{path}.{m.group(1)}" if path else m.group(1)
        return InvalidParams(
            prefix + field, "is not a known parameter", f"remove it or check its spelling; {fix}"
        )
    field = prefix + path if path else prefix.rstrip(".") or "params"
    return InvalidParams(field, f"is invalid: {text.split(' - at ')[0]}", fix)
