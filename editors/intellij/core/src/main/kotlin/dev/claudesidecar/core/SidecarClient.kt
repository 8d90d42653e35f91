package dev.claudesidecar.core

import com.google.gson.JsonObject
import dev.claudesidecar.core.SidecarLogger.Level
import dev.claudesidecar.core.protocol.CallEditorToolParams
import dev.claudesidecar.core.protocol.ChannelParams
import dev.claudesidecar.core.protocol.EditorTool
import dev.claudesidecar.core.protocol.ForkSessionParams
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.ListSessionsParams
import dev.claudesidecar.core.protocol.Method
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.NewChannelResult
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.SessionSummary
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
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
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/** The daemon's life as the client sees it; every change is logged and emitted ([SidecarClient.state]). */
enum class DaemonState { STOPPED, STARTING, RUNNING, RESTARTING, FAILED }

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
    /** Restarts allowed within [restartWindow] before the client gives up (state [DaemonState.FAILED]). */
    val maxRestarts: Int = 3,
    val restartWindow: Duration = 60.seconds,
)

/**
 * The client of one daemon for the whole IDE window: starts it when first needed, routes its
 * notifications to [Chat]s, serves its editor-tool requests, and when it dies starts a new one
 * and moves every chat onto it (same session, new channel).
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

    private val stateFlow = MutableStateFlow(DaemonState.STOPPED)

    /** The daemon's state; every change is also logged. */
    val state: StateFlow<DaemonState> = stateFlow.asStateFlow()

    private val chatsFlow = MutableStateFlow<List<Chat>>(emptyList())

    /** The open chats, in the order they were opened. */
    val chats: StateFlow<List<Chat>> = chatsFlow.asStateFlow()

    /** The daemon now running, if any (its [DaemonConnection.pid], [DaemonConnection.initializeResult]). */
    val runningDaemon: DaemonConnection? get() = current?.takeIf { it.alive }

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
     * gets both.
     */
    suspend fun resumeChat(
        cwd: String,
        sessionId: String,
        params: NewChannelParams = NewChannelParams(cwd),
        listener: ChatListener? = null,
    ): Chat {
        val chat = newChat(params.copy(cwd = cwd, resume = sessionId), listener)
        chat.hasConversation = true
        bindChannel(chat, daemon(), chat.channelParams)
        chat.reloadTranscript()
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
        val result = daemon.request(Methods.FORK_SESSION, ForkSessionParams(channelId = channelId, atMessageId = atMessageId))
        val fork = newChat(chat.channelParams.copy(resume = result.sessionId), listener)
        fork.hasConversation = true
        onEventThread { bound(fork, daemon, result) }
        fork.reloadTranscript()
        register(fork)
        return fork
    }

    /** The stored sessions of a folder, newest first (every page). */
    suspend fun listSessions(cwd: String): List<SessionSummary> {
        val daemon = daemon()
        val sessions = mutableListOf<SessionSummary>()
        var cursor: String? = null
        do {
            val page = daemon.request(Methods.LIST_SESSIONS, ListSessionsParams(cwd = cwd, cursor = cursor, limit = PAGE))
            sessions += page.sessions
            cursor = page.nextCursor
        } while (cursor != null)
        return sessions
    }

    /** Any `claude/…` request on the running daemon (started when needed). */
    suspend fun <P : Any, R : Any> request(method: Method<P, R>, params: P): R = daemon().request(method, params)

    /** Ends the daemon (`shutdown`, `exit`, then kill after the grace period) and the client. */
    suspend fun shutdown() {
        closed = true
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

    internal suspend fun closeChat(chat: Chat) {
        chatMap.remove(chat.id)
        publishChats()
        val daemon = chat.daemon ?: return
        val channelId = chat.channelId ?: return
        if (!daemon.alive) return
        try {
            daemon.request(Methods.CLOSE_CHANNEL, ChannelParams(channelId))
        } catch (e: SidecarException) {
            log(Level.WARN, "closing $channelId: ${e.message}")
        }
    }

    internal suspend fun onEventThread(block: () -> Unit) = withContext(eventDispatcher) { block() }

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

    private suspend fun bindChannel(chat: Chat, daemon: DaemonConnection, params: NewChannelParams) {
        val result = daemon.request(Methods.NEW_CHANNEL, params)
        onEventThread { bound(chat, daemon, result) }
    }

    /** Gives [chat] a channel on [daemon]: its session resumed when it has a conversation. */
    private suspend fun rebind(chat: Chat, daemon: DaemonConnection) {
        val params = if (chat.hasConversation && chat.sessionId != null) {
            chat.channelParams.copy(resume = chat.sessionId)
        } else {
            chat.channelParams.copy(resume = null)
        }
        chat.channelParams = params
        bindChannel(chat, daemon, params)
        onEventThread {
            chat.emit(
                ChatEvent.Notice(ChatEvent.Notice.Level.INFO, if (chat.hasConversation) "Resumed the conversation." else "Ready again."),
            )
        }
    }

    /**
     * On the event thread: binds and replays what the channel said before; when more came
     * than was kept, the channel's transcript fills in what was dropped.
     */
    private fun bound(chat: Chat, daemon: DaemonConnection, result: NewChannelResult) {
        chat.bind(daemon, result.channelId, result.sessionId, result.info, result.pid)
        early.remove(daemon to result.channelId)?.forEach { (type, params) -> chat.notify(type, params) }
        if (overflowed.remove(daemon to result.channelId)) {
            scope.launch { runCatching { chat.reloadTranscript() }.onFailure { log(Level.WARN, "reloading ${chat.id}: ${it.message}") } }
        }
    }

    /** On the event thread. */
    private fun route(daemon: DaemonConnection, type: NotificationType<*>, params: Any) {
        val channelId = channelIdOf(params) ?: return
        val chat = chatMap.values.firstOrNull { it.daemon === daemon && it.channelId == channelId }
        if (chat != null) return chat.notify(type, params)
        if (daemon !== current) return
        val kept = early.getOrPut(daemon to channelId) { mutableListOf() }
        if (kept.size < EARLY_NOTIFICATIONS_KEPT) kept += type to params else overflowed += daemon to channelId
    }

    private fun channelIdOf(params: Any): String? =
        runCatching { params.javaClass.getMethod("getChannelId").invoke(params) as? String }.getOrNull()

    // -- the daemon -------------------------------------------------------------------------

    /** Under [startLock]. */
    private suspend fun start(): DaemonConnection {
        setState(if (stateFlow.value == DaemonState.STOPPED) DaemonState.STARTING else DaemonState.RESTARTING)
        val declared = options.editorTools.map { it.tool }
        val init = options.daemon.initializationOptions.let {
            if (declared.isEmpty()) it else it.copy(editorTools = (it.editorTools ?: emptyList()) + declared)
        }
        lateinit var daemon: DaemonConnection
        val handlers = object : DaemonHandlers {
            override fun onNotification(type: NotificationType<*>, params: Any) {
                if (!eventExecutor.isShutdown) eventExecutor.execute { route(daemon, type, params) }
            }

            override suspend fun onClientRequest(method: Method<*, *>, params: Any): Any? {
                val call = params as CallEditorToolParams
                val binding = options.editorTools.firstOrNull { it.tool.name == call.tool }
                    ?: throw SidecarException("this editor has no tool named ${call.tool}", "claude/callEditorTool")
                val chat = chatMap.values.firstOrNull { it.daemon === daemon && it.channelId == call.channelId }
                return binding.handler.call(call.arguments, chat)
            }

            override fun onExit(exit: DaemonExit) {
                if (!eventExecutor.isShutdown) eventExecutor.execute { daemonExited(daemon, exit) }
            }
        }
        try {
            daemon = DaemonConnection.start(options.daemon.copy(initializationOptions = init), handlers)
        } catch (e: SidecarException) {
            setState(DaemonState.FAILED)
            throw e
        }
        current = daemon
        CliReport.of(daemon.initializeResult).let { logger.log(it.level, it.text) }
        setState(DaemonState.RUNNING)
        return daemon
    }

    /** On the event thread. */
    private fun daemonExited(daemon: DaemonConnection, exit: DaemonExit) {
        early.keys.removeAll { it.first === daemon }
        overflowed.removeAll { it.first === daemon }
        if (daemon !== current) return
        current = null
        lastExit = exit
        if (exit.expected || closed) return setState(DaemonState.STOPPED)
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
        private const val EARLY_NOTIFICATIONS_KEPT = 50
        private const val PAGE = 100
    }
}
