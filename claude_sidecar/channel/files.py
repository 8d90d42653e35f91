"""What the agent's edit tools do to files: previews before, the edit log after.

Used to preview a Write, Edit or MultiEdit before the user allows it (the diff is
computed from the file on disk and the tool's input, exactly as the tool would apply
it), and to see every edit as it happens: the daemon registers PreToolUse/PostToolUse
hooks with the CLI (``EDIT_HOOKS``), snapshots the file before the tool runs and reads it
again after (``EditLog``), which becomes ``claude/fileUpdated``. The change itself and
its diff are ``feed.changes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from claude_sidecar.cli.wire import HookCallback
from claude_sidecar.feed.changes import FileChange, Unreadable, read_text, snapshot, unified_diff
from claude_sidecar.protocol.api import is_absolute_path

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})


@dataclass(frozen=True)
class Preview:
    """The diff an edit would make, or why there is none."""

    diff: str | None
    note: str | None = None


def _apply_edit(text: str, old: str, new: str, replace_all: bool) -> str:
    count = text.count(old) if old else 0
    if count == 0:
        raise ValueError("old_string is not in the file")
    if count > 1 and not replace_all:
        raise ValueError(f"old_string occurs {count} times and replace_all is false")
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def preview_edit(tool_name: str, tool_input: dict[str, Any]) -> Preview | None:
    """The diff ``tool_name`` would make with ``tool_input``; None for other tools."""
    if tool_name not in EDIT_TOOLS:
        return None
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not is_absolute_path(path):
        return Preview(None, "file_path is not an absolute path")
    try:
        old = read_text(path)
    except Unreadable as e:
        return Preview(None, str(e))
    try:
        if tool_name == "Write":
            content = tool_input.get("content")
            if not isinstance(content, str):
                return Preview(None, "content is not a string")
            return Preview(unified_diff(path, old, content))
        if old is None:
            return Preview(None, "the file does not exist")
        edits = [tool_input] if tool_name == "Edit" else tool_input.get("edits") or []
        new = old
        for edit in edits:
            new = _apply_edit(
                new,
                str(edit.get("old_string", "")),
                str(edit.get("new_string", "")),
                bool(edit.get("replace_all")),
            )
        return Preview(unified_diff(path, old, new))
    except (ValueError, AttributeError) as e:
        return Preview(None, f"the edit would fail: {e}")


NOTEBOOK_TOOLS = frozenset({"NotebookEdit"})
TRACKED_TOOLS = EDIT_TOOLS | NOTEBOOK_TOOLS
TRACKED_MATCHER = "|".join(sorted(TRACKED_TOOLS))

# The hooks the daemon registers at ``initialize``: it snapshots a file before an edit
# tool runs and reads it again after.
PRE_EDIT, POST_EDIT = "sidecar_pre_edit", "sidecar_post_edit"
EDIT_HOOKS = {
    "PreToolUse": [{"matcher": TRACKED_MATCHER, "hookCallbackIds": [PRE_EDIT]}],
    "PostToolUse": [{"matcher": TRACKED_MATCHER, "hookCallbackIds": [POST_EDIT]}],
}


def tool_path(tool_input: dict[str, Any]) -> str | None:
    """The file an edit tool works on (``notebook_path`` for NotebookEdit)."""
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    return path if isinstance(path, str) and is_absolute_path(path) else None


class EditLog:
    """What the agent's edit tools did to files in one channel, prompt by prompt.

    ``before`` runs in the PreToolUse hook (the baseline, read from disk), ``after`` in
    PostToolUse (the result, read from disk). The log also answers what a file looked
    like when a given prompt was sent, for rewind previews.
    """

    def __init__(self) -> None:
        self._baselines: dict[str, tuple[str, str | None, str | None]] = {}
        self._prompts: list[str] = []
        self.changes: list[FileChange] = []
        # tool_use id -> the Agent tool use whose sub-agent made it.
        self._subagent_tools: dict[str, str] = {}

    def prompt(self, message_id: str) -> None:
        """Record that the CLI took up the user prompt ``message_id``."""
        if message_id not in self._prompts:
            self._prompts.append(message_id)

    @property
    def current_prompt(self) -> str | None:
        return self._prompts[-1] if self._prompts else None

    def made_by_subagent(self, tool_use_ids: list[str], agent_tool_use_id: str) -> None:
        """Record that a sub-agent (of the Agent tool use ``agent_tool_use_id``) made these
        tool uses: their file changes carry it as ``parentToolUseId``."""
        for tool_use_id in tool_use_ids:
            self._subagent_tools[tool_use_id] = agent_tool_use_id

    def hook(self, hook: HookCallback) -> FileChange | None:
        """Run one of ``EDIT_HOOKS``; returns the change a PostToolUse saw on disk."""
        event, tool_use_id = hook.input, hook.input.tool_use_id or hook.tool_use_id
        if tool_use_id is None:
            return None
        if hook.callback_id == PRE_EDIT:
            self.before(tool_use_id, event.tool_input)
            return None
        if hook.callback_id == POST_EDIT:
            return self.after(
                tool_use_id,
                event.tool_name or "?",
                event.tool_input,
                event.tool_response,
                self._subagent_tools.pop(tool_use_id, None),
            )
        return None

    def before(self, tool_use_id: str, tool_input: dict[str, Any]) -> None:
        """Capture the file an edit tool is about to change."""
        path = tool_path(tool_input)
        if path is not None:
            self._baselines[tool_use_id] = (path, *snapshot(path))

    def after(
        self,
        tool_use_id: str,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_response: Any,
        parent_tool_use_id: str | None = None,
    ) -> FileChange | None:
        """The change an edit tool made, read from disk now that it is done."""
        baseline = self._baselines.pop(tool_use_id, None)
        path = baseline[0] if baseline else tool_path(tool_input)
        if path is None:
            return None
        if baseline is not None:
            old, old_notice = baseline[1], baseline[2]
        else:
            # No PreToolUse seen (e.g. the hook was not registered yet): the tool's own
            # report of the original file is the best baseline there is.
            original = (
                tool_response.get("originalFile") if isinstance(tool_response, dict) else None
            )
            old, old_notice = (original if isinstance(original, str) else None), None
        new, new_notice = snapshot(path)
        change = FileChange(
            path=path,
            tool_name=tool_name,
            tool_use_id=tool_use_id,
            message_id=self.current_prompt,
            old=old,
            new=new,
            notice=old_notice or new_notice,
            parent_tool_use_id=parent_tool_use_id,
        )
        self.changes.append(change)
        return change

    def content_at(self, message_id: str, path: str) -> tuple[bool, str | None]:
        """(known, content): ``path`` as it was just before prompt ``message_id`` ran."""
        if message_id not in self._prompts:
            return False, None
        since = set(self._prompts[self._prompts.index(message_id) :])
        for change in self.changes:
            if change.path == path and change.message_id in since:
                return change.notice is None, change.old
        return False, None
