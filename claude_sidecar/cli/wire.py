"""Typed views of the CLI's stream-json lines, decoded once at the edge.

The CLI prints one JSON object per line. The daemon only needs a handful of fields
to route a line (its type, a content delta, a control request id); everything else is
forwarded to the client verbatim as the original bytes. So ``CliLine`` declares just
those fields and msgspec skips the rest without building Python objects for them.
"""

from __future__ import annotations

from typing import Any

import msgspec

# The structs every line is decoded into (gc=False) hold only strings, numbers, raw
# bytes and each other, so they can never be part of a reference cycle: kept out of the
# cycle collector, they take ~15% off decoding a delta line and encoding its notification.


class Delta(msgspec.Struct, omit_defaults=True, gc=False):
    """The ``delta`` of a ``content_block_delta`` stream event."""

    type: str
    text: str | None = None
    thinking: str | None = None
    partial_json: str | None = None


class StreamEvent(msgspec.Struct, omit_defaults=True, gc=False):
    """The raw Anthropic SSE event inside a ``stream_event`` line."""

    type: str
    index: int | None = None
    delta: Delta | None = None


class StreamEventLine(msgspec.Struct, gc=False):
    """A ``stream_event`` line: only what routing it needs (the hot path of a turn)."""

    type: str
    event: StreamEvent | None = None
    parent_tool_use_id: str | None = None


STREAM_EVENT_PREFIX = b'{"type":"stream_event",'
"""How the CLI starts every ``stream_event`` line (its keys in this order, verified with
2.1.233 and 2.1.330); a line that starts otherwise still routes, on the general path."""


class ControlResponseBody(msgspec.Struct, omit_defaults=True, gc=False):
    """The ``response`` of a ``control_response`` line."""

    subtype: str
    request_id: str
    # msgspec.Raw cannot be part of a union; an empty Raw means the field was absent.
    response: msgspec.Raw = msgspec.Raw()
    error: str | None = None


class CliLine(msgspec.Struct, omit_defaults=True, gc=False):
    """One line from the CLI's stdout: the routing fields only."""

    type: str
    subtype: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    # stream_event
    event: StreamEvent | None = None
    # control_request (CLI -> host) and control_cancel_request
    request_id: str | None = None
    request: msgspec.Raw = msgspec.Raw()
    # control_response (answer to one of our requests)
    response: ControlResponseBody | None = None
    # system/init and result
    model: str | None = None
    permissionMode: str | None = None
    # system/session_state_changed
    state: str | None = None


class ControlRequestHead(msgspec.Struct):
    """The subtype of a control request the CLI sends us."""

    subtype: str


class CanUseTool(msgspec.Struct, omit_defaults=True):
    """A ``can_use_tool`` control request: the CLI asks whether a tool may run."""

    tool_name: str
    input: dict[str, Any] = {}
    tool_use_id: str | None = None
    permission_suggestions: list[Any] | None = None
    display_name: str | None = None
    blocked_path: str | None = None
    description: str | None = None
    decision_reason: str | None = None
    requires_user_interaction: bool = False
    agent_id: str | None = None


class HookInput(msgspec.Struct, omit_defaults=True):
    """The event a hook callback reports (PreToolUse / PostToolUse fields)."""

    hook_event_name: str
    tool_name: str | None = None
    tool_input: dict[str, Any] = {}
    tool_use_id: str | None = None
    tool_response: Any = None


class HookCallback(msgspec.Struct, omit_defaults=True):
    """A ``hook_callback`` control request for a hook registered at ``initialize``."""

    callback_id: str
    input: HookInput
    tool_use_id: str | None = None


class _ContentBlock(msgspec.Struct):
    type: str
    id: str | None = None


class _AssistantBody(msgspec.Struct):
    content: list[_ContentBlock] = []


class AssistantToolUses(msgspec.Struct):
    """Just the tool_use ids of an ``assistant`` line (decoded for sub-agent lines only)."""

    message: _AssistantBody = msgspec.field(default_factory=_AssistantBody)

    def tool_use_ids(self) -> list[str]:
        return [b.id for b in self.message.content if b.type == "tool_use" and b.id]


class _TextBlock(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _ApiErrorBody(msgspec.Struct):
    content: list[_TextBlock] = []


class ApiErrorMessage(msgspec.Struct):
    """The synthetic ``assistant`` line the CLI sends for a model request that failed:
    its ``error`` kind (``authentication_failed`` for missing or refused credentials), the
    HTTP status (none when no request was made) and the CLI's words."""

    is_api_error_message: bool = False
    error: str | None = None
    api_error_status: int | None = None
    message: _ApiErrorBody = msgspec.field(default_factory=_ApiErrorBody)

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.message.content if b.text)


class RewindReply(msgspec.Struct, omit_defaults=True):
    """The CLI's answer to ``rewind_files`` (dry runs add the counts)."""

    canRewind: bool = False
    error: str | None = None
    filesChanged: list[str] = []
    insertions: int = 0
    deletions: int = 0


class McpTool(msgspec.Struct):
    name: str


class McpServer(msgspec.Struct, omit_defaults=True):
    """One server in the CLI's ``mcp_status`` answer."""

    name: str
    status: str
    error: str | None = None
    tools: list[McpTool] = []
    transport: str | None = None
    scope: str | None = None
    serverInfo: dict[str, Any] | None = None


class McpStatusReply(msgspec.Struct):
    mcpServers: list[McpServer] = []


class McpMessage(msgspec.Struct):
    """An ``mcp_message`` control request: JSON-RPC for an in-process MCP server."""

    server_name: str
    message: dict[str, Any]


class InitCommand(msgspec.Struct, omit_defaults=True):
    name: str
    description: str = ""
    argumentHint: str = ""
    aliases: list[str] = []
    builtin: bool = False


class InitAgent(msgspec.Struct, omit_defaults=True):
    name: str
    description: str = ""
    model: str | None = None


class InitModel(msgspec.Struct, omit_defaults=True):
    value: str
    displayName: str = ""
    description: str = ""
    resolvedModel: str | None = None
    supportsEffort: bool = False
    supportedEffortLevels: list[str] = []
    supportsAdaptiveThinking: bool = False
    supportsFastMode: bool = False
    supportsAutoMode: bool = False


class InitAccount(msgspec.Struct, omit_defaults=True):
    """The account fields the daemon passes on; anything else (tokens) is never read."""

    apiProvider: str | None = None
    apiKeySource: str | None = None
    tokenSource: str | None = None
    email: str | None = None
    organization: str | None = None
    subscriptionType: str | None = None


class InitializeReply(msgspec.Struct, omit_defaults=True):
    """The CLI's answer to the ``initialize`` control request (the fields used)."""

    commands: list[InitCommand] = []
    agents: list[InitAgent] = []
    models: list[InitModel] = []
    output_style: str | None = None
    available_output_styles: list[str] = []
    account: InitAccount | None = None
    claude_code_version: str | None = None
    current_permission_mode: str | None = None
    fast_mode_state: str | None = None


class ResultUsage(msgspec.Struct, omit_defaults=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class ModelUsage(msgspec.Struct, omit_defaults=True):
    costUSD: float = 0.0


class ResultLine(msgspec.Struct, omit_defaults=True):
    """A ``result`` line: how a turn ended."""

    subtype: str = ""
    is_error: bool = False
    duration_ms: int = 0
    num_turns: int = 0
    total_cost_usd: float = 0.0
    usage: ResultUsage = msgspec.field(default_factory=ResultUsage)
    # Per model, what this turn cost (CLI 2.1.3xx; older ones only give the running total).
    model_usage_since_last_result: dict[str, ModelUsage] | None = None
    terminal_reason: str | None = None
    api_error_status: int | None = None
    result: str | None = None
    errors: list[str] = []
    user_message_uuids: list[str] = []


class ApiRetry(msgspec.Struct, omit_defaults=True):
    """A ``system/api_retry`` line: a model request failed and will be retried."""

    attempt: int = 0
    max_retries: int = 0
    retry_delay_ms: int = 0
    error_status: int | None = None
    error: str = ""


class TaskEntry(msgspec.Struct, omit_defaults=True):
    task_id: str
    task_type: str | None = None
    description: str | None = None


class BackgroundTasks(msgspec.Struct):
    """A ``system/background_tasks_changed`` line: every task running now."""

    tasks: list[TaskEntry] = []


class ContextCategory(msgspec.Struct, omit_defaults=True):
    name: str
    tokens: int = 0
    id: str | None = None
    kind: str | None = None
    isDeferred: bool = False


class ContextUsageReply(msgspec.Struct, omit_defaults=True):
    """The CLI's answer to ``get_context_usage`` (the terminal grid is left out)."""

    totalTokens: int = 0
    maxTokens: int = 0
    percentage: float = 0.0
    model: str | None = None
    categories: list[ContextCategory] = []
    autoCompactThreshold: int | None = None
    isAutoCompactEnabled: bool = False


line_decoder = msgspec.json.Decoder(CliLine)
stream_event_decoder = msgspec.json.Decoder(StreamEventLine)
initialize_reply_decoder = msgspec.json.Decoder(InitializeReply)
result_decoder = msgspec.json.Decoder(ResultLine)
api_retry_decoder = msgspec.json.Decoder(ApiRetry)
background_tasks_decoder = msgspec.json.Decoder(BackgroundTasks)
task_decoder = msgspec.json.Decoder(TaskEntry)
context_usage_decoder = msgspec.json.Decoder(ContextUsageReply)
control_head_decoder = msgspec.json.Decoder(ControlRequestHead)
can_use_tool_decoder = msgspec.json.Decoder(CanUseTool)
hook_callback_decoder = msgspec.json.Decoder(HookCallback)
rewind_reply_decoder = msgspec.json.Decoder(RewindReply)
assistant_tool_uses_decoder = msgspec.json.Decoder(AssistantToolUses)
api_error_message_decoder = msgspec.json.Decoder(ApiErrorMessage)
mcp_status_decoder = msgspec.json.Decoder(McpStatusReply)
mcp_message_decoder = msgspec.json.Decoder(McpMessage)
encoder = msgspec.json.Encoder()


def user_message(content: list[dict[str, Any]], uuid: str) -> bytes:
    """Encode a user turn as one stream-json input line (newline included)."""
    return (
        encoder.encode(
            {
                "type": "user",
                "session_id": "",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
                "uuid": uuid,
            }
        )
        + b"\n"
    )


def control_request(request_id: str, request: dict[str, Any]) -> bytes:
    """Encode a host -> CLI control request line."""
    return (
        encoder.encode({"type": "control_request", "request_id": request_id, "request": request})
        + b"\n"
    )


def control_success(request_id: str, response: Any) -> bytes:
    """Encode a successful answer to a control request the CLI sent."""
    return (
        encoder.encode(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )
        + b"\n"
    )


def control_error(request_id: str, error: str) -> bytes:
    """Encode an error answer to a control request the CLI sent."""
    return (
        encoder.encode(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }
        )
        + b"\n"
    )
