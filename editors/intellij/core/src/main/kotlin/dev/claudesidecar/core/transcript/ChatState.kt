package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.AskState
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.NoticeLevel
import dev.claudesidecar.core.protocol.PermissionCancelledNotification
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.StatusNotification
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.orUnknown

/**
 * A chat as a view shows it: its conversation ([transcript], the daemon's entries) and what
 * only the client knows besides: the chat's status, the permission requests a card answers,
 * its folder, and the file updates (diffs) of each entry. Not thread-safe: apply events and
 * read on one thread (the EDT in the ui).
 */
class ChatState {
    val transcript = Transcript()
    private val pendingMap = LinkedHashMap<String, PermissionRequestNotification>()
    private val fileMap = HashMap<String, MutableList<FileUpdatedNotification>>()

    /** The prompts shown [waiting] when the chat's channel could not open ([openFailed]). */
    private val notSentKeys = HashSet<String>()

    /** Pending permission requests by `requestId`, oldest first (never the auto-allowed ones). */
    val pending: Map<String, PermissionRequestNotification> get() = pendingMap

    var status = ChatStatus()
        private set
    var cwd: String? = null
        private set

    /** The file updates (without contents) of the entry [key], oldest first: a tool's edits, a rewind's file. */
    fun fileUpdates(key: String): List<FileUpdatedNotification> = fileMap[key] ?: emptyList()

    /**
     * Applies [events] of the chat in order, as [apply] does one by one; returns what they
     * changed in [transcript] together ([TranscriptChange.include]): a view draws each changed
     * entry once, as it is after the last of them.
     */
    fun apply(events: List<ChatEvent>): TranscriptChange {
        val change = TranscriptChange()
        for (event in events) change.include(apply(event))
        return change
    }

    /**
     * Whether the chat shows its session's stored last page while its channel starts
     * ([ChatEvent.Preview]; [Transcript.previewing]).
     */
    val previewing: Boolean get() = transcript.previewing

    /** Shows a prompt sent before the chat's channel opened ([Transcript.waiting]). */
    fun waiting(id: String, text: String): TranscriptChange = transcript.waiting(id, text)

    /**
     * The chat's channel could not open, for [reason]: the status says so ([ChatStatus.openFailure]),
     * the conversation ends with the reason, and the prompts [notSent] (shown [waiting]) stay,
     * marked as not sent ([notSentBecause]). Returns what changed in [transcript].
     */
    fun openFailed(reason: String, notSent: Collection<String>): TranscriptChange {
        status = status.copy(openFailure = reason)
        notSentKeys += notSent
        return transcript.openFailed("$OPEN_FAILED_PREFIX$reason", notSent)
    }

    /** Why the prompt [key] was not sent (the chat could not open), or null when nothing kept it from going. */
    fun notSentBecause(key: String): String? = status.openFailure?.takeIf { key in notSentKeys }

    /** Applies one event of the chat, in order; returns what changed in [transcript]. */
    fun apply(event: ChatEvent): TranscriptChange {
        val change = transcript.apply(event)
        when (event) {
            is ChatEvent.Preview -> {
                // Known before the channel: the stored page's paths are drawn relative to it once.
                cwd = event.cwd
                status = status.copy(state = ChannelState.STARTING)
            }
            is ChatEvent.Bound -> {
                pendingMap.clear() // the old channel's requests died with it
                cwd = event.cwd
                // newChannel answers once the CLI is ready: started, whatever status follows.
                if (status.state == ChannelState.STARTING) status = status.copy(state = ChannelState.IDLE)
            }
            is ChatEvent.Connection -> status = status.copy(reconnecting = event.reconnecting)
            is ChatEvent.Transcript -> event.pendingPermissions?.let { requests ->
                pendingMap.clear()
                for (request in requests) pendingMap[request.requestId] = request
            }
            is ChatEvent.Notification -> when (val params = event.params) {
                is StatusNotification -> {
                    val mode = params.permissionMode ?: status.permissionMode
                    status = ChatStatus(params.state, params.model ?: status.model, mode, params.retry, params.exit, status.reconnecting)
                    if (params.state == ChannelState.EXITED) pendingMap.clear()
                }
                is PermissionRequestNotification -> if (params.autoDecision == null) pendingMap[params.requestId] = params
                is PermissionCancelledNotification -> pendingMap.remove(params.requestId)
                is FileUpdatedNotification -> {
                    // A rewind's file has no tool: a notice of its own shows it.
                    val key = params.toolUseId ?: transcript.notice(NoticeLevel.INFO, "Changed ${params.path}", "fileChanged")
                    fileMap.getOrPut(key) { mutableListOf() } += params
                    if (transcript.entry(key) != null) change.updated += key
                }
            }
            else -> Unit
        }
        // A request is pending until its tool's entry says how it went.
        for (key in change.added + change.updated) {
            val permission = (transcript.entry(key) as? ToolEntry)?.permission ?: continue
            if (permission.requestId != null && permission.decision.orUnknown() != AskState.PENDING) pendingMap.remove(permission.requestId)
        }
        return change
    }

    companion object {
        /** How the notice of a chat that could not open starts; the reason follows. */
        const val OPEN_FAILED_PREFIX = "Could not open the chat: "
    }
}
