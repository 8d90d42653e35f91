"""Undoing the agent's file edits back to one of the user's prompts.

The CLI keeps the checkpoints (file checkpointing is on for every channel) and does
the restoring; the daemon adds what a client needs around it: a per-file diff for the
dry run, and a ``claude/fileUpdated`` for every file a real rewind changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_sidecar.cli import wire
from claude_sidecar.feed.changes import FileChange, snapshot, unified_diff
from claude_sidecar.protocol.api import FileDiff, RewindFilesResult
from claude_sidecar.protocol.errors import InvalidParams

if TYPE_CHECKING:
    from claude_sidecar.channel.channel import Channel

TIMEOUT = 30.0
UNSEEN = (
    "changed before this daemon opened the channel; its old content is only in the CLI's checkpoint"
)


async def _ask(channel: Channel, message_id: str, dry_run: bool) -> wire.RewindReply:
    raw = await channel.control(
        "rewind_files", TIMEOUT, user_message_id=message_id, dry_run=dry_run
    )
    reply = wire.rewind_reply_decoder.decode(raw) if raw else wire.RewindReply()
    if not reply.canRewind:
        raise InvalidParams(
            "messageId",
            f"cannot be rewound to: {reply.error or 'refused'}",
            "pass the messageId of one of this session's user messages "
            "(claude/sendMessage returns it)",
        )
    return reply


async def rewind_files(channel: Channel, message_id: str, dry_run: bool) -> RewindFilesResult:
    """Restore the files changed since prompt ``message_id``, or only say what would change."""
    preview = await _ask(channel, message_id, dry_run=True)
    diffs: list[FileDiff] = []
    before: dict[str, tuple[str | None, str | None]] = {}
    for path in preview.filesChanged:
        current, notice = before[path] = snapshot(path)
        known, target = channel.edits.content_at(message_id, path)
        if notice:
            diffs.append(FileDiff(path=path, diff=None, note=notice))
        elif known:
            diffs.append(FileDiff(path=path, diff=unified_diff(path, current, target)))
        else:
            diffs.append(FileDiff(path=path, diff=None, note=UNSEEN))
    if not dry_run:
        await _ask(channel, message_id, dry_run=False)
        for path, (old, old_notice) in before.items():
            new, new_notice = snapshot(path)
            if old_notice is None and new_notice is None and old == new:
                continue
            channel.report_file_change(
                FileChange(
                    path=path,
                    tool_name="rewindFiles",
                    tool_use_id=None,
                    message_id=message_id,
                    old=old,
                    new=new,
                    notice=old_notice or new_notice,
                )
            )
    return RewindFilesResult(
        can_rewind=preview.canRewind,
        files_changed=preview.filesChanged,
        insertions=preview.insertions,
        deletions=preview.deletions,
        diffs=diffs,
    )
