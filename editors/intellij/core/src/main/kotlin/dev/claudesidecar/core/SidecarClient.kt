package dev.claudesidecar.core

import com.google.gson.JsonObject
import dev.claudesidecar.core.SidecarLogger.Level
import dev.claudesidecar.core.protocol.AttachParams
import dev.claudesidecar.core.protocol.AttachResult
import dev.claudesidecar.core.protocol.CallEditorToolParams
import dev.claudesidecar.core.protocol.ChannelInfo
import dev.claudesidecar.core.protocol.ChannelParams
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.ChannelsChangedNotification
import dev.claudesidecar.core.protocol.EditorTool
import dev.claudesidecar.core.protocol.ForkSessionParams
import dev.claudesidecar.core.protocol.GetHistoryParams
import dev.claudesidecar.core.protocol.ListChannelsParams
import dev.claudesidecar.core.protocol.ListSessionsParams
import dev.claudesidecar.core.protocol.Method
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.SessionSummary
import dev.claudesidecar.core.protocol.SessionsChangedNotification
import dev.claudesidecar.core.protocol.WatchChannelsParams
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.cancel
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableSharedFlow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.SharedFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asSharedFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import dev.claudesidecar.core.protocol.History as HistoryData

/**
 * The daemon's life as the client sees it; every change is logged and emitted ([SidecarClient.state]).
 * [RECONNECTING]: the shared daemon's connection dropped and is being made again.
 */
enum class DaemonState { STOPPED, STARTING, RUNNING, RESTARTING, RECONNECTING, FAILED }

/** Serves one editor tool: [arguments] are the model's (validate them); the result goes to the model as JSON. */
fun interface EditorToolHandler {
    /** [chat] is the chat whose model called the tool (null when unknown). Throw to answer with an error. */
    suspend fun call(arguments: JsonObject, chat: Chat?): Any?
}

/** An editor tool: what the model is told ([tool], declared at `initialize`) and who answers it. */
data class EditorToolBinding(
    val tool: EditorTool,
    val handler: EditorToolHandler,
)

data class ClientOptions(
    /** The daemon's command, environment, `initializationOptions` and logger. */
    val daemon: DaemonOptions = DaemonOptions(),
    /** Editor tools: declared in `initializationOptions.editorTools` and served by their handlers. */
    val editorTools: List<EditorToolBinding> = emptyList(),
    /** Private daemon: restarts allowed within [restartWindow] before the client gives up (state [DaemonState.FAILED]). */
    val maxRestarts: Int = 3,
    val restartWindow: Duration = 60.seconds,
    /**
     * A daemon that pages conversations (feature `transcriptPaging`): how many entries a chat
     * opened, resumed or attached shows at first (the last ones), and how many each
     * [Chat.loadOlder] reads. A daemon without paging sends the whole conversation.
     */
    val pageEntries: Int = 100,
)

/**
 * The client of one daemon for the whole IDE window: starts it when first needed, routes its
 * notifications to [Chat]s, serves its editor-tool requests, and when it dies starts a new one
 * and moves every chat onto it (same session, new channel).
 *
 * With the shared daemon ([DaemonMode.SHARED]) the process is `claude-sidecar connect`, a
 * bridge to the per-user daemon whose chats outlive it: when it ends while chats are open, the
 * client starts it again (after 0.25 s, then 0.5, 1, 2, 4, 8, 8, 8 s at most) and attaches
 * every chat again with the last `seq` it applied, so the chat gets exactly what it missed;
 * requests made meanwhile wait for that. [runningChats] and [attachChat] open chats another
 * editor (or an earlier run of this one) started.
 *
 * Threading: chat fields change and [ChatEvent]s are delivered on one thread,
 * [eventDispatcher], in order. Suspend functions may be called from any coroutine.
 */
class SidecarClient(private val options: ClientOptions) : AutoCloseable {
    private val logger = options.daemon.logger
    private val eventExecutor = Executors.newSingleThreadExecutor { Thread(it, "claude-sidecar-events").apply { isDaemon = true } }

    /** The one thread that updates chats and calls their listeners. */
    val eventDispatcher: CoroutineDispatcher = eventExecutor.asCoroutineDispatcher()
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private val startLock = Mutex()
    private val nextChat = AtomicInteger(1)
    private val chatMap = ConcurrentHashMap<String, Chat>()
    private val bindLocks = ConcurrentHashMap<String, Mutex>()
    private val restarts = ArrayDeque<TimeSource.Monotonic.ValueTimeMark>()

    /** Notifications of channels no chat holds yet (they come before newChannel answers); event thread only. */
    private val early = HashMap<Pair<DaemonConnection, String>, MutableList<Pair<NotificationType<*>, Any>>>()

    /** Channels that said more before their chat held them than [early] keeps; event thread only. */
    private val overflowed = HashSet<Pair<DaemonConnection, String>>()

    @Volatile private var current: DaemonConnection? = null

    @Volatile private var closed = false

    /** Shared daemon: the connection being made again after it dropped, then its chats attached again. */
    @Volatile private var reconnecting: Job? = null

    /** Shared daemon: the chats of the dropped connection not attached again yet ([chatOf] finds them). */
    private val reattaching: MutableSet<Chat> = ConcurrentHashMap.newKeySet()

    /** Private or shared daemon ([DaemonOptions.mode]). */
    val mode: DaemonMode get() = options.daemon.mode

    private val shared: Boolean get() = mode == DaemonMode.SHARED

    private val stateFlow = MutableStateFlow(DaemonState.STOPPED)

    /** The daemon's state; every change is also logged. */
    val state: StateFlow<DaemonState> = stateFlow.asStateFlow()

    private val chatsFlow = MutableStateFlow<List<Chat>>(emptyList())

    /** The open chats, in the order they were opened. */
    val chats: StateFlow<List<Chat>> = chatsFlow.asStateFlow()

    /** The daemon now running, if any (its [DaemonConnection.pid], [DaemonConnection.initializeResult]). */
    val runningDaemon: DaemonConnection? get() = current?.takeIf { it.alive }

    private val featuresFlow = MutableStateFlow<Set<String>?>(null)

    /**
     * The optional features the daemon connected last serves ([Handshake.features]); null until
     * one answered. A UI hides what is not there (the shared daemon's `attach`, …).
     */
    val features: StateFlow<Set<String>?> = featuresFlow.asStateFlow()

    private val sessionsChangedFlow = MutableSharedFlow<SessionsChangedNotification>(extraBufferCapacity = 16)

    /**
     * Stored sessions that a listing gave as `partial` have been read whole
     * (`claude/sessionsChanged`): list their folder again for exact figures.
     */
    val sessionsChanged: SharedFlow<SessionsChangedNotification> = sessionsChangedFlow.asSharedFlow()

    /** Every chat of the daemon, once [watchChannels] was called; event thread only. */
    private val roster = ChannelRoster()

    /** [watchChannels] was called: a new daemon (restarted, connected again) is watched too. */
    @Volatile private var watching = false

    /** The ignored-options warnings logged already: each once per client, not per reconnect. */
    private val warned = ConcurrentHashMap.newKeySet<String>()

    /** How the last daemon ended, if one did. */
    @Volatile var lastExit: DaemonExit? = null
        private set

    /** The running daemon, started (or restarted after a failure) when needed. */
    suspend fun daemon(): DaemonConnection = startLock.withLock {
        current?.takeIf { it.alive }?.let { return it }
        if (closed) throw SidecarException("the client is closed", "daemon")
        start()
    }

    /**
     * Opens a new chat: a new session, or a stored one with `params.resume`. [listener] gets
     * every event of the chat from its first ([ChatEvent.Bound]) on.
     */
    suspend fun openChat(params: NewChannelParams, listener: ChatListener? = null): Chat {
        val chat = newChat(params, listener)
        if (params.resume != null) chat.hasConversation = true
        bindChannel(chat, daemon(), params)
        register(chat)
        return chat
    }

    /**
     * Resumes a stored session in a new chat: [ChatEvent.Bound], then its conversation so far
     * ([ChatEvent.Transcript]: the channel starts with the stored session's entries); [listener]
     * gets both. A daemon that pages also reads the session's last page from its file while
     * the CLI starts (seconds for a long session): [ChatEvent.Preview] comes first with it. On
     * the shared daemon, a session a running chat holds is not started twice: the chat is
     * attached to it (its conversation and pending permission requests, then a
     * [ChatEvent.Notice] saying so).
     */
    suspend fun resumeChat(
        cwd: String,
        sessionId: String,
        params: NewChannelParams = NewChannelParams(cwd),
        listener: ChatListener? = null,
    ): Chat {
        val chat = newChat(params.copy(cwd = cwd, resume = sessionId), listener)
        chat.hasConversation = true
        val daemon = daemon()
        val preview = pageLimit(daemon)?.let { limit -> GetHistoryParams(cwd = cwd, sessionId = sessionId, limit = limit) }
        val attached = bindChannel(chat, daemon, chat.channelParams, preview)
        if (!attached) chat.reloadTranscript()
        register(chat)
        return chat
    }

    /**
     * The page of the stored session [sessionId] (in [cwd]) before [before] (a `nextCursor` of
     * its `claude/getHistory`, as [Transcript.storedCursor][dev.claudesidecar.core.transcript.Transcript.storedCursor]
     * gives it), [ClientOptions.pageEntries] entries: for a view that shows the session with
     * no chat to read it (a resumed chat that could not open), delivered as [ChatEvent.OlderHistory].
     */
    suspend fun storedPage(cwd: String, sessionId: String, before: String): HistoryData =
        daemon().request(Methods.GET_HISTORY, GetHistoryParams(cwd = cwd, sessionId = sessionId, before = before, limit = pageEntries))

    /**
     * Shared daemon: every chat running in it, whoever started it (`claude/listChannels`, with
     * the editors attached to each in `clients`), oldest first. With a private daemon a
     * [SidecarException] (`errorName` `notShared`) says that attaching needs the shared one;
     * no daemon is started for it.
     */
    suspend fun runningChats(): List<ChannelSummary> {
        if (!shared) throw notShared("Attaching to a running chat")
        return daemon().request(Methods.LIST_CHANNELS, ListChannelsParams()).channels
    }

    /**
     * The open chat of this client that shows [channelId] of the running daemon, if any; on the
     * shared daemon also while that chat is being attached again after the connection dropped
     * (it keeps its channel there).
     */
    fun chatOf(channelId: String): Chat? =
        chatMap.values.firstOrNull { it.channelId == channelId && (it.daemon === current || it in reattaching) }

    /**
     * Shared daemon: opens a running chat ([channel], one of [runningChats]) here:
     * [ChatEvent.Bound], its conversation so far and pending permission requests
     * ([ChatEvent.Transcript]), a [ChatEvent.Notice] saying so, its state, then what it does
     * next; [listener] gets all of them. A chat open here already is returned as it is
     * ([listener] is not added). With a private daemon the daemon refuses
     * (`claude/attach` answers `notShared`): a [SidecarException] says what to set.
     */
    suspend fun attachChat(channel: ChannelSummary, listener: ChatListener? = null): Chat {
        // A chat being attached again is this one once it is: not a second copy of it.
        reconnecting?.join()
        chatOf(channel.channelId)?.let { return it }
        val daemon = daemon()
        // A private daemon's refusal (notShared) says more than a missing feature would.
        if (shared && "attach" !in Handshake.features(daemon.initializeResult)) {
            throw Handshake.featureMissing("attach", "Attaching to a running chat", daemon.initializeResult)
        }
        val result = try {
            daemon.request(Methods.ATTACH, AttachParams(channelId = channel.channelId, limit = pageLimit(daemon)))
        } catch (e: SidecarException) {
            throw if (e.errorName == NOT_SHARED) notShared("Attaching to a running chat", e) else e
        }
        val chat = newChat(NewChannelParams(cwd = channel.cwd, resume = result.sessionId), listener)
        chat.hasConversation = true
        onEventThread {
            bound(chat, daemon, result.channelId, result.sessionId, result.info, result.pid, result)
            chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.INFO, "Attached: the chat goes on from here.", beforeTurn = true))
        }
        assumeStatus(chat, daemon, result.seq)
        register(chat)
        return chat
    }

    /**
     * Forks [chat] into a new chat: a new session with the conversation up to the exchange of
     * the prompt [atMessageId] (all of it when null; the daemon cuts it). The new chat starts
     * with [ChatEvent.Bound], then that conversation ([ChatEvent.Transcript]); [listener] gets both.
     */
    suspend fun forkChat(chat: Chat, atMessageId: String? = null, listener: ChatListener? = null): Chat {
        val (daemon, channelId) = channelOf(chat)
        if ("fork" !in Handshake.features(daemon.initializeResult)) {
            throw Handshake.featureMissing("fork", "Forking a chat", daemon.initializeResult)
        }
        val result = daemon.request(Methods.FORK_SESSION, ForkSessionParams(channelId = channelId, atMessageId = atMessageId))
        val fork = newChat(chat.channelParams.copy(resume = result.sessionId), listener)
        fork.hasConversation = true
        onEventThread { bound(fork, daemon, result.channelId, result.sessionId, result.info, result.pid, null) }
        fork.reloadTranscript()
        register(fork)
        return fork
    }

    /**
     * The stored sessions of a folder, newest first (every page). A daemon serving
     * `partialListing` answers at once: a long session it has not read whole yet comes with
     * `partial` (no exact message count), and [sessionsChanged] follows once it has.
     */
    suspend fun listSessions(cwd: String): List<SessionSummary> {
        val daemon = daemon()
        val allowPartial = if ("partialListing" in Handshake.features(daemon.initializeResult)) true else null
        val sessions = mutableListOf<SessionSummary>()
        var cursor: String? = null
        do {
            val params = ListSessionsParams(cwd = cwd, cursor = cursor, limit = PAGE, allowPartial = allowPartial)
            val page = daemon.request(Methods.LIST_SESSIONS, params)
            sessions += page.sessions
            cursor = page.nextCursor
        } while (cursor != null)
        return sessions
    }

    /**
     * Every chat of the daemon (`claude/watchChannels`, then each `claude/channelsChanged`),
     * whoever started it, kept current: the chats waiting for the user first, then running,
     * idle and ended ones ([ChannelRoster.ordered]). A daemon started later (a restart, the
     * shared daemon connected again) is watched too. Throws when the daemon does not serve
     * `watchChannels`.
     */
    suspend fun watchChannels(): StateFlow<List<ChannelSummary>> {
        val daemon = daemon()
        if (WATCH_CHANNELS !in Handshake.features(daemon.initializeResult)) {
            throw Handshake.featureMissing(WATCH_CHANNELS, "The list of chats", daemon.initializeResult)
        }
        watching = true
        watch(daemon)
        return roster.current
    }

    private suspend fun watch(daemon: DaemonConnection) {
        onEventThread { roster.expect() }
        val answer = try {
            daemon.request(Methods.WATCH_CHANNELS, WatchChannelsParams())
        } catch (e: SidecarException) {
            onEventThread { roster.abandoned() }
            throw e
        }
        onEventThread { if (daemon === current) roster.answered(answer.channels) else roster.abandoned() }
    }

    /** Any `claude/…` request on the running daemon (started when needed). */
    suspend fun <P : Any, R : Any> request(method: Method<P, R>, params: P): R = daemon().request(method, params)

    /** Ends the daemon (`shutdown`, `exit`, then kill after the grace period) and the client. */
    suspend fun shutdown() {
        closed = true
        reconnecting?.cancelAndJoin()
        val daemon = startLock.withLock { current.also { current = null } }
        daemon?.shutdown()
        setState(DaemonState.STOPPED)
        scope.cancel()
        eventExecutor.shutdown()
    }

    /** [shutdown], blocking. */
    override fun close() = runBlocking { shutdown() }

    // -- chats ------------------------------------------------------------------------------

    /** The chat's daemon and channel, binding it to a new daemon first when its own died. */
    internal suspend fun channelOf(chat: Chat): Pair<DaemonConnection, String> {
        chat.requireOpen()
        chat.daemon?.takeIf { it.alive && it === current }?.let { d -> chat.channelId?.let { return d to it } }
        bindLocks.computeIfAbsent(chat.id) { Mutex() }.withLock {
            chat.daemon?.takeIf { it.alive && it === current }?.let { d -> chat.channelId?.let { return d to it } }
            val daemon = daemon()
            rebind(chat, daemon)
            return daemon to chat.channelId!!
        }
    }

    internal suspend fun closeChat(chat: Chat) = leave(chat, Methods.CLOSE_CHANNEL, "closing")

    /** Shared daemon: stops following [chat] here; it runs on in the daemon. Private: [closeChat]. */
    internal suspend fun detachChat(chat: Chat) = if (shared) leave(chat, Methods.DETACH, "detaching from") else closeChat(chat)

    /** Forgets [chat] here and tells its daemon with [method] (closeChannel or detach), if it still runs. */
    private suspend fun <R : Any> leave(chat: Chat, method: Method<ChannelParams, R>, doing: String) {
        chatMap.remove(chat.id)
        reattaching -= chat
        publishChats()
        val daemon = chat.daemon ?: return
        val channelId = chat.channelId ?: return
        if (!daemon.alive) return
        try {
            daemon.request(method, ChannelParams(channelId))
        } catch (e: SidecarException) {
            log(Level.WARN, "$doing $channelId: ${e.message}")
        }
    }

    internal suspend fun <T> onEventThread(block: () -> T): T = withContext(eventDispatcher) { block() }

    /** Entries per page of a conversation ([ClientOptions.pageEntries]). */
    internal val pageEntries: Int get() = options.pageEntries

    /** The `limit` of a request for a chat's conversation on [daemon]: a page when it pages, else null (all of it). */
    internal fun pageLimit(daemon: DaemonConnection): Int? =
        options.pageEntries.takeIf { TRANSCRIPT_PAGING in Handshake.features(daemon.initializeResult) }

    internal fun log(level: Level, message: String) = logger.log(level, message)

    private fun newChat(params: NewChannelParams, listener: ChatListener?) =
        Chat("chat-${nextChat.getAndIncrement()}", params, this).also { chat -> listener?.let { chat.addListener(it) } }

    private fun register(chat: Chat) {
        chatMap[chat.id] = chat
        publishChats()
    }

    private fun publishChats() {
        chatsFlow.value = chatMap.values.sortedBy { it.id.removePrefix("chat-").toIntOrNull() ?: 0 }
    }

    /**
     * Opens [chat]'s channel on [daemon] with [params]; true when the shared daemon attached it
     * to the running chat that holds the session of `params.resume` instead (shown from its answer).
     * With [preview], that stored page is read while the channel opens and shown if it comes first.
     */
    private suspend fun bindChannel(
        chat: Chat,
        daemon: DaemonConnection,
        params: NewChannelParams,
        preview: GetHistoryParams? = null,
    ): Boolean {
        val result = coroutineScope {
            // Undispatched: newChannel is written first (its CLI starts at once), getHistory right after it.
            // A resume that joins a running chat answers with its last page (the request's `limit`).
            val asked = if (params.resume != null) params.copy(limit = pageLimit(daemon)) else params
            val opening = async(start = CoroutineStart.UNDISPATCHED) { daemon.request(Methods.NEW_CHANNEL, asked) }
            if (preview != null) scope.launch(start = CoroutineStart.UNDISPATCHED) { showPreview(chat, daemon, preview) }
            opening.await()
        }
        val attached = result.attached
        onEventThread {
            bound(chat, daemon, result.channelId, result.sessionId, result.info, result.pid, attached)
            if (attached != null) {
                chat.emit(
                    ChatEvent.Notice(
                        ChatEvent.Notice.Level.INFO,
                        "This session was still running in the daemon: attached to it.",
                        beforeTurn = true,
                    ),
                )
            }
        }
        if (attached != null) assumeStatus(chat, daemon, attached.seq)
        return attached != null
    }

    /** Reads the stored page [params] and shows it in [chat] unless its channel opened first; a failure only costs the wait. */
    private suspend fun showPreview(chat: Chat, daemon: DaemonConnection, params: GetHistoryParams) {
        val page = try {
            daemon.request(Methods.GET_HISTORY, params)
        } catch (e: SidecarException) {
            return log(Level.WARN, "the stored end of ${chat.id} (${params.sessionId}): ${e.message}; shown once its channel opens")
        }
        onEventThread { chat.preview(page) }
    }

    /**
     * Gives [chat] a channel on [daemon]: on the shared daemon the chat's own again, attached
     * with what it missed; else (or when it is gone) a new one, its session resumed when it
     * has a conversation.
     */
    private suspend fun rebind(chat: Chat, daemon: DaemonConnection) {
        val gone = if (shared && chat.channelId != null) reattach(chat, daemon) ?: return else null
        val params = if (chat.hasConversation && chat.sessionId != null) {
            chat.channelParams.copy(resume = chat.sessionId)
        } else {
            chat.channelParams.copy(resume = null)
        }
        chat.channelParams = params
        // Older pages of the old channel are the new one's too: read from its last page again.
        val hadOlder = chat.hasOlder
        val attached = bindChannel(chat, daemon, params)
        val said = when {
            gone != null && chat.hasConversation -> "$gone: reopened its session."
            gone != null -> "$gone: this is a new conversation."
            chat.hasConversation -> "Resumed the conversation."
            else -> "Ready again."
        }
        if (!attached) onEventThread { chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.INFO, said)) }
        if (!attached && hadOlder && params.resume != null) chat.reloadTranscript()
    }

    /**
     * Shared daemon, on a new connection: attaches [chat] again with the last `seq` it applied
     * (`claude/attach` `afterSeq`), so that it gets exactly what it missed, or the chat afresh
     * when the daemon no longer kept all of it. Null when attached; else why the chat's channel
     * is not there any more (the daemon was restarted, or the chat closed).
     */
    private suspend fun reattach(chat: Chat, daemon: DaemonConnection): String? {
        val channelId = chat.channelId ?: return "The chat has no channel"
        val afterSeq = onEventThread { chat.hold(daemon) }
        val result = try {
            daemon.request(Methods.ATTACH, AttachParams(channelId = channelId, afterSeq = afterSeq, limit = pageLimit(daemon)))
        } catch (e: SidecarException) {
            onEventThread { chat.release(null, null) }
            // invalidParams: an afterSeq past the chat's last seq, i.e. another chat of that id in a new daemon.
            if (e.errorName == CHANNEL_NOT_FOUND || e.errorName == INVALID_PARAMS) return "The chat was not running in the daemon any more"
            throw e
        }
        val same = onEventThread {
            val same = result.sessionId == chat.sessionId
            if (same) chat.release(daemon, result) else chat.release(null, null)
            same
        }
        if (!same) {
            // A new daemon gave the chat's id to another chat: this connection does not follow that one.
            runCatching { daemon.request(Methods.DETACH, ChannelParams(channelId)) }
            return "The chat was not running in the daemon any more"
        }
        if (result.missed) assumeStatus(chat, daemon, result.seq)
        val said = when {
            result.missed -> "Connected again; the daemon no longer had all of what was missed: the chat is shown afresh."
            result.replayed == 0 -> "Connected again; nothing was missed."
            else -> "Connected again; caught up with ${result.replayed} missed updates."
        }
        onEventThread { chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.INFO, said)) }
        return null
    }

    /** Shows [chat]'s state, which an attach answer (current as of [asOf]) does not give, from `claude/listChannels`. */
    private suspend fun assumeStatus(chat: Chat, daemon: DaemonConnection, asOf: Int) {
        val channels = try {
            daemon.request(Methods.LIST_CHANNELS, ListChannelsParams()).channels
        } catch (e: SidecarException) {
            return log(Level.WARN, "the state of ${chat.id}: ${e.message}")
        }
        channels.firstOrNull { it.channelId == chat.channelId }?.let { channel -> onEventThread { chat.assumeStatus(channel, asOf) } }
    }

    /**
     * On the event thread: binds, shows [snapshot] (an attach answer with the conversation so
     * far) when given, and replays what the channel said before (what the snapshot holds
     * already is skipped); when more came than was kept, the channel's transcript fills in
     * what was dropped.
     */
    private fun bound(
        chat: Chat,
        daemon: DaemonConnection,
        channelId: String,
        sessionId: String,
        info: ChannelInfo,
        pid: Int,
        snapshot: AttachResult?,
    ) {
        chat.bind(daemon, channelId, sessionId, info, pid)
        snapshot?.let { chat.showSnapshot(it) }
        early.remove(daemon to channelId)?.forEach { (type, params) -> chat.notify(type, params) }
        if (overflowed.remove(daemon to channelId)) {
            scope.launch { runCatching { chat.reloadTranscript() }.onFailure { log(Level.WARN, "reloading ${chat.id}: ${it.message}") } }
        }
    }

    private fun notShared(what: String, cause: SidecarException? = null): SidecarException {
        val running = (cause?.let { "this daemon (`${options.daemon.commandLine.joinToString(" ")}`) is a private one" })
            ?: "this client uses a private daemon"
        return SidecarException(
            "$what needs the shared daemon (claude-sidecar connect), and $running: choose the shared daemon " +
                "(the plugin: Settings | Tools | Claude Sidecar; the standalone app: --shared).",
            "daemonMode",
            cause?.code,
            NOT_SHARED,
            cause?.data,
            cause,
        )
    }

    /** On the event thread. */
    private fun route(daemon: DaemonConnection, type: NotificationType<*>, params: Any) {
        if (params is SessionsChangedNotification) {
            if (daemon === current) sessionsChangedFlow.tryEmit(params)
            return
        }
        if (params is ChannelsChangedNotification) {
            if (daemon === current) roster.changed(params)
            return
        }
        val channelId = channelIdOf(params) ?: return
        val chat = chatMap.values.firstOrNull { it.listening === daemon && it.channelId == channelId }
        if (chat != null) return chat.notify(type, params)
        if (daemon !== current) return
        val kept = early.getOrPut(daemon to channelId) { mutableListOf() }
        if (kept.size < EARLY_NOTIFICATIONS_KEPT) kept += type to params else overflowed += daemon to channelId
    }

    private fun channelIdOf(params: Any): String? =
        runCatching { params.javaClass.getMethod("getChannelId").invoke(params) as? String }.getOrNull()

    // -- the daemon -------------------------------------------------------------------------

    /** Under [startLock]; [failed] is the state when it cannot start (the reconnect loop tries again). */
    private suspend fun start(failed: DaemonState = DaemonState.FAILED): DaemonConnection {
        setState(
            when (stateFlow.value) {
                DaemonState.STOPPED -> DaemonState.STARTING
                DaemonState.RECONNECTING -> DaemonState.RECONNECTING
                else -> DaemonState.RESTARTING
            },
        )
        val declared = options.editorTools.map { it.tool }
        val init = options.daemon.initializationOptions.let {
            val withTools = if (declared.isEmpty()) it else it.copy(editorTools = (it.editorTools ?: emptyList()) + declared)
            // The shared daemon lists each chat's editors by this name.
            if (withTools.clientName == null) withTools.copy(clientName = options.daemon.clientName) else withTools
        }
        // Set once `initialize` answered: a process that ends before is no daemon of this client's.
        var started: DaemonConnection? = null
        val handlers = object : DaemonHandlers {
            override fun onNotification(type: NotificationType<*>, params: Any) {
                val daemon = started ?: return
                if (!eventExecutor.isShutdown) eventExecutor.execute { route(daemon, type, params) }
            }

            override suspend fun onClientRequest(method: Method<*, *>, params: Any): Any? {
                val call = params as CallEditorToolParams
                val binding = options.editorTools.firstOrNull { it.tool.name == call.tool }
                    ?: throw SidecarException("this editor has no tool named ${call.tool}", "claude/callEditorTool")
                val chat = chatMap.values.firstOrNull { it.listening === started && it.channelId == call.channelId }
                return binding.handler.call(call.arguments, chat)
            }

            override fun onExit(exit: DaemonExit) {
                val daemon = started ?: return
                if (!eventExecutor.isShutdown) eventExecutor.execute { daemonExited(daemon, exit) }
            }
        }
        val daemon = try {
            DaemonConnection.start(options.daemon.copy(initializationOptions = init), handlers)
        } catch (e: SidecarException) {
            setState(failed)
            throw e
        }
        started = daemon
        current = daemon
        CliReport.of(daemon.initializeResult).let { logger.log(it.level, it.text) }
        Handshake.ignoredOptionsWarning(daemon.initializeResult)?.let { if (warned.add(it)) logger.log(Level.WARN, it) }
        featuresFlow.value = Handshake.features(daemon.initializeResult)
        setState(DaemonState.RUNNING)
        if (watching) {
            scope.launch { runCatching { watch(daemon) }.onFailure { log(Level.WARN, "watching the chats: ${it.message}") } }
        }
        // Ended before [started] was set: its exit was not handled (a second report finds it handled).
        daemon.exit?.let { exit -> eventExecutor.execute { daemonExited(daemon, exit) } }
        return daemon
    }

    /** On the event thread. */
    private fun daemonExited(daemon: DaemonConnection, exit: DaemonExit) {
        early.keys.removeAll { it.first === daemon }
        overflowed.removeAll { it.first === daemon }
        if (daemon !== current) return
        current = null
        lastExit = exit
        roster.clear()
        if (exit.expected || closed) return setState(DaemonState.STOPPED)
        if (shared) return connectionDropped(exit)
        val why = "the daemon stopped (code ${exit.exitCode})" +
            if (exit.stderrTail.isEmpty()) "" else ": ${exit.stderrTail.takeLast(2).joinToString(" | ")}"
        val now = TimeSource.Monotonic.markNow()
        while (restarts.isNotEmpty() && restarts.first().elapsedNow() > options.restartWindow) restarts.removeFirst()
        val chats = chatMap.values.toList()
        if (restarts.size >= options.maxRestarts) {
            setState(DaemonState.FAILED)
            for (chat in chats) {
                chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "$why. It stopped too often; send a message to try again."))
            }
            return
        }
        restarts.addLast(now)
        setState(DaemonState.RESTARTING)
        for (chat in chats) chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.WARN, "$why; restarting it."))
        scope.launch { moveChats(chats) }
    }

    /** On the event thread: the shared daemon's connection ended; with chats open it is made again. */
    private fun connectionDropped(exit: DaemonExit) {
        val chats = chatMap.values.toList()
        if (chats.isEmpty()) return setState(DaemonState.STOPPED) // the next request connects
        log(Level.WARN, "the connection to the shared daemon dropped (code ${exit.exitCode}); connecting again")
        setState(DaemonState.RECONNECTING)
        reattaching += chats
        for (chat in chats) {
            chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.WARN, "The connection to the shared daemon dropped; connecting again."))
            chat.emit(ChatEvent.Connection(reconnecting = true))
        }
        reconnecting = scope.launch { reconnect(chats) }
    }

    /**
     * Connects to the shared daemon again, trying [RECONNECT_TRIES] times with a growing pause,
     * holding [startLock] so that requests wait; then attaches every chat again.
     */
    private suspend fun reconnect(chats: List<Chat>) {
        // The daemon there now does not fit this client: trying again cannot help.
        var mismatch: SidecarException? = null
        val daemon = startLock.withLock {
            var pause = FIRST_RECONNECT_PAUSE
            for (attempt in 1..RECONNECT_TRIES) {
                delay(pause)
                if (closed) return
                try {
                    return@withLock start(failed = DaemonState.RECONNECTING)
                } catch (e: SidecarException) {
                    log(Level.WARN, "connecting to the shared daemon again (try $attempt of $RECONNECT_TRIES): ${e.message}")
                    if (e.mismatch != null) {
                        mismatch = e
                        break
                    }
                }
                pause = (pause * 2).coerceAtMost(LAST_RECONNECT_PAUSE)
            }
            null
        }
        if (daemon == null) {
            setState(DaemonState.FAILED)
            reattaching.removeAll(chats.toSet())
            onEventThread {
                for (chat in chats) {
                    val said = mismatch?.let { "Could not connect to the shared daemon again: ${it.message}" }
                        ?: "Could not connect to the shared daemon again ($RECONNECT_TRIES tries); the next request tries once more."
                    chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, said))
                    chat.emit(ChatEvent.Connection(reconnecting = false))
                }
            }
            return
        }
        log(Level.INFO, "connected to the shared daemon again")
        for (chat in chats.filter { !it.closed }) {
            try {
                channelOf(chat)
            } catch (e: SidecarException) {
                // A connection that dropped again is made again by the next round, which says so.
                if (e.where == "daemon") continue
                onEventThread {
                    chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "Could not attach this chat again: ${e.message}"))
                }
            }
            reattaching -= chat
            onEventThread { chat.emit(ChatEvent.Connection(reconnecting = false)) }
        }
    }

    /** Starts a new daemon and gives every chat a channel on it, resuming its session. */
    private suspend fun moveChats(chats: List<Chat>) {
        try {
            daemon()
        } catch (e: SidecarException) {
            onEventThread {
                for (chat in chats) chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "cannot restart the daemon: ${e.message}"))
            }
            return
        }
        for (chat in chats.filter { !it.closed }) {
            try {
                channelOf(chat)
            } catch (e: SidecarException) {
                onEventThread { chat.emit(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "cannot resume this chat: ${e.message}")) }
            }
        }
    }

    private fun setState(state: DaemonState) {
        val before = stateFlow.value
        if (before == state) return
        logger.log(Level.INFO, "daemon: $before -> $state")
        stateFlow.value = state
    }

    companion object {
        private const val NOT_SHARED = "notShared"
        private const val CHANNEL_NOT_FOUND = "channelNotFound"
        private const val INVALID_PARAMS = "invalidParams"
        private const val RECONNECT_TRIES = 8
        private val FIRST_RECONNECT_PAUSE = 250.milliseconds
        private val LAST_RECONNECT_PAUSE = 8.seconds
        private const val EARLY_NOTIFICATIONS_KEPT = 50
        private const val PAGE = 100

        /** The feature of a daemon that pages conversations (docs/protocol.md, "Paging"). */
        const val TRANSCRIPT_PAGING = "transcriptPaging"

        /** The feature of a daemon that keeps a client's list of its chats current (`claude/watchChannels`). */
        const val WATCH_CHANNELS = "watchChannels"

        /** The feature of a daemon that runs chats in git worktrees and merges or removes them. */
        const val WORKTREES = "worktrees"
    }
}
