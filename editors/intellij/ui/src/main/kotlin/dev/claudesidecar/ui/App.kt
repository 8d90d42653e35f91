package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatDarkLaf
import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ChannelRoster
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.CommandLine
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.DaemonOptions
import dev.claudesidecar.core.DaemonState
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.SidecarLogger
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.WorktreeOptions
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import java.awt.BorderLayout
import java.awt.Container
import java.awt.Dimension
import java.awt.Toolkit
import java.awt.event.ActionEvent
import java.awt.event.KeyEvent
import java.awt.event.WindowAdapter
import java.awt.event.WindowEvent
import java.nio.file.Path
import java.util.function.BiConsumer
import javax.swing.AbstractAction
import javax.swing.JButton
import javax.swing.JComponent
import javax.swing.JDialog
import javax.swing.JFrame
import javax.swing.JOptionPane
import javax.swing.JPanel
import javax.swing.JSplitPane
import javax.swing.JTabbedPane
import javax.swing.JToggleButton
import javax.swing.KeyStroke
import javax.swing.SwingUtilities
import javax.swing.UIManager
import kotlin.io.path.readText
import kotlin.system.exitProcess

/**
 * The standalone app: the chat panel without an IDE, to try and test the client.
 *
 *     java -jar claude-sidecar-ui-VERSION.jar [--shared] [--daemon "claude-sidecar --stdio"] [--cwd DIR]
 *         [--env KEY=VALUE]... [--env-file FILE] [--theme light|dark]
 *
 * A window with the folder's stored sessions on the left (double-click resumes one; the list
 * reloads after each turn) and a closable tab per chat on the right (Ctrl+W closes the chat);
 * a session already open in a tab is shown there, not opened twice. `--shared` uses the shared
 * daemon (`claude-sidecar connect`): "Attach to running chat…" opens a chat running there, and
 * closing a chat may leave it running. What the daemon does not serve is hidden (once it said:
 * its `features`); a daemon that does not fit this app is one banner with the fix.
 */
class App(
    private val client: SidecarClient,
    private val cwd: String,
) {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Swing)

    /** The chats' tabs (FlatLaf draws a close button on each). */
    val tabs = JTabbedPane().apply {
        putClientProperty("JTabbedPane.tabClosable", true)
        putClientProperty("JTabbedPane.tabCloseToolTipText", "Close the chat (Ctrl+W)")
        putClientProperty("JTabbedPane.tabCloseCallback", BiConsumer<JTabbedPane, Int> { _, i -> closeTab(getComponentAt(i) as ChatPanel) })
    }
    val sessions =
        SessionList(client, cwd) { session -> openChat(SessionList.titleOf(session).ifBlank { "Resumed" }, resume = session.sessionId) }
    val frame = JFrame("Claude — ${Path.of(cwd).fileName ?: cwd}")

    /** Switches between the light and the dark theme. */
    val themeSwitch = JToggleButton("Dark theme").apply { addActionListener { setTheme(dark = isSelected) } }

    /** The session each tab was opened to resume, until its chat says (a resume still on its way). */
    private val resuming = HashMap<ChatPanel, String>()

    /** Tabs closed while their chat was still opening: the chat is closed when it comes. */
    private val closedEarly = HashSet<ChatPanel>()

    /** Opens the shared daemon's running chats; hidden once the daemon said it serves no `attach`. */
    val attachButton: JButton = button("Attach to running chat…") { showAttachDialog() }

    /** Opens the list of every chat of the daemon; says how many wait for the user ("All chats · 2 waiting"). */
    val chatsButton: JButton = button("All chats") { showChatList() }

    /** Chats that started waiting for a permission where no tab shows them (and the chat list is closed). */
    val waitNotices = WaitNotices { channel -> attach(channel) }

    /** The daemon's chats are watched (the count on [chatsButton] and [waitNotices] follow them). */
    private var watchingChats = false

    /** The daemon's chats as last told. */
    private var chats: List<ChannelSummary> = emptyList()

    /** Opens a new chat in a git worktree of its own; shown when the daemon serves `worktrees`. */
    val worktreeButton: JButton = button("New chat in worktree…") { askWorktreeChat() }

    /** The "All chats" window while it is open. */
    var chatList: JDialog? = null
        private set

    /** Over the chats when the daemon and this app do not fit: which to upgrade, and how. */
    val mismatch = FixBanner(sidePadding = 8)

    /** The "Attach to running chat…" dialog while it is open. */
    var attachDialog: JDialog? = null
        private set

    init {
        val toolbar =
            row(
                primaryButton("New chat") { openChat("Chat ${tabs.tabCount + 1}") },
                worktreeButton,
                attachButton,
                chatsButton,
                button("Refresh sessions") { sessions.load() },
                themeSwitch,
            )
        toolbar.border = padding(6, 6, 6, 6)
        val top = Column(0).apply {
            add(toolbar)
            add(mismatch)
            add(waitNotices)
        }
        val right = JPanel(BorderLayout()).apply {
            add(top, BorderLayout.NORTH)
            add(tabs, BorderLayout.CENTER)
        }
        // Unknown until a daemon answered: shown, and its use then says what is missing.
        scope.launch {
            client.features.collect {
                attachButton.isVisible = it == null || "attach" in it
                worktreeButton.isVisible = it != null && SidecarClient.WORKTREES in it
                chatsButton.isVisible = it == null || SidecarClient.WATCH_CHANNELS in it
                if (it != null && SidecarClient.WATCH_CHANNELS in it) watchChats()
            }
        }
        // A daemon that answered fits: a mismatch shown before is over.
        scope.launch { client.state.collect { if (it == DaemonState.RUNNING) mismatch.clear() } }
        frame.contentPane = JSplitPane(JSplitPane.HORIZONTAL_SPLIT, sessions, right).apply { dividerLocation = 260 }
        frame.size = Dimension(1100, 800)
        frame.defaultCloseOperation = JFrame.DO_NOTHING_ON_CLOSE
        frame.addWindowListener(object : WindowAdapter() {
            override fun windowClosing(e: WindowEvent) = quit()
        })
        frame.rootPane.getInputMap(JComponent.WHEN_IN_FOCUSED_WINDOW)
            .put(KeyStroke.getKeyStroke(KeyEvent.VK_W, Toolkit.getDefaultToolkit().menuShortcutKeyMaskEx), "close-chat")
        frame.rootPane.actionMap.put(
            "close-chat",
            object : AbstractAction() {
                override fun actionPerformed(e: ActionEvent?) {
                    (tabs.selectedComponent as? ChatPanel)?.let(::closeTab)
                }
            },
        )
    }

    /**
     * Watches the daemon's chats from the first daemon on (a later one is watched too: see
     * [SidecarClient.watchChannels]) for the count of those waiting and the notices.
     */
    private fun watchChats() {
        if (watchingChats) return
        watchingChats = true
        scope.launch {
            try {
                client.watchChannels().collect(::chatsChanged)
            } catch (e: SidecarException) {
                watchingChats = false // taken again with the next daemon
            }
        }
    }

    private fun chatsChanged(channels: List<ChannelSummary>) {
        chats = channels
        val waiting = channels.count(ChannelRoster::waiting)
        chatsButton.text = if (waiting == 0) "All chats" else "All chats · $waiting waiting"
        // Explicit colours outlive a theme switch: [setTheme] comes here again.
        chatsButton.foreground = if (waiting == 0) UIManager.getColor("Button.foreground") else Theme.warning
        chatsButton.toolTipText = if (waiting == 0) null else "$waiting chat${if (waiting == 1) "" else "s"} waiting for you"
        waitNotices.update(channels) { channel -> chatList != null || shows(channel) }
    }

    /** Whether a tab of the app shows the chat of [channel]. */
    fun shows(channel: ChannelSummary): Boolean = client.chatOf(channel.channelId)?.let { chat -> panels.any { it.chat === chat } } == true

    /** The light or the dark FlatLaf theme, for the whole window (the chat redraws in its colours). */
    fun setTheme(dark: Boolean) {
        if (dark) FlatDarkLaf.setup() else FlatLightLaf.setup()
        themeSwitch.isSelected = dark
        SwingUtilities.updateComponentTreeUI(frame)
        mismatch.restyle()
        waitNotices.restyle()
        chatsChanged(chats) // the count's colour
    }

    /** The tab of the chat on [sessionId] (open, or being opened to resume it), if any. */
    fun tabOf(sessionId: String): ChatPanel? = (0 until tabs.tabCount).map { tabs.getComponentAt(it) as ChatPanel }
        .firstOrNull { it.chat?.sessionId == sessionId || resuming[it] == sessionId }

    /**
     * Closes the tab of [panel] and its chat (the chat's CLI ends; its session stays on disk).
     * With the shared daemon the user chooses: detach (the chat runs on in the daemon, where
     * Attach lists it) or end it (its CLI stops, for every editor).
     */
    fun closeTab(panel: ChatPanel) {
        val chat = panel.chat
        val end = if (client.mode == DaemonMode.SHARED && chat != null) endOrDetach() ?: return else true
        tabs.remove(panel)
        resuming.remove(panel)
        panel.dispose()
        // A chat still opening is closed once it comes; one that could not open never comes.
        when {
            chat == null -> if (panel.chatState.status.openFailure == null) closedEarly += panel
            end -> scope.launch { runCatching { chat.close() } }
            else -> scope.launch { runCatching { chat.detach() } }
        }
        (tabs.selectedComponent as? ChatPanel)?.prompt?.text?.requestFocusInWindow()
    }

    /** Asks whether a shared chat ends (true) or runs on detached (false); null: cancelled. */
    private fun endOrDetach(): Boolean? {
        val options = arrayOf("Detach (keep it running)", "End the chat", "Cancel")
        val chosen = JOptionPane.showOptionDialog(
            frame,
            "The chat can run on in the shared daemon (Attach to running chat… opens it again), or end for every editor.",
            "Close chat",
            JOptionPane.DEFAULT_OPTION,
            JOptionPane.QUESTION_MESSAGE,
            null,
            options,
            options[0],
        )
        return when (chosen) {
            0 -> false
            1 -> true
            else -> null
        }
    }

    /** Shows the window with the folder's sessions and, unless not [firstChat], a new chat. */
    fun show(firstChat: Boolean = true) {
        frame.isVisible = true
        sessions.load()
        if (firstChat) openChat("Chat 1")
    }

    /** The chat panels of the tabs, in order. */
    val panels: List<ChatPanel> get() = (0 until tabs.tabCount).mapNotNull { tabs.getComponentAt(it) as? ChatPanel }

    /** The chat panel of the selected tab, if any. */
    val selectedPanel: ChatPanel? get() = tabs.selectedComponent as? ChatPanel

    /**
     * Lists the shared daemon's running chats in a dialog; the one chosen opens in a new tab
     * (its conversation so far, then live), or its tab is selected when it is open here.
     */
    fun showAttachDialog() {
        attachDialog?.let { return it.toFront() }
        lateinit var dialog: JDialog
        val list = RunningChatList(client) { channel ->
            dialog.dispose()
            attach(channel)
        }
        dialog = toolWindow("Attach to a running chat", list) {
            list.dispose()
            attachDialog = null
        }
        attachDialog = dialog
        dialog.isVisible = true
        list.load()
    }

    /**
     * The daemon's chats in a window of their own ([ChatRosterPanel]): waiting ones first, the
     * count of them in its title; Open shows the chat's tab (or attaches it, shared daemon).
     */
    fun showChatList() {
        chatList?.let { return it.toFront() }
        val panel = ChatRosterPanel(client) { channel -> attach(channel) }
        val dialog = toolWindow("Chats", panel) {
            panel.dispose()
            chatList = null
        }
        panel.heading.addPropertyChangeListener("text") { dialog.title = panel.heading.text }
        chatList = dialog
        chatsChanged(chats) // the list shows every waiting chat: their notices go
        dialog.isVisible = true
        panel.start()
    }

    /** A window of the app's own beside its frame (not modal), showing [content]; [closed] runs once it is closed. */
    private fun toolWindow(title: String, content: Container, closed: () -> Unit): JDialog {
        val dialog = JDialog(frame, title, false)
        dialog.contentPane = content
        dialog.addWindowListener(object : WindowAdapter() {
            override fun windowClosed(e: WindowEvent) = closed()
        })
        dialog.defaultCloseOperation = JDialog.DISPOSE_ON_CLOSE
        dialog.pack()
        dialog.setLocationRelativeTo(frame)
        return dialog
    }

    /**
     * Asks what the chat should do, the worktree's name (by default the task's first words;
     * empty: the daemon picks one) and its base ([WorktreeChatForm]), then opens the chat there
     * and sends the task as its first prompt.
     */
    private fun askWorktreeChat() {
        val form = WorktreeChatForm()
        val chosen = JOptionPane.showConfirmDialog(
            frame,
            form,
            WORKTREE_DIALOG_TITLE,
            JOptionPane.OK_CANCEL_OPTION,
            JOptionPane.PLAIN_MESSAGE,
        )
        if (chosen != JOptionPane.OK_OPTION) return
        val request = form.request()
        openChat(request.worktree.name?.let { "⎇ $it" } ?: "Worktree chat", worktree = request.worktree, firstPrompt = request.firstPrompt)
    }

    /** Opens [channel], a chat running in the shared daemon, in a tab. */
    fun attach(channel: ChannelSummary) {
        client.chatOf(channel.channelId)?.let { open -> panels.firstOrNull { it.chat === open }?.let { return select(it) } }
        val panel = ChatPanel()
        addTab(panel, channel.cwd.substringAfterLast('/').ifEmpty { channel.channelId })
        scope.launch {
            try {
                val chat = client.attachChat(channel, panel.listener)
                // Opened here meanwhile (attached again after a dropped connection): its own tab shows it.
                panels.firstOrNull { it !== panel && it.chat === chat }?.let { open ->
                    tabs.remove(panel)
                    panel.dispose()
                    return@launch select(open)
                }
                panel.attach(chat)
                panel.prompt.text.requestFocusInWindow()
            } catch (e: SidecarException) {
                tabs.remove(panel)
                failed(e, "Cannot attach to the chat")
            }
        }
    }

    /** Adds and selects the tab of [panel], titled [title] (cut short; whole in its tooltip), marked while the chat reconnects. */
    private fun addTab(panel: ChatPanel, title: String) {
        val shown = title.take(24)
        tabs.addTab(shown, panel)
        tabs.setToolTipTextAt(tabs.tabCount - 1, title)
        tabs.selectedComponent = panel
        panel.onTitleChanged = {
            val index = tabs.indexOfComponent(panel)
            if (index >= 0) tabs.setTitleAt(index, panel.tabTitle(shown))
        }
    }

    private fun select(panel: ChatPanel) {
        tabs.selectedComponent = panel
    }

    /**
     * A new chat, or a stored session resumed ([resume]), in a new tab; a session already open
     * in a tab selects that tab instead (two live chats on one session would diverge).
     * [firstPrompt] is sent once the chat is open, as if typed.
     */
    fun openChat(title: String, resume: String? = null, worktree: WorktreeOptions? = null, firstPrompt: String? = null) {
        resume?.let(::tabOf)?.let { open ->
            tabs.selectedComponent = open
            open.prompt.text.requestFocusInWindow()
            return
        }
        val panel = ChatPanel()
        panel.onTurnEnded = { sessions.load() }
        if (resume != null) resuming[panel] = resume
        addTab(panel, title)
        scope.launch {
            try {
                val chat = if (resume == null) {
                    client.openChat(NewChannelParams(cwd, worktree = worktree), panel.listener)
                } else {
                    client.resumeChat(cwd, resume, listener = panel.listener)
                }
                resuming.remove(panel)
                if (closedEarly.remove(panel)) {
                    chat.close()
                    return@launch
                }
                panel.attach(chat)
                firstPrompt?.let(panel::send)
                if (tabs.selectedComponent === panel) panel.prompt.text.requestFocusInWindow()
            } catch (e: SidecarException) {
                resuming.remove(panel)
                if (closedEarly.remove(panel)) return@launch
                if (!panel.worthKeeping) {
                    tabs.remove(panel)
                    return@launch failed(e, "Cannot open the chat")
                }
                // The tab keeps the stored page and the prompts written meanwhile, and says why
                // (no message box: the tab shows it); a daemon that does not fit is the banner too.
                panel.openFailed(messageOf(e), resume?.let { sessionId -> { before -> client.storedPage(cwd, sessionId, before) } })
                if (e.mismatch != null) failed(e, "Cannot open the chat")
            }
        }
    }

    /** Shows why a chat could not open: a daemon that does not fit as the banner (no dialog to dismiss), else a message box. */
    private fun failed(e: SidecarException, title: String) {
        val mismatch = e.mismatch
        if (mismatch != null) {
            this.mismatch.showFix(mismatch.message, mismatch.command)
            this.mismatch.revalidate()
            return
        }
        JOptionPane.showMessageDialog(frame, messageOf(e), title, JOptionPane.ERROR_MESSAGE)
    }

    /** [e]'s message; for the daemon's command (core calls it the setting daemonCommand) it adds what sets it here. */
    private fun messageOf(e: SidecarException): String = when (e.where) {
        "daemonCommand" ->
            "${e.message}\n\nIn this app the --daemon option sets the daemon's command (e.g. --daemon \"" +
                "${client.mode.command("/path/to/.venv/bin/claude-sidecar").joinToString(" ")}\")."
        else -> e.message.orEmpty()
    }

    private fun quit() {
        close()
        // Closing ends the daemon (shutdown, then kill after the grace period): off the EDT.
        Thread {
            runCatching { client.close() }
            exitProcess(0)
        }.start()
    }

    /**
     * Ends the window and the app's work in it. What was under way (a chat opening, a list
     * loading) stops here and reports nothing: a chat that was opening while the daemon goes
     * is no error to show (it showed a modal message box over a window being closed, which
     * then held every input of the process). EDT only; the daemon is the client's to close.
     */
    fun close() {
        scope.cancel()
        attachDialog?.dispose()
        chatList?.dispose()
        sessions.dispose()
        panels.forEach { it.dispose() }
        frame.dispose()
    }

    /** What the command line asks for. */
    data class Options(
        /** The daemon's command ("quoted" arguments kept whole); null: [mode]'s `claude-sidecar` command. */
        val command: List<String>? = null,
        /** Private (`--stdio`, ends with the app) or the shared daemon (`connect`, `--shared`). */
        val mode: DaemonMode = DaemonMode.PRIVATE,
        val cwd: String = Path.of("").toAbsolutePath().toString(),
        /** Added to the daemon's environment (this process's); null removes a variable. */
        val env: Map<String, String?> = emptyMap(),
        val dark: Boolean = false,
    ) {
        /** How the app starts the daemon: [command] with [env] over this process's environment. */
        fun daemonOptions(logger: SidecarLogger): DaemonOptions = DaemonOptions(
            command = command,
            mode = mode,
            env = env,
            initializationOptions = PanelDaemon.initializationOptions(CLIENT_NAME),
            clientName = CLIENT_NAME,
            protocolClient = PROTOCOL_CLIENT,
            logger = logger,
        )
    }

    companion object {
        /** The app's name for the daemon (`clientInfo`, and the shared daemon's list of each chat's editors). */
        const val CLIENT_NAME = "claude-sidecar-app"

        /** The title of "New chat in worktree…"'s dialog. */
        const val WORKTREE_DIALOG_TITLE = "New chat in worktree"

        /** The app's name in the version handshake (the daemon's upgrade message names it). */
        const val PROTOCOL_CLIENT = "swing-app"

        /** The app's version, from its jar's manifest (null when run from classes, as in the in-process tests). */
        private val version: String? get() = App::class.java.`package`?.implementationVersion

        private val usage
            get() =
                "usage: java -jar claude-sidecar-ui-${version ?: "VERSION"}.jar [--shared] [--daemon \"claude-sidecar --stdio\"] " +
                    "[--cwd DIR] [--env KEY=VALUE | --env -KEY]... [--env-file FILE] [--theme light|dark]"

        @JvmStatic
        fun main(args: Array<String>) {
            val options = try {
                parse(args)
            } catch (e: SidecarException) {
                System.err.println(e.message)
                null
            } ?: run {
                System.err.println(usage)
                exitProcess(2)
            }
            val logger = SidecarLogger { level, message -> if (level >= SidecarLogger.Level.WARN) System.err.println("[$level] $message") }
            val client = SidecarClient(ClientOptions(daemon = options.daemonOptions(logger)))
            SwingUtilities.invokeLater {
                if (options.dark) FlatDarkLaf.setup() else FlatLightLaf.setup()
                App(client, options.cwd).apply { themeSwitch.isSelected = options.dark }.show()
            }
        }

        /**
         * The options of [args], or null when they are wrong. `--shared` uses the shared daemon
         * (default command `claude-sidecar connect`). `--env` takes a line of `--env-file`'s
         * (`KEY=VALUE`, or `-KEY` to remove one), as the IDE's settings do; a malformed one
         * throws [SidecarException] naming it.
         */
        fun parse(args: Array<String>): Options? {
            var options = Options()
            var i = 0
            while (i < args.size) {
                if (args[i] == "--shared") {
                    options = options.copy(mode = DaemonMode.SHARED)
                    i += 1
                    continue
                }
                val value = args.getOrNull(i + 1) ?: return null
                options = when (args[i]) {
                    "--daemon" -> options.copy(command = CommandLine.split(value).ifEmpty { return null })
                    "--cwd" -> options.copy(cwd = Path.of(value).toAbsolutePath().normalize().toString())
                    "--env" -> options.copy(env = options.env + CommandLine.environment(value, "--env"))
                    "--env-file" -> options.copy(env = options.env + CommandLine.environment(Path.of(value).readText(), value))
                    "--theme" -> options.copy(dark = if (value in listOf("light", "dark")) value == "dark" else return null)
                    else -> return null
                }
                i += 2
            }
            return options
        }
    }
}
