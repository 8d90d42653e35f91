"""What a channel's CLI reports about itself, in the shapes clients receive.

The CLI's ``initialize`` answer lists its slash commands, agents, models and output
styles; ``get_context_usage`` breaks the context window down by category. Both are
decoded once (``wire``) and converted here, so every client renders the same facts.
"""

from __future__ import annotations

import msgspec

from claude_sidecar.cli import wire
from claude_sidecar.protocol.api import (
    AccountInfo,
    AgentInfo,
    ChannelInfo,
    ContextCategory,
    ContextUsageResult,
    Effort,
    ModelInfo,
    SlashCommand,
    WorktreeInfo,
)
from claude_sidecar.protocol.errors import ControlRequestFailed


def channel_info(
    reply: wire.InitializeReply,
    *,
    model: str | None,
    permission_mode: str | None,
    effort: Effort | None,
    worktree: WorktreeInfo | None = None,
) -> ChannelInfo:
    """The ``claude/channelInfo`` result for a CLI that answered ``initialize`` with
    ``reply``; ``model``, ``permission_mode`` and ``effort`` are the channel's current ones,
    ``worktree`` the git worktree it runs in."""
    account = reply.account
    return ChannelInfo(
        cli_version=reply.claude_code_version,
        commands=[
            SlashCommand(
                name=c.name,
                description=c.description,
                argument_hint=c.argumentHint,
                aliases=c.aliases,
                builtin=c.builtin,
            )
            for c in reply.commands
        ],
        agents=[
            AgentInfo(name=a.name, description=a.description, model=a.model) for a in reply.agents
        ],
        models=[
            ModelInfo(
                value=m.value,
                display_name=m.displayName or m.value,
                description=m.description,
                resolved_model=m.resolvedModel,
                supports_effort=m.supportsEffort,
                supported_effort_levels=m.supportedEffortLevels,
                supports_adaptive_thinking=m.supportsAdaptiveThinking,
                supports_fast_mode=m.supportsFastMode,
                supports_auto_mode=m.supportsAutoMode,
            )
            for m in reply.models
        ],
        output_style=reply.output_style,
        available_output_styles=reply.available_output_styles,
        account=None
        if account is None
        else AccountInfo(
            api_provider=account.apiProvider,
            api_key_source=account.apiKeySource,
            token_source=account.tokenSource,
            email=account.email,
            organization=account.organization,
            subscription_type=account.subscriptionType,
        ),
        fast_mode_state=reply.fast_mode_state,
        model=model,
        permission_mode=permission_mode,
        effort=effort,
        worktree=worktree,
    )


def context_usage(answer: msgspec.Raw) -> ContextUsageResult:
    """The ``claude/contextUsage`` result for the CLI's ``get_context_usage`` answer."""
    try:
        reply = wire.context_usage_decoder.decode(answer)
    except msgspec.MsgspecError as e:
        raise ControlRequestFailed("get_context_usage", f"unexpected answer: {e}") from e
    return ContextUsageResult(
        total_tokens=reply.totalTokens,
        max_tokens=reply.maxTokens,
        percentage=reply.percentage,
        model=reply.model,
        categories=[
            ContextCategory(
                name=c.name, tokens=c.tokens, id=c.id, kind=c.kind, deferred=c.isDeferred
            )
            for c in reply.categories
        ],
        auto_compact_threshold=reply.autoCompactThreshold,
        auto_compact_enabled=reply.isAutoCompactEnabled,
    )
