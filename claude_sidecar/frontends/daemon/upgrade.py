"""``connect`` and a shared daemon of another version.

After claude-sidecar is upgraded, the daemon already running is the old one, and every
editor that connects would keep talking to it. ``connect`` looks at the version the lock
file names before it bridges: a daemon of another version that has no chat is stopped (the
daemon itself refuses if a chat appeared meanwhile), and the new one is started as usual.
One with chats keeps serving (stopping it would end them); ``connect`` says so on stderr,
which the editor keeps in its log, and how to replace it once they are done.
"""

from __future__ import annotations

from typing import TextIO

from claude_sidecar import __version__
from claude_sidecar.frontends.daemon.admin import AdminError, open_session, wait_ended
from claude_sidecar.frontends.daemon.place import Place


def retire_other_version(place: Place, err: TextIO) -> None:
    """Stop the daemon serving ``place`` when it runs another claude-sidecar version and
    has no chat; warn on ``err`` when it has chats (it keeps serving)."""
    running = place.serving()
    if running is None or running.version == __version__:
        return
    try:
        opened = open_session(place, "connect")
    except OSError:
        return  # it is ending (another connect stopped it): reach() starts the new one
    if opened is None:
        return  # a lock left by a daemon that died: the next one replaces it
    session, initialized = opened
    version = initialized.server_info.version
    try:
        if version == __version__:
            return
        session.request("claude/stopDaemon", {"onlyIfNoChats": True})
    except AdminError as e:
        chats = e.data["error"].get("channelIds")
        why = (
            f"it has {len(chats)} chat(s), which would end with it"
            if chats
            else "it cannot be stopped without closing its chats"
        )
        err.write(
            f"claude-sidecar connect: the shared daemon (pid {running.pid}) runs "
            f"claude-sidecar {version}, this is {__version__}; {why}, so it keeps serving. "
            f"Run `claude-sidecar stop` once they are done: the next connection starts "
            f"{__version__}.\n"
        )
        return
    except OSError:
        pass  # it closed the connection first: another connect stopped it at the same time
    finally:
        session.close()
    wait_ended(running.pid)
