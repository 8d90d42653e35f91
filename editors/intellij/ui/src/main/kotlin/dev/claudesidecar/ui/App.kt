package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.CommandLine
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.DaemonOptions
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.SidecarLogger
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.NewChannelParams
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import java.awt.BorderLayout
import java.awt.Dimension
import java.awt.event.WindowAdapter
import java.awt.event.WindowEvent
import java.nio.file.Path
import javax.swing.JDialog
import javax.swing.JFrame
import javax.swing.JOptionPane
import javax.swing.JPanel
import javax.swing.JSplitPane
import javax.swing.JTabbedPane
import javax.swing.SwingUtilities
import kotlin.system.exitProcess

/**
 * The standalone app: the chat panel without an IDE, to try and test the client.
 *
 *     java -jar ui/target/claude-sidecar-ui.jar [--shared] [--daemon "claude-sidecar --stdio"] [--cwd DIR]
 *
 * A window with the folder's stored sessions on the left (double-click resumes one) and a
 * tab per chat on the right. `--shared` uses the shared daemon (`claude-sidecar connect`):
 * "Attach to running chat…" opens a chat running there, and "Close chat…" may leave it running.
 */
class App(
    private val client: SidecarClient,
    private val cwd: String,
) {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Swing)
    private val tabs = JTabbedPane()
    private val sessions = SessionList(client, cwd) { session -> openChat(session.title.ifBlank { "Resumed" }, resume = session.sessionId) }
    val frame = JFrame("Claude — ${Path.of(cwd).fileName ?: cwd}")

    /** The "Attach to running chat…" dialog while it is open. */
    var attachDialog: JDialog? = null
        private set

    init {
        val toolbar = row(
            primaryButton("New chat") { openChat("Chat ${tabs.tabCount + 1}") },
            button("Attach to running chat…") { showAttachDialog() },
            button("Close chat…") { closeSelectedChat() },
            button("Refresh sessions") { sessions.load() },
        )
        toolbar.border = padding(6, 6, 6, 6)
        val right = JPanel(BorderLayout()).apply {
            add(toolbar, BorderLayout.NORTH)
            add(tabs, BorderLayout.CENTER)
        }
        frame.contentPane = JSplitPane(JSplitPane.HORIZONTAL_SPLIT, sessions, right).apply { dividerLocation = 260 }
        frame.size = Dimension(1100, 800)
        frame.defaultCloseOperation = JFrame.DO_NOTHING_ON_CLOSE
        frame.addWindowListener(object : WindowAdapter() {
            override fun windowClosing(e: WindowEvent) = quit()
        })
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
        val dialog = JDialog(frame, "Attach to a running chat", false)
        lateinit var list: RunningChatList
        list = RunningChatList(client) { channel ->
            dialog.dispose()
            attach(channel)
        }
        dialog.contentPane = list
        dialog.addWindowListener(object : WindowAdapter() {
            override fun windowClosed(e: WindowEvent) {
                list.dispose()
                attachDialog = null
            }
        })
        dialog.defaultCloseOperation = JDialog.DISPOSE_ON_CLOSE
        dialog.pack()
        dialog.setLocationRelativeTo(frame)
        attachDialog = dialog
        dialog.isVisible = true
        list.load()
    }

    /** Opens [channel], a chat running in the shared daemon, in a tab. */
    fun attach(channel: ChannelSummary) {
        client.chatOf(channel.channelId)?.let { open -> panels.firstOrNull { it.chat === open }?.let { return select(it) } }
        val panel = ChatPanel()
        tabs.addTab(channel.cwd.substringAfterLast('/').ifEmpty { channel.channelId }.take(24), panel)
        tabs.selectedComponent = panel
        scope.launch {
            try {
                panel.attach(client.attachChat(channel, panel.listener))
                panel.prompt.text.requestFocusInWindow()
            } catch (e: SidecarException) {
                JOptionPane.showMessageDialog(frame, e.message, "Cannot attach to the chat", JOptionPane.ERROR_MESSAGE)
                tabs.remove(panel)
            }
        }
    }

    private fun select(panel: ChatPanel) {
        tabs.selectedComponent = panel
    }

    /**
     * Closes the selected tab. With the shared daemon the user chooses: detach (the chat runs
     * on in the daemon, where Attach lists it) or end it (its CLI stops, for every editor).
     */
    private fun closeSelectedChat() {
        val panel = selectedPanel ?: return
        val chat = panel.chat
        val end = if (client.mode == DaemonMode.SHARED && chat != null) {
            val options = arrayOf("Detach (keep it running)", "End the chat", "Cancel")
            when (
                JOptionPane.showOptionDialog(
                    frame,
                    "The chat can run on in the shared daemon (Attach to running chat… opens it again), or end for every editor.",
                    "Close chat",
                    JOptionPane.DEFAULT_OPTION,
                    JOptionPane.QUESTION_MESSAGE,
                    null,
                    options,
                    options[0],
                )
            ) {
                0 -> false
                1 -> true
                else -> return
            }
        } else {
            true
        }
        tabs.remove(panel)
        panel.dispose()
        if (chat != null) scope.launch { runCatching { if (end) chat.close() else chat.detach() } }
    }

    /** A new chat, or a stored session resumed ([resume]), in a new tab. */
    fun openChat(title: String, resume: String? = null) {
        val panel = ChatPanel()
        tabs.addTab(title.take(24), panel)
        tabs.selectedComponent = panel
        scope.launch {
            try {
                val chat = if (resume == null) {
                    client.openChat(NewChannelParams(cwd), panel.listener)
                } else {
                    client.resumeChat(cwd, resume, listener = panel.listener)
                }
                panel.attach(chat)
                panel.prompt.text.requestFocusInWindow()
            } catch (e: SidecarException) {
                JOptionPane.showMessageDialog(frame, e.message, "Cannot open the chat", JOptionPane.ERROR_MESSAGE)
                tabs.remove(panel)
            }
        }
    }

    private fun quit() {
        frame.isVisible = false
        // Closing ends the daemon (shutdown, then kill after the grace period): off the EDT.
        Thread {
            runCatching { client.close() }
            exitProcess(0)
        }.start()
    }

    companion object {
        @JvmStatic
        fun main(args: Array<String>) {
            val options = parse(args) ?: run {
                System.err.println(USAGE)
                exitProcess(2)
            }
            val logger = SidecarLogger { level, message -> if (level >= SidecarLogger.Level.WARN) System.err.println("[$level] $message") }
            val client = SidecarClient(ClientOptions(daemon = options.daemon.copy(logger = logger)))
            SwingUtilities.invokeLater {
                FlatLightLaf.setup()
                App(client, options.cwd).show()
            }
        }

        private const val USAGE = "usage: java -jar claude-sidecar-ui.jar [--shared] [--daemon \"claude-sidecar --stdio\"] [--cwd DIR]"

        /** What the command line asks for: the daemon and the folder. */
        data class Options(
            val daemon: DaemonOptions,
            val cwd: String,
        )

        /**
         * The daemon (`--shared`: the shared one; `--daemon`: its command, default `claude-sidecar
         * --stdio` or, shared, `claude-sidecar connect`) and the folder; null when the arguments are wrong.
         */
        fun parse(args: Array<String>): Options? {
            var command: List<String>? = null
            var mode = DaemonMode.PRIVATE
            var cwd = Path.of("").toAbsolutePath().toString()
            var i = 0
            while (i < args.size) {
                when (args[i]) {
                    "--daemon" -> command = args.getOrNull(++i)?.let(CommandLine::split)?.takeIf { it.isNotEmpty() } ?: return null
                    "--shared" -> mode = DaemonMode.SHARED
                    "--cwd" -> cwd = args.getOrNull(++i)?.let { Path.of(it).toAbsolutePath().normalize().toString() } ?: return null
                    else -> return null
                }
                i++
            }
            return Options(DaemonOptions(command = command, mode = mode, clientName = "claude-sidecar-app"), cwd)
        }
    }
}
