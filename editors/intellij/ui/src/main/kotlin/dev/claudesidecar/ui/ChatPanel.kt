package dev.claudesidecar.ui

import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.ChatListener
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.SignInNeeded
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.transcript.ChatState
import dev.claudesidecar.core.transcript.Transcript
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import java.awt.BorderLayout
import java.awt.Dimension
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.ScrollPaneConstants
import javax.swing.SwingUtilities
import kotlin.coroutines.CoroutineContext

/**
 * The chat of one core [Chat], as an IntelliJ tool window (or the standalone app) hosts it:
 * header with pickers and context meter, the transcript, the pending permission cards, the
 * status line and the prompt.
 *
 * Open the chat with [listener] so that the panel sees its first events, then [attach] it:
 * `panel.attach(client.openChat(params, panel.listener))`. Every event is handed to the EDT
 * in order; requests run in coroutines on the EDT's dispatcher, which suspend, never block.
 * Call [dispose] when the panel goes away.
 *
 * [host] adds what it shows better (an IDE's diff viewer); [uiContext] is the dispatcher of the
 * panel's requests, on the EDT (an IDE passes its own EDT dispatcher).
 */
class ChatPanel(
    private val host: ChatPanelHost = ChatPanelHost.NONE,
    uiContext: CoroutineContext = Dispatchers.Swing,
) : JPanel(BorderLayout()) {
    /** The chat as this panel shows it: its entries, status, pending requests. EDT only. */
    val chatState = ChatState()

    /** The conversation's entries ([ChatState.transcript]). EDT only. */
    val transcript: Transcript get() = chatState.transcript
    private val scope = CoroutineScope(SupervisorJob() + uiContext)

    /** The chat this panel acts on; null until [attach]. EDT only. */
    var chat: Chat? = null
        private set

    /**
     * The chat's events on their way to the EDT: those that come while it is busy are applied
     * together, and the panel draws once for them ([onEvents]).
     */
    private val events = EdtBatcher(deliver = ::onEvents)

    /** Receives the chat's events on core's event thread and replays them on the EDT, in order, in batches. */
    val listener = ChatListener { event -> events.offer(event) }

    private val context = object : ViewContext {
        override val cwd: String? get() = chatState.cwd
        override fun waitsForStart(key: String): Boolean = promptsWaiting.any { it.id == key }
        override fun notSentBecause(key: String): String? = chatState.notSentBecause(key)
        override fun fileUpdates(key: String): List<FileUpdatedNotification> = chatState.fileUpdates(key)
        override val openFileUpdate: ((Int) -> Unit)? =
            if (host.opensFileUpdates) { seq -> chat?.let { host.openFileUpdate(it, seq) } } else null
    }

    /** The entries on screen (a benchmark looks into it). EDT only. */
    internal val transcriptView = TranscriptView(transcript, context, loadOlder = ::loadOlder)

    /** The view asked for older entries before the chat was attached: read once it is. */
    private var olderWanted = false

    /** Reads the page of the stored session before a cursor, for a chat that could not open ([openFailed]). */
    private var readStored: (suspend (before: String) -> History)? = null

    /**
     * Prompts sent before the chat was attached (a resumed chat shows its stored end while its
     * CLI starts, and the user may type at once): sent in order once it is. EDT only.
     */
    private val promptsWaiting = mutableListOf<WaitingPrompt>()

    /** A prompt sent before the chat was attached: shown under the conversation as [id], sent with it as its uuid. */
    private data class WaitingPrompt(
        val id: String,
        val text: String,
    )

    /** Whether streamed text still waits to be drawn ([TranscriptView.drawPending]). EDT only. */
    internal val drawPending: Boolean get() = transcriptView.drawPending

    val header = ChatHeader(
        onModel = { model -> request("switching the model") { setModel(model) } },
        onMode = { mode -> request("switching the mode") { setPermissionMode(mode) } },
    )
    val dock = PermissionDock(
        { chatState.cwd },
        { answer, failed ->
            val chat = chat
            if (chat == null) {
                failed("This chat is not open yet.")
            } else {
                host.beforeAgentActs()
                scope.launch {
                    try {
                        chat.respondPermission(answer)
                    } catch (e: SidecarException) {
                        failed(e.message ?: "The answer was refused.")
                    }
                }
            }
        },
        review = if (host.reviewsEdits) { request -> chat?.let { host.reviewEdit(it, request) } } else null,
    )
    val status = StatusLine()

    /** The sign-in the chat's CLI needs, over the prompt ([SignInNeeded]); hidden otherwise. */
    val signIn = FixBanner(sidePadding = 14)
    private val south = Column(0)
    val prompt = PromptArea(onSend = ::send, onStop = { request("interrupting") { interrupt() } }, onTab = ::tabFromPrompt)

    /** Called on the EDT when a turn of the chat ended (a host refreshes its session list). */
    var onTurnEnded: () -> Unit = {}

    /**
     * Called on the EDT when [tabTitle] changes: the chat starts or stops reconnecting to the
     * shared daemon, or it could not open ([openFailed]). A host titles the chat's tab again.
     */
    var onTitleChanged: () -> Unit = {}

    /** Shared daemon: the connection dropped and the chat is being attached again. EDT only. */
    var reconnecting = false
        private set

    /** [title] as the chat's tab shows it: marked while the chat is [reconnecting], or once it could not open. */
    fun tabTitle(title: String): String = when {
        chatState.status.openFailure != null -> "$title $NOT_OPEN_MARK"
        reconnecting -> "$title $RECONNECTING_MARK"
        else -> title
    }

    /**
     * Whether closing the panel would lose what it shows: a resumed session's stored page, or
     * prompts the user wrote while the chat started. A host keeps such a panel when its chat
     * cannot open ([openFailed]); an empty one may go.
     */
    val worthKeeping: Boolean get() = chatState.previewing || promptsWaiting.isNotEmpty()

    /**
     * The chat could not open, for [reason]: the panel keeps what it shows and says why at the
     * end of the conversation; each prompt waiting for the chat stays, marked "Not sent" with
     * the reason (its text there to copy); sending is off for good, and the tab is marked.
     * With [readStored] (a resumed session's: `{ before -> client.storedPage(cwd, sessionId, before) }`),
     * scrolling up still reads the stored session's earlier messages.
     */
    fun openFailed(reason: String, readStored: (suspend (before: String) -> History)? = null) {
        val notSent = promptsWaiting.map { it.id }
        promptsWaiting.clear()
        this.readStored = readStored
        transcriptView.show(chatState.openFailed(reason, notSent))
        prompt.sendButton.isEnabled = false
        prompt.sendButton.toolTipText = StatusLine.NOT_OPEN
        // The view waited for the page before the stored one: no chat will read it; the stored session may.
        if (olderWanted) {
            olderWanted = false
            loadOlder()
        }
        showState()
        onTitleChanged()
    }

    /** False until the panel is built: Swing calls [updateUI] from JPanel's constructor too. */
    private var built = false

    init {
        background = Theme.background
        val dockScroll = object : JScrollPane(dock) {
            // Cards get the room they need, up to most of the panel: the transcript stays visible.
            override fun getPreferredSize(): Dimension {
                if (!dock.isVisible) return Dimension(0, 0)
                val width = (if (this.width > 0) this.width else this@ChatPanel.width).coerceAtLeast(1)
                dock.setSize(width, dock.height.coerceAtLeast(1)) // its cards wrap at this width
                val most = (this@ChatPanel.height * 0.65).toInt().coerceAtLeast(160)
                return Dimension(width, dock.preferredSize.height.coerceAtMost(most))
            }
        }.apply {
            border = null
            isOpaque = false
            viewport.isOpaque = false
            horizontalScrollBarPolicy = ScrollPaneConstants.HORIZONTAL_SCROLLBAR_NEVER
        }
        south.apply {
            add(dockScroll)
            add(signIn)
            add(status)
            add(prompt)
        }
        add(header, BorderLayout.NORTH)
        add(transcriptView.scrollPane, BorderLayout.CENTER)
        add(south, BorderLayout.SOUTH)
        prompt.sendButton.isEnabled = false
        AnswerView.warmUp()
        built = true
    }

    // The views take their colours and fonts from [Theme] when they are made: a new look and
    // feel (the IDE's theme switch, which updates every component's UI) makes them again.
    override fun updateUI() {
        super.updateUI()
        if (built) SwingUtilities.invokeLater(::restyle)
    }

    private fun restyle() {
        background = Theme.background
        header.restyle()
        transcriptView.restyle()
        dock.restyle(chatState.pending)
        signIn.restyle()
        status.restyle()
        prompt.restyle()
        revalidate()
        repaint()
    }

    /** The chat to act on (its events come through [listener]); prompts sent before go now. */
    fun attach(chat: Chat) {
        this.chat = chat
        prompt.sendButton.isEnabled = true
        if (promptsWaiting.isNotEmpty()) {
            val prompts = promptsWaiting.toList()
            promptsWaiting.clear()
            // One after the other: the daemon queues them in the order they were typed; each
            // prompt's entry takes the place of the one shown while it waited (same id).
            request("sending") { for ((id, text) in prompts) send(text, uuid = id) }
        }
        showState()
        if (olderWanted) {
            olderWanted = false
            loadOlder()
        }
    }

    /** Adds [text] to the prompt (on a new line after what is there) and focuses it, caret at the end. */
    fun insertPrompt(text: String) {
        val area = prompt.text
        area.text = if (area.text.isBlank()) text else area.text.trimEnd() + "\n" + text
        area.caretPosition = area.document.length
        area.requestFocusInWindow()
    }

    /** Stops the panel's requests; the chat itself stays open (the host closes it). */
    fun dispose() = scope.cancel()

    /**
     * Applies [batch] (events in the order the chat sent them) and shows the result once: each
     * changed entry drawn as it is after the last of them, the cards, status and header once.
     * Every turn end among them is shown (its sign-in need) and told to the host.
     */
    private fun onEvents(batch: List<ChatEvent>) {
        val cwd = chatState.cwd
        val drawnBefore = transcript.keysInOrder.any()
        transcriptView.show(chatState.apply(batch))
        // A history comes before the chat's folder is known: its paths are drawn again relative to
        // it. (Entries drawn first in this batch, such as a resumed chat's stored page, had it.)
        if (chatState.cwd != cwd && drawnBefore) transcriptView.restyle()
        val focusInDock = dock.hasFocusedDescendant()
        // The dock's scroll pane is a validate root: the panel around it lays out anew.
        if (dock.show(chatState.pending)) {
            south.revalidate()
            // The answered card took the focus with it: the typing goes to the prompt (or the next card).
            if (focusInDock && !dock.hasFocusedDescendant()) tabFromPrompt()
        }
        // A resumed chat's stored end is on screen while its channel starts: the user can write
        // (unless the chat could not open meanwhile).
        if (batch.any { it is ChatEvent.Preview } && chatState.status.openFailure == null) prompt.sendButton.isEnabled = true
        showState()
        for (event in batch) {
            if (event is ChatEvent.Notification && event.method == Notifications.TURN_ENDED.name) {
                showSignIn(SignInNeeded.of(event))
                onTurnEnded()
            }
        }
    }

    /** Shows what the last turn needs to sign in, or hides it once a turn got through. */
    private fun showSignIn(needed: SignInNeeded?) {
        if (needed != null) signIn.showFix(needed.text, needed.command) else signIn.clear()
        south.revalidate()
    }

    /**
     * Where Tab in the prompt goes: the first button of the oldest permission card (the answer
     * waited for, as the VS Code client's Tab order reaches it), else the prompt again when the
     * card just went; else the next component as usual.
     */
    private fun tabFromPrompt() {
        val target = dock.firstButton()
        when {
            target != null -> target.requestFocusInWindow()
            prompt.text.isFocusOwner -> prompt.text.transferFocus()
            else -> prompt.text.requestFocusInWindow()
        }
    }

    private fun showState() {
        val status = chatState.status
        header.show(chat?.info, status.model, status.permissionMode)
        chat?.let { header.showTotals(it.context, it.totalCostUsd) }
        this.status.show(status, promptsWaiting.size)
        if (status.reconnecting != reconnecting) {
            reconnecting = status.reconnecting
            header.showReconnecting(reconnecting)
            onTitleChanged()
        }
        prompt.running(status.state == ChannelState.RUNNING || status.state == ChannelState.AWAITING_PERMISSION)
    }

    /** Reads the page of the conversation before the entries shown (the view asks, one page at a time). */
    private fun loadOlder() {
        val chat = chat
        val read = readStored
        val before = transcript.storedCursor
        when {
            chat != null -> readOlder { chat.loadOlder() }
            // Read once the chat is attached.
            chatState.status.openFailure == null -> olderWanted = true
            // A chat that could not open: the stored session's page before the entries shown, if it has one.
            read == null || before == null -> transcriptView.olderSettled(read = false)
            else -> readOlder {
                events.offer(ChatEvent.OlderHistory(read(before)))
                true
            }
        }
    }

    /** Runs [read] (whether a page was read); a failure is said in the transcript; the view hears when it ended. */
    private fun readOlder(read: suspend () -> Boolean) {
        scope.launch {
            var done = false
            try {
                done = read()
            } catch (e: SidecarException) {
                events.offer(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "Could not show the earlier messages: ${e.message}"))
            } finally {
                transcriptView.olderSettled(done)
            }
        }
    }

    /**
     * Sends [text] as the user's prompt, as the prompt's Send does; before [attach], once
     * attached. A chat that could not open sends nothing: the text goes into the prompt, kept.
     */
    fun send(text: String) {
        if (chatState.status.openFailure != null) return insertPrompt(text)
        // The user's own prompt brings the end of the conversation back into sight.
        transcriptView.followEnd()
        host.beforeAgentActs()
        if (chat == null) {
            val id = java.util.UUID.randomUUID().toString()
            promptsWaiting += WaitingPrompt(id, text)
            transcriptView.show(chatState.waiting(id, text))
            showState()
            return
        }
        request("sending") { send(text) }
    }

    companion object {
        /** Added to a chat's tab title while it reconnects ([tabTitle]). */
        const val RECONNECTING_MARK = "(reconnecting…)"

        /** Added to a chat's tab title once it could not open ([tabTitle]). */
        const val NOT_OPEN_MARK = "(not open)"
    }

    /** Runs a request of the chat; a failure shows as a notice in the transcript. */
    private fun request(what: String, block: suspend Chat.() -> Unit) {
        val chat = chat ?: return
        scope.launch {
            try {
                chat.block()
            } catch (e: SidecarException) {
                // After the chat's events that came before it, as they are shown.
                events.offer(ChatEvent.Notice(ChatEvent.Notice.Level.ERROR, "Failed $what: ${e.message}"))
            }
        }
    }
}
