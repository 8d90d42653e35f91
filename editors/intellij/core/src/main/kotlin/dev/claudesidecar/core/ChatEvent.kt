package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.History as HistoryData
import dev.claudesidecar.core.protocol.Transcript as TranscriptData

/**
 * What happens in a [Chat], in order: the ui builds its transcript from these alone.
 *
 * Events are delivered on the client's event thread ([SidecarClient.eventDispatcher]), one at a
 * time, in the order they happened, after the chat's own fields ([Chat.status],
 * [Chat.permissionRequests], ...) were updated for them. Listeners must not block: a Swing
 * ui hands each event to the EDT (`SwingUtilities.invokeLater`), which keeps the order.
 */
sealed interface ChatEvent {
    /**
     * A `claude/…` notification of the chat's channel: [method] is its name and [params] the
     * generated class of [dev.claudesidecar.core.protocol.Notifications] for it
     * (`DeltaNotification` for `claude/delta`, ...). For `claude/fileUpdated` the
     * `oldContent`/`newContent` are null here: the chat keeps them ([Chat.fileContents], by `seq`).
     * Notifications of a channel that came before `claude/newChannel` answered are delivered
     * right after [Bound].
     */
    data class Notification(
        val method: String,
        val params: Any,
    ) : ChatEvent

    /** The user's message was queued by the daemon ([Chat.send]); [images] is how many images went with it. */
    data class UserMessage(
        val messageId: String,
        val text: String,
        val images: Int,
    ) : ChatEvent

    /**
     * A stored conversation (`claude/getHistory`), shown in front of the chat's entries: for a
     * host that shows a session it has no channel for. (A resumed or forked chat gets its
     * conversation so far as a [Transcript].)
     */
    data class History(val history: HistoryData) : ChatEvent

    /**
     * A resumed chat's last page as its session file has it (`claude/getHistory` with the
     * chat's page size), delivered while its channel starts, before [Bound]: a long session's
     * CLI takes seconds to start, its stored end a few milliseconds to read. [cwd] is the
     * chat's folder. The channel's [Transcript] follows once it opens: the same entries when
     * the session did not change meanwhile (a view then draws nothing again), else it replaces
     * this page (so does the snapshot of a running chat the shared daemon attached the resume
     * to). Only when the daemon pages (feature `transcriptPaging`); never for a fork.
     */
    data class Preview(
        val page: HistoryData,
        val cwd: String,
    ) : ChatEvent

    /**
     * The conversation of the chat's channel as the daemon keeps it (`claude/getTranscript`),
     * current as of its `seq`: a resumed or forked chat's conversation so far (its channel
     * starts with it), or what a view needs when it comes to a channel that already ran.
     * Notifications numbered after `seq` may come before or after it. When the daemon pages
     * (feature `transcriptPaging`) it is the last page only and `hasMore` says whether older
     * entries exist ([Chat.loadOlder] reads them); shown afresh from it, entries of the channel
     * neither in it nor changed after its `seq` are dropped.
     *
     * From a `claude/attach` answer (a running chat attached, or shown afresh after a dropped
     * connection missed more than the shared daemon kept), [pendingPermissions] are the
     * permission requests waiting for an answer as of `seq`: they replace those known.
     */
    data class Transcript(
        val transcript: TranscriptData,
        val pendingPermissions: List<PermissionRequestNotification>? = null,
    ) : ChatEvent

    /**
     * A page of the conversation from before the entries the chat's events brought so far
     * ([Chat.loadOlder]; `claude/getTranscript` with `before`), oldest first: it goes in front
     * of them. Its `hasMore` says whether still older entries exist. An entry of the page
     * that a notification numbered after the page's `seq` changed is kept as that notification
     * left it; otherwise the page's version takes its place.
     */
    data class OlderEntries(val page: TranscriptData) : ChatEvent

    /**
     * A page of a stored session from before the entries shown, oldest first, read with
     * `claude/getHistory` (`before`: [Transcript.storedCursor][dev.claudesidecar.core.transcript.Transcript.storedCursor]):
     * it goes in front of them. For a view of a session that no channel reads: a resumed
     * chat that could not open keeps its stored end, and scrolling up reads what is before it
     * ([SidecarClient.storedPage]). Its `hasMore` says whether still older entries exist.
     */
    data class OlderHistory(val page: HistoryData) : ChatEvent

    /**
     * Something the client says about the chat: the daemon died and was restarted, the chat
     * resumed, ... With [beforeTurn], something said of the turn still running as a whole (an
     * attach mid-turn): shown before that turn's prompt, not under its answer.
     */
    data class Notice(
        val level: Level,
        val text: String,
        val beforeTurn: Boolean = false,
    ) : ChatEvent {
        enum class Level { INFO, WARN, ERROR }
    }

    /**
     * Shared daemon: the connection dropped and is being made again ([reconnecting] true), or
     * the chat is attached again, or reconnecting gave up (false; a [Notice] says which).
     */
    data class Connection(val reconnecting: Boolean) : ChatEvent

    /**
     * The chat is served by a (new) channel: at open, and again on a new daemon after a
     * restart (same session when it had a conversation). Pending permission requests of the
     * old channel are gone, and the new channel numbers its notifications from 1 (a new
     * daemon may give it the old one's id). Not sent when a shared daemon's chat is attached
     * again after a dropped connection: it is the same channel.
     */
    data class Bound(
        val channelId: String,
        val sessionId: String,
        val cwd: String,
    ) : ChatEvent
}

/** Receives a chat's events; see [ChatEvent] for the thread and the order. */
fun interface ChatListener {
    fun onEvent(event: ChatEvent)
}
