"""The command line and environment of one CLI process, built from channel options."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from claude_sidecar.protocol.api import NewChannelParams

ENTRYPOINT = "claude-sidecar"

# Variables that would make the CLI misbehave under a daemon: CLAUDECODE makes it refuse
# to start ("nested session") when the daemon itself runs inside Claude Code.
_STRIPPED = ("CLAUDECODE",)


# Options passed on as they are: NewChannelParams field -> CLI flag.
_VALUE_FLAGS = (
    ("effort", "--effort"),
    ("max_turns", "--max-turns"),
    ("max_budget_usd", "--max-budget-usd"),
    ("fallback_model", "--fallback-model"),
    ("agent", "--agent"),
)


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to spawn one CLI process."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    # Private files the CLI reads at start (the MCP config); removed once it has started.
    files: tuple[str, ...] = ()

    def remove_files(self) -> None:
        """Delete the private files; safe to call more than once."""
        for path in self.files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def _private_file(data: str, kind: str = "mcp") -> str:
    """Write ``data`` to a new file only this user can read; returns its path."""
    fd, path = tempfile.mkstemp(prefix=f"claude-sidecar-{kind}-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        f.write(data)
    return path


def build_launch(
    cli: str,
    options: NewChannelParams,
    session_id: str,
    base_env: Mapping[str, str] | None = None,
    *,
    allow_bypass: bool = False,
    fork: bool = False,
    resume_at: str | None = None,
    sdk_servers: dict[str, list[str]] | None = None,
) -> LaunchSpec:
    """Turn ``claude/newChannel`` options into argv and environment for the CLI.

    Values go in ``--flag=value`` form so that a value starting with ``-`` can never be
    read as another flag; no shell is ever involved. ``allow_bypass`` is the client's
    explicit opt-in to bypassPermissions. ``sdk_servers`` maps in-process MCP servers the
    daemon serves to their tool names, which are allowed without asking. ``fork`` starts
    a new session (``session_id``)
    from the history of ``options.resume``, cut after message ``resume_at`` if given.
    """
    argv = [
        cli,
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--replay-user-messages",
        # Permission asks come to the daemon as can_use_tool control requests; without
        # this flag the CLI turns every "ask" into a silent deny.
        "--permission-prompt-tool=stdio",
    ]
    if allow_bypass:
        # Only makes bypassPermissions available; the mode is still chosen separately.
        argv.append("--allow-dangerously-skip-permissions")
    if options.resume:
        argv.append(f"--resume={options.resume}")
        if fork:
            # A fork gets a new session id chosen here; the source session is untouched.
            argv += ["--fork-session", f"--session-id={session_id}"]
        if resume_at:
            argv.append(f"--resume-session-at={resume_at}")
    else:
        argv.append(f"--session-id={session_id}")
    if options.model:
        argv.append(f"--model={options.model}")
    if options.permission_mode:
        argv.append(f"--permission-mode={options.permission_mode}")
    if options.system_prompt is not None:
        argv.append(f"--system-prompt={options.system_prompt}")
    if options.append_system_prompt is not None:
        argv.append(f"--append-system-prompt={options.append_system_prompt}")
    allowed = list(options.allowed_tools or [])
    for tools in (sdk_servers or {}).values():
        allowed += tools
    if allowed:
        argv.append(f"--allowedTools={','.join(allowed)}")
    if options.disallowed_tools:
        argv.append(f"--disallowedTools={','.join(options.disallowed_tools)}")
    for directory in options.add_dirs or ():
        argv.append(f"--add-dir={directory}")
    servers = {name: {"type": "sdk", "name": name} for name in sdk_servers or {}}
    servers.update(options.mcp_servers or {})
    files: list[str] = []
    if servers:
        # A file, not an argument: server env and headers often hold tokens, and the
        # command line is visible to every user of the machine.
        files.append(_private_file(json.dumps({"mcpServers": servers})))
        argv.append(f"--mcp-config={files[-1]}")
    if options.strict_mcp_config:
        # Only the servers given here; the user's and project's MCP settings are ignored.
        argv.append("--strict-mcp-config")
    if options.max_thinking_tokens is not None:
        argv.append(f"--max-thinking-tokens={options.max_thinking_tokens}")
    for field, flag in _VALUE_FLAGS:
        value = getattr(options, field)
        if value is not None:
            argv.append(f"{flag}={value}")
    if options.setting_sources is not None:
        argv.append(f"--setting-sources={','.join(options.setting_sources)}")
    settings = dict(options.settings or {})
    if options.output_style is not None:
        # The CLI has no flag for it: the setting is how the SDKs choose a style.
        settings["outputStyle"] = options.output_style
    if settings:
        # A file, like the MCP config: settings can hold an env with secrets.
        files.append(_private_file(json.dumps(settings), "settings"))
        argv.append(f"--settings={files[-1]}")

    env = {
        k: v
        for k, v in (os.environ if base_env is None else base_env).items()
        if k not in _STRIPPED
    }
    env["CLAUDE_CODE_ENTRYPOINT"] = ENTRYPOINT
    # Needed for claude/rewindFiles; without it the CLI answers "File rewinding is not enabled".
    env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
    env.update(options.env or {})
    return LaunchSpec(argv=argv, env=env, cwd=options.cwd, files=tuple(files))
