package dev.claudesidecar.ui

import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.SessionSummary
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import java.awt.BorderLayout
import java.awt.Component
import java.awt.event.ComponentAdapter
import java.awt.event.ComponentEvent
import java.awt.event.KeyEvent
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import javax.swing.AbstractAction
import javax.swing.DefaultListModel
import javax.swing.JLabel
import javax.swing.JList
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.KeyStroke
import javax.swing.ListCellRenderer
import kotlin.coroutines.CoroutineContext

/**
 * The stored sessions of a folder (`claude/listSessions`), newest first; double-click or
 * Enter resumes one through [onOpen]. Titles wrap at the list's width (never cut off with
 * "…"). [uiContext]: the EDT dispatcher of its requests. A host calls [load] again when a
 * turn ended (a new session appears, an old one moves up).
 */
class SessionList(
    private val client: SidecarClient,
    private val cwd: String,
    uiContext: CoroutineContext = Dispatchers.Swing,
    private val onOpen: (SessionSummary) -> Unit,
) : JPanel(BorderLayout()) {
    private val scope = CoroutineScope(SupervisorJob() + uiContext)

    /** False until the list is built: Swing calls [updateUI] from JPanel's constructor too. */
    private var built = false
    private val model = DefaultListModel<SessionSummary>()
    val list = JList(model).apply {
        cellRenderer = SessionRenderer()
        addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                if (e.clickCount == 2) selectedValue?.let(onOpen)
            }
        })
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, 0), "open")
        actionMap.put(
            "open",
            object : AbstractAction() {
                override fun actionPerformed(e: java.awt.event.ActionEvent?) {
                    selectedValue?.let(onOpen)
                }
            },
        )
    }
    private val message = mutedLabel("")

    init {
        // A cell's height depends on the width its title wraps at: JList measures its cells
        // once, so a new width measures them again.
        list.addComponentListener(object : ComponentAdapter() {
            override fun componentResized(e: ComponentEvent) {
                list.fixedCellHeight = 1
                list.fixedCellHeight = -1
            }
        })
        add(row(JLabel("Sessions in ${cwd.substringAfterLast('/')}"), linkButton("Refresh") { load() }), BorderLayout.NORTH)
        add(JScrollPane(list), BorderLayout.CENTER)
        add(message, BorderLayout.SOUTH)
        border = padding(8, 8, 8, 8)
        built = true
    }

    fun load() {
        message.text = "Loading…"
        scope.launch {
            try {
                val sessions = client.listSessions(cwd)
                model.clear()
                sessions.forEach { model.addElement(it) }
                message.text = if (sessions.isEmpty()) "No stored sessions yet." else ""
            } catch (e: SidecarException) {
                message.text = "Cannot list the sessions: ${e.message}"
            }
        }
    }

    fun dispose() = scope.cancel()

    // The renderer takes its colours and fonts from [Theme] when it is made: a new look and
    // feel makes it again.
    override fun updateUI() {
        super.updateUI()
        if (!built) return
        list.cellRenderer = SessionRenderer()
        message.foreground = Theme.muted
    }

    companion object {
        /**
         * A session's title, whole: the daemon cuts a title made from the first prompt short
         * ("…"); the list wraps the prompt itself instead.
         */
        fun titleOf(session: SessionSummary): String {
            session.customTitle?.let { return it }
            val cut = session.title.removeSuffix("…").trimEnd()
            return when {
                session.title.isBlank() -> session.firstPrompt
                session.title.endsWith("…") && session.firstPrompt.startsWith(cut) -> session.firstPrompt
                else -> session.title
            }
        }
    }

    private class SessionRenderer : ListCellRenderer<SessionSummary> {
        private val title = wrappingText("")
        private val facts = wrappingText("", Theme.smallFont, Theme.muted)
        private val cell = Column(2).apply {
            border = padding(6, 8, 6, 8)
            add(title)
            add(facts)
        }

        override fun getListCellRendererComponent(
            list: JList<out SessionSummary>,
            value: SessionSummary,
            index: Int,
            selected: Boolean,
            focus: Boolean,
        ): Component {
            title.text = titleOf(value)
            val branch = value.gitBranch?.let { "  ·  $it" } ?: ""
            facts.text = "${value.updatedAt.take(16).replace('T', ' ')}  ·  ${value.messageCount} messages$branch"
            cell.toolTipText = value.firstPrompt.takeIf { it.isNotBlank() && it != title.text }
            cell.isOpaque = selected
            cell.background = list.selectionBackground
            title.foreground = if (selected) list.selectionForeground else list.foreground
            cell.setSize(list.width, 1) // the title wraps at this width
            return cell
        }
    }
}
