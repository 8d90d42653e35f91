package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.AttachResult
import dev.claudesidecar.core.protocol.CancelReason
import dev.claudesidecar.core.protocol.ChannelInfo
import dev.claudesidecar.core.protocol.ChannelParams
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.ContentBlock
import dev.claudesidecar.core.protocol.ContextReading
import dev.claudesidecar.core.protocol.ContextUsageResult
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.Effort
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.ImageBlock
import dev.claudesidecar.core.protocol.MessageNotification
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PermissionCancelledNotification
import dev.claudesidecar.core.protocol.PermissionMode
import dev.claudesidecar.core.protocol.PermissionRequest
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.RespondPermissionParams
import dev.claudesidecar.core.protocol.RewindFilesParams
import dev.claudesidecar.core.protocol.RewindFilesResult
import dev.claudesidecar.core.protocol.SendMessageParams
import dev.claudesidecar.core.protocol.SetModelParams
import dev.claudesidecar.core.protocol.SetPermissionModeParams
import dev.claudesidecar.core.protocol.StatusNotification
import dev.claudesidecar.core.protocol.TextBlock
import dev.claudesidecar.core.protocol.TranscriptParams
import dev.claudesidecar.core.protocol.TurnEndedNotification
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import dev.claudesidecar.core.protocol.History as HistoryData
import dev.claudesidecar.core.protocol.Transcript as TranscriptData

/** A user prompt of the chat: where a fork or a rewind can start. */
data class Prompt(
    val messageId: String,
    val text: String,
)

/** The contents of one file update (kept by the chat, not carried by its events). */
data class FileContents(
    val path: String,
    val oldContent: String?,
    val newContent: String?,
)

/**
 * One conversation as the user sees it: a stable [id] over the daemon channels that serve it
 * (a daemon restart gives it a new channel on the same session), what the ui needs to know
 * about it, and the `claude/…` requests that act on it.
 *
 * Fields are updated on the client's event thread before the [ChatEvent] that changed them is
 * delivered; they may be read from any thread. Requests are suspend functions, callable from
 * any coroutine; they throw [SidecarException].
 */
class Chat internal constructor(
    /** Stable within the client: `chat-1`, `chat-2`, ... */
    val id: String,
    params: NewChannelParams,
    private val client: SidecarClient,
) {
    /** What opens the chat's channel; reused with `resume` when it moves to a new daemon. */
    @Volatile var channelParams: NewChannelParams = params
        internal set

    val cwd: String get() = channelParams.cwd

    @Volatile var channelId: String? = null
        private set

    @Volatile var sessionId: String? = null
        private set

    /** The pid of the CLI serving the chat now. */
    @Volatile var pid: Int? = null
        private set

    /** The channel's latest `claude/status`. */
    @Volatile var status: StatusNotification? = null
        private set

    /** What the channel's CLI offers (models, commands, agents, ...), from `claude/newChannel`. */
    @Volatile var info: ChannelInfo? = null
        private set

    /** What the conversation has cost so far (US dollars), from the last `claude/turnEnded`, or
     * the channel's info when it opened (a resumed or forked chat's recorded turns). */
    @Volatile var totalCostUsd: Double = 0.0
        private set

    /** How full the context window is (the daemon's reading), from the last `claude/turnEnded`
     * that had one, or the channel's info when it opened; null before one is known. */
    @Volatile var context: ContextReading? = null
        private set

    /** True once a message was taken: the session exists on disk and can be resumed. */
    @Volatile var hasConversation: Boolean = false
        internal set

    @Volatile var closed: Boolean = false
        private set

    /** The daemon the channel belongs to (channel ids are only unique within one daemon); requests go there. */
    @Volatile internal var daemon: DaemonConnection? = null

    /** The connection whose notifications of [channelId] are this chat's: [daemon], or the one it is attaching on. */
    @Volatile internal var listening: DaemonConnection? = null

    /** The `seq` of the last notification of the channel applied: one numbered up to it was shown already. Event thread. */
    internal var lastSeq = 0
        private set

    /**
     * The `before` that reads the page of the conversation older than what the chat's events
     * brought so far; null when they brought all of it (or the daemon does not page). Event thread.
     */
    private var olderCursor: String? = null

    /** Counts the conversations shown afresh: a page read for an earlier one is not shown. Event thread. */
    private var shownAfresh = 0

    /** Whether a [loadOlder] is on its way. Event thread. */
    private var loadingOlder = false

    /**
     * Whether the conversation has entries older than those the chat's events brought so far:
     * the daemon sent its last page only (feature `transcriptPaging`); [loadOlder] reads them.
     */
    @Volatile var hasOlder: Boolean = false
        private set

    /** Notifications kept back while a `claude/attach` is answered (null: none is). Event thread. */
    private var held: MutableList<Pair<NotificationType<*>, Any>>? = null

    /** Shared daemon: requests this client answered; their `answeredElsewhere` cancellation is its own answer. */
    private val answeredHere = ConcurrentHashMap.newKeySet<String>()

    private val pendingPermissions = ConcurrentHashMap<String, PermissionRequestNotification>()
    private val files = LinkedHashMap<Int, FileContents>()
    private val promptList = CopyOnWriteArrayList<Prompt>()
    private val listeners = CopyOnWriteArrayList<ChatListener>()

    /** The channel's pending permission requests by `requestId` (auto-allowed ones are not pending). */
    val permissionRequests: Map<String, PermissionRequestNotification> get() = pendingPermissions.toMap()

    /** File updates by their notification `seq`, with contents (the latest [KEPT_FILE_UPDATES]). */
    val fileContents: Map<Int, FileContents> get() = synchronized(files) { LinkedHashMap(files) }

    /** The user's prompts, oldest first: from history, then from [send]. */
    val prompts: List<Prompt> get() = promptList.toList()

    /** Adds a listener of the chat's events from now on; close the result to remove it. */
    fun addListener(listener: ChatListener): AutoCloseable {
        listeners += listener
        return AutoCloseable { listeners -= listener }
    }

    /**
     * Sends a user message (with images: `image` blocks, then the text); returns its `messageId`
     * once queued. With [uuid], the prompt's entry has that id (a prompt shown before the chat
     * opened is replaced in place by the daemon's).
     */
    suspend fun send(text: String, images: List<ImageBlock> = emptyList(), uuid: String? = null): String {
        val (daemon, channelId) = client.channelOf(this)
        val params = if (images.isEmpty()) {
            SendMessageParams(channelId = channelId, text = text, uuid = uuid)
        } else {
            SendMessageParams(
                channelId = channelId,
                uuid = uuid,
                content = buildList<ContentBlock> {
                    addAll(images)
                    add(TextBlock(text))
                },
            )
        }
        val messageId = daemon.request(Methods.SEND_MESSAGE, params).messageId
        hasConversation = true
        client.onEventThread { emit(ChatEvent.UserMessage(messageId, text, images.size)) }
        return messageId
    }

    /** Stops the running turn (it ends with `claude/turnEnded` `interrupted`). */
    suspend fun interrupt() {
        val (daemon, channelId) = client.channelOf(this)
        daemon.request(Methods.INTERRUPT, ChannelParams(channelId))
    }

    /**
     * Answers a pending permission request. Build the answer with any `channelId` (e.g. `""`):
     * the chat's own is used.
     */
    suspend fun respondPermission(answer: RespondPermissionParams) {
        val (daemon, channelId) = client.channelOf(this)
        // Only the shared daemon cancels an answered request (for every client): nothing else would take it out again.
        if (client.mode == DaemonMode.SHARED) answeredHere += answer.requestId
        try {
            daemon.request(Methods.RESPOND_PERMISSION, answer.copy(channelId = channelId))
        } catch (e: SidecarException) {
            answeredHere -= answer.requestId
            throw e
        }
        client.onEventThread { pendingPermissions.remove(answer.requestId) }
    }

    /** Answers a pending permission request with a decision (and for a deny, the message the model gets). */
    suspend fun respondPermission(
        requestId: String,
        decision: dev.claudesidecar.core.protocol.PermissionDecision,
        message: String? = null,
    ) = respondPermission(RespondPermissionParams(channelId = "", decision = decision, requestId = requestId, message = message))

    /** Switches the model (null: the default) and, when given, the effort. */
    suspend fun setModel(model: String?, effort: Effort? = null) {
        val (daemon, channelId) = client.channelOf(this)
        daemon.request(Methods.SET_MODEL, SetModelParams(channelId = channelId, model = model, effort = effort))
    }

    suspend fun setPermissionMode(mode: PermissionMode) {
        val (daemon, channelId) = client.channelOf(this)
        daemon.request(Methods.SET_PERMISSION_MODE, SetPermissionModeParams(channelId, mode))
    }

    /** Restores the files to how they were before the prompt [messageId]; a dry run only reports. */
    suspend fun rewind(messageId: String, dryRun: Boolean): RewindFilesResult {
        val (daemon, channelId) = client.channelOf(this)
        return daemon.request(Methods.REWIND_FILES, RewindFilesParams(channelId = channelId, messageId = messageId, dryRun = dryRun))
    }

    /**
     * Loads the live channel's conversation (`claude/getTranscript`) and delivers it to the
     * listeners as [ChatEvent.Transcript]: for a view that comes to a chat already running.
     */
    suspend fun reloadTranscript() {
        val (daemon, channelId) = client.channelOf(this)
        val transcript = daemon.request(Methods.GET_TRANSCRIPT, TranscriptParams(channelId, limit = client.pageLimit(daemon)))
        client.onEventThread {
            if (this.channelId == transcript.channelId) {
                showingAfresh(transcript.hasMore, transcript.nextCursor)
                emit(ChatEvent.Transcript(transcript))
            }
        }
    }

    /**
     * Reads the page of the conversation before the entries the chat's events brought so far
     * (`claude/getTranscript` with `before`) and delivers it as [ChatEvent.OlderEntries]. One
     * page at a time: false, and nothing read, while one is on its way or when there is none
     * older ([hasOlder] false); true once the page was delivered (or dropped, when the chat
     * was shown afresh meanwhile).
     */
    suspend fun loadOlder(): Boolean {
        val (daemon, channelId) = client.channelOf(this)
        val asked = client.onEventThread {
            val cursor = olderCursor
            if (cursor == null || loadingOlder || this.channelId != channelId) {
                null
            } else {
                loadingOlder = true
                cursor to shownAfresh
            }
        } ?: return false
        val (before, shown) = asked
        try {
            val page = daemon.request(
                Methods.GET_TRANSCRIPT,
                TranscriptParams(channelId, before = before, limit = client.pageEntries),
            )
            client.onEventThread {
                // Shown afresh meanwhile (a snapshot, a new channel): this page is of what was shown before.
                if (shownAfresh == shown && this.channelId == page.channelId) {
                    olderCursor = page.nextCursor.takeIf { page.hasMore }
                    hasOlder = olderCursor != null
                    emit(ChatEvent.OlderEntries(page))
                }
            }
        } finally {
            withContext(NonCancellable) { client.onEventThread { loadingOlder = false } }
        }
        return true
    }

    /** How full the context window is. */
    suspend fun contextUsage(): ContextUsageResult {
        val (daemon, channelId) = client.channelOf(this)
        return daemon.request(Methods.CONTEXT_USAGE, ChannelParams(channelId))
    }

    /**
     * Closes the channel (its CLI ends; on the shared daemon for every editor attached to it);
     * the chat stays readable but takes no more requests.
     */
    suspend fun close() {
        if (closed) return
        closed = true
        client.closeChat(this)
    }

    /**
     * Shared daemon: stops following the chat here (`claude/detach`) while it runs on in the
     * daemon, where [SidecarClient.runningChats] lists it; the chat here takes no more requests.
     * With a private daemon, which ends its chats with the client anyway, the same as [close].
     */
    suspend fun detach() {
        if (closed) return
        closed = true
        client.detachChat(this)
    }

    override fun toString(): String = "Chat($id, channel=$channelId, session=$sessionId)"

    // -- on the event thread ----------------------------------------------------------------

    internal fun requireOpen() {
        if (closed) throw SidecarException("this chat is closed: open a new one", "chat")
    }

    internal fun emit(event: ChatEvent) {
        when (event) {
            is ChatEvent.UserMessage -> promptList += Prompt(event.messageId, event.text)
            is ChatEvent.History -> addPrompts(event.history.entries)
            is ChatEvent.Preview -> addPrompts(event.page.entries)
            is ChatEvent.Transcript -> addPrompts(event.transcript.entries)
            is ChatEvent.OlderEntries -> addPrompts(event.page.entries, inFront = true)
            else -> Unit
        }
        for (listener in listeners) {
            try {
                listener.onEvent(event)
            } catch (e: Exception) {
                client.log(SidecarLogger.Level.ERROR, "a listener of $id failed on $event: $e")
            }
        }
    }

    /**
     * The user's prompts among [entries] not known yet (a sub-agent's prompt is not the user's),
     * after those known, or [inFront] of them (an older page).
     */
    private fun addPrompts(entries: List<Entry>, inFront: Boolean = false) {
        val known = promptList.map { it.messageId }.toSet()
        val added = entries.filterIsInstance<PromptEntry>()
            .filter { it.parentId == null && it.id !in known }
            .map { Prompt(it.id, it.text) }
        if (inFront) promptList.addAll(0, added) else promptList += added
    }

    /** A conversation (or its last page) is shown afresh: [hasMore] older entries exist, read with [cursor]. */
    private fun showingAfresh(hasMore: Boolean, cursor: String?) {
        shownAfresh++
        olderCursor = cursor.takeIf { hasMore }
        hasOlder = olderCursor != null
    }

    /**
     * Shows [page], the stored last page of the session this chat resumes, unless the channel
     * opened meanwhile (its transcript is on its way) or the chat was closed.
     */
    internal fun preview(page: HistoryData) {
        if (channelId != null || closed) return
        emit(ChatEvent.Preview(page, cwd))
    }

    internal fun bind(daemon: DaemonConnection, channelId: String, sessionId: String, info: ChannelInfo?, pid: Int) {
        this.daemon = daemon
        this.channelId = channelId
        this.sessionId = sessionId
        this.info = info
        this.pid = pid
        if (info != null) {
            totalCostUsd = info.totalCostUsd
            context = info.context
        }
        listening = daemon
        lastSeq = 0
        held = null
        // The old channel's cursors are not this one's.
        showingAfresh(false, null)
        pendingPermissions.clear()
        emit(ChatEvent.Bound(channelId, sessionId, cwd))
    }

    /**
     * Shows the chat as a `claude/attach` answer with `entries` has it (attached without
     * `afterSeq`, or after missing more than the daemon kept): its conversation and pending
     * permission requests as of the answer's `seq`, after which notifications go on.
     */
    internal fun showSnapshot(result: AttachResult) {
        val channelId = channelId ?: return
        lastSeq = result.seq
        val pending = result.pendingPermissions.map { it.notification(channelId, result.seq) }
        pendingPermissions.clear()
        for (request in pending) pendingPermissions[request.requestId] = request
        showingAfresh(result.hasMore, result.nextCursor)
        val snapshot =
            TranscriptData(
                channelId = channelId,
                entries = result.entries ?: emptyList(),
                hasMore = result.hasMore,
                seq = result.seq,
                nextCursor = result.nextCursor,
            )
        emit(ChatEvent.Transcript(snapshot, pending))
    }

    /**
     * The chat's state as `claude/listChannels` gave it ([channel]), shown as a `claude/status`
     * when no status newer than [asOf] (an attach answer's `seq`, which says no state) came.
     */
    internal fun assumeStatus(channel: ChannelSummary, asOf: Int) {
        if (channel.channelId != channelId || (status?.seq ?: 0) > asOf) return
        val assumed = StatusNotification(
            channelId = channel.channelId,
            seq = asOf,
            sessionId = channel.sessionId,
            state = channel.state,
            exit = channel.exit,
            model = channel.model,
            permissionMode = channel.permissionMode,
        )
        status = assumed
        emit(ChatEvent.Notification(Notifications.STATUS.name, assumed))
    }

    /** Shared daemon, re-attaching on [connection]: its notifications of the channel are kept back until [release]. */
    internal fun hold(connection: DaemonConnection): Int {
        listening = connection
        held = mutableListOf()
        return lastSeq
    }

    /**
     * The attach answer came: the chat is served on [connection] again (or, when null, the
     * channel was not the chat's: what was kept back is dropped). [result] with `missed` shows
     * the chat afresh first; then what was kept back is applied, each notification once.
     */
    internal fun release(connection: DaemonConnection?, result: AttachResult?) {
        val kept = held.orEmpty()
        held = null
        if (connection == null || result == null) {
            listening = daemon
            return
        }
        daemon = connection
        listening = connection
        pid = result.pid
        info = result.info
        if (result.missed) showSnapshot(result)
        for ((type, params) in kept) notify(type, params)
    }

    internal fun notify(type: NotificationType<*>, params: Any) {
        held?.let {
            it += type to params
            return
        }
        // Shown already: a replay after re-attaching, or a snapshot that includes it. Never twice.
        val seq = seqOf(params)
        if (seq != null) {
            if (seq <= lastSeq) return
            lastSeq = seq
        }
        var event = params
        var answeredElsewhere: PermissionRequestNotification? = null
        when (params) {
            is PermissionRequestNotification ->
                if (params.autoDecision == null) pendingPermissions[params.requestId] = params
            is PermissionCancelledNotification -> {
                val request = pendingPermissions.remove(params.requestId)
                val mine = answeredHere.remove(params.requestId)
                if (params.reason == CancelReason.ANSWERED_ELSEWHERE && !mine) answeredElsewhere = request
            }
            is FileUpdatedNotification -> {
                keep(params)
                // The event stays small: contents can be megabytes.
                event = params.copy(oldContent = null, newContent = null)
            }
            is StatusNotification -> {
                status = params
                sessionId = params.sessionId
            }
            is TurnEndedNotification -> {
                totalCostUsd = params.totalCostUsd
                context = params.context ?: context
            }
        }
        emit(ChatEvent.Notification(type.name, event))
        answeredElsewhere?.let { request ->
            emit(ChatEvent.Notice(ChatEvent.Notice.Level.INFO, "${request.displayName ?: request.toolName}: answered in another editor."))
        }
    }

    private fun seqOf(params: Any): Int? = when (params) {
        is DeltaNotification -> params.seq
        is EntryNotification -> params.seq
        is FileUpdatedNotification -> params.seq
        is MessageNotification -> params.seq
        is PermissionCancelledNotification -> params.seq
        is PermissionRequestNotification -> params.seq
        is StatusNotification -> params.seq
        is TurnEndedNotification -> params.seq
        else -> null
    }

    private fun PermissionRequest.notification(channelId: String, seq: Int) = PermissionRequestNotification(
        channelId = channelId,
        input = input,
        requestId = requestId,
        seq = seq,
        suggestions = suggestions,
        toolName = toolName,
        toolUseId = toolUseId,
        blockedPath = blockedPath,
        decisionReason = decisionReason,
        description = description,
        displayName = displayName,
        parentToolUseId = parentToolUseId,
        preview = preview,
        previewNote = previewNote,
        requiresUserInteraction = requiresUserInteraction,
    )

    private fun keep(update: FileUpdatedNotification) = synchronized(files) {
        files[update.seq] = FileContents(update.path, update.oldContent, update.newContent)
        while (files.size > KEPT_FILE_UPDATES) files.remove(files.keys.first())
    }

    companion object {
        /** File updates whose contents a chat keeps at most; older ones can no longer be shown side by side. */
        const val KEPT_FILE_UPDATES = 200
    }
}
