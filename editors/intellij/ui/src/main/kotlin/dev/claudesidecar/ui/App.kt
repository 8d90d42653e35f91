package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.DaemonOptions
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.SidecarLogger
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
 *     java -jar ui/target/claude-sidecar-ui.jar [--daemon "claude-sidecar --stdio"] [--cwd DIR]
 *
 * A window with the folder's stored sessions on the left (double-click resumes one) and a
 * tab per chat on the right.
 */
class App(
    private val client: SidecarClient,
    private val cwd: String,
) {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Swing)
    private val tabs = JTabbedPane()
    private val sessions = SessionList(client, cwd) { session -> openChat(session.title.ifBlank { "Resumed" }, resume = session.sessionId) }
    val frame = JFrame("Claude — ${Path.of(cwd).fileName ?: cwd}")

    init {
        val toolbar =
            row(primaryButton("New chat") { openChat("Chat ${tabs.tabCount + 1}") }, button("Refresh sessions") { sessions.load() })
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

    fun show() {
        frame.isVisible = true
        sessions.load()
        openChat("Chat 1")
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
                System.err.println("usage: java -jar claude-sidecar-ui.jar [--daemon \"claude-sidecar --stdio\"] [--cwd DIR]")
                exitProcess(2)
            }
            val logger = SidecarLogger { level, message -> if (level >= SidecarLogger.Level.WARN) System.err.println("[$level] $message") }
            val client = SidecarClient(ClientOptions(daemon = DaemonOptions(command = options.first, logger = logger)))
            SwingUtilities.invokeLater {
                FlatLightLaf.setup()
                App(client, options.second).show()
            }
        }

        /** The daemon command and the folder, or null when the arguments are wrong. */
        private fun parse(args: Array<String>): Pair<List<String>, String>? {
            var command = listOf("claude-sidecar", "--stdio")
            var cwd = Path.of("").toAbsolutePath().toString()
            var i = 0
            while (i < args.size) {
                when (args[i]) {
                    "--daemon" -> command = args.getOrNull(++i)?.trim()?.split(Regex("\\s+")) ?: return null
                    "--cwd" -> cwd = args.getOrNull(++i)?.let { Path.of(it).toAbsolutePath().normalize().toString() } ?: return null
                    else -> return null
                }
                i++
            }
            return command to cwd
        }
    }
}
