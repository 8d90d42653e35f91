package dev.claudesidecar.ui

import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import java.awt.BorderLayout
import java.awt.Component
import java.awt.Dimension
import java.awt.event.KeyEvent
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import javax.swing.AbstractAction
import javax.swing.DefaultListModel
import javax.swing.JButton
import javax.swing.JLabel
import javax.swing.JList
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.KeyStroke
import javax.swing.ListCellRenderer
import javax.swing.ListSelectionModel
import kotlin.coroutines.CoroutineContext

/**
 * The chats running in the shared daemon (`claude/listChannels`), whoever started them, each
 * with its folder, state, model and the editors attached to it; double-click, Enter or
 * [attachButton] opens the selected one through [onAttach]. With a private daemon it says
 * that attaching needs the shared one. [uiContext]: the EDT dispatcher of its requests.
 */
class RunningChatList(
    private val client: SidecarClient,
    uiContext: CoroutineContext = Dispatchers.Swing,
    private val onAttach: (ChannelSummary) -> Unit,
) : JPanel(BorderLayout()) {
    private val scope = CoroutineScope(SupervisorJob() + uiContext)
    private val model = DefaultListModel<ChannelSummary>()
    val list: JList<ChannelSummary> = JList(model).apply {
        selectionMode = ListSelectionModel.SINGLE_SELECTION
        cellRenderer = ChannelRenderer()
        addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                if (e.clickCount == 2) selectedValue?.let(onAttach)
            }
        })
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, 0), "attach")
        actionMap.put(
            "attach",
            object : AbstractAction() {
                override fun actionPerformed(e: java.awt.event.ActionEvent?) {
                    selectedValue?.let(onAttach)
                }
            },
        )
        addListSelectionListener { attachButton.isEnabled = selectedValue != null }
    }

    /** Attaches the selected chat. */
    val attachButton: JButton = primaryButton("Attach") { list.selectedValue?.let(onAttach) }.apply { isEnabled = false }
    private val message = wrappingText("", Theme.smallFont, Theme.muted)

    init {
        add(row(JLabel("Chats running in the shared daemon"), linkButton("Refresh") { load() }), BorderLayout.NORTH)
        add(JScrollPane(list).apply { preferredSize = Dimension(560, 220) }, BorderLayout.CENTER)
        add(
            Column(6).apply {
                add(message)
                add(row(attachButton))
            },
            BorderLayout.SOUTH,
        )
        border = padding(8, 8, 8, 8)
    }

    /** Lists the running chats again. */
    fun load() {
        message.text = "Loading…"
        scope.launch {
            try {
                val channels = client.runningChats()
                model.clear()
                channels.forEach { model.addElement(it) }
                if (channels.isNotEmpty()) list.selectedIndex = 0
                message.text = if (channels.isEmpty()) "No chat is running in the shared daemon." else ""
            } catch (e: SidecarException) {
                model.clear()
                message.text = e.message ?: "Cannot list the running chats."
            }
        }
    }

    fun dispose() = scope.cancel()

    private inner class ChannelRenderer : ListCellRenderer<ChannelSummary> {
        private val title = JLabel()
        private val facts = mutedLabel("")
        private val cell = Column(2).apply {
            border = padding(6, 8, 6, 8)
            add(title)
            add(facts)
        }

        override fun getListCellRendererComponent(
            list: JList<out ChannelSummary>,
            value: ChannelSummary,
            index: Int,
            selected: Boolean,
            focus: Boolean,
        ): Component {
            title.text = RunningChats.title(value)
            facts.text = RunningChats.facts(value, client.chatOf(value.channelId) != null)
            cell.isOpaque = selected
            cell.background = list.selectionBackground
            title.foreground = if (selected) list.selectionForeground else list.foreground
            cell.setSize(list.width, 1)
            return cell
        }
    }
}

/** How a running chat of the shared daemon is named in lists (this panel, the IDE's popup). */
object RunningChats {
    /** Its folder (home as `~`) and state: "~/src/shop · running". */
    fun title(channel: ChannelSummary): String {
        val home = System.getProperty("user.home")
        val folder = if (home != null && channel.cwd.startsWith("$home/")) "~" + channel.cwd.removePrefix(home) else channel.cwd
        val state = if (channel.state == ChannelState.AWAITING_PERMISSION) "waiting for permission" else channel.state.wire
        return "$folder · $state"
    }

    /** Its model, the editors attached and what waits: "ch-2 · sonnet · 2 editors: nvim, vscode · 1 waiting for an answer · open here". */
    fun facts(channel: ChannelSummary, openHere: Boolean): String = buildList {
        add(channel.channelId)
        channel.model?.let(::add)
        val clients = channel.clients.orEmpty().map { it.clientName ?: it.connectionId }
        add(
            when (clients.size) {
                0 -> "no editor attached"
                1 -> "1 editor: ${clients.single()}"
                else -> "${clients.size} editors: ${clients.joinToString(", ")}"
            },
        )
        channel.pendingPermissions?.takeIf { it.isNotEmpty() }?.let { add("${it.size} waiting for an answer") }
        if (openHere) add("open here")
    }.joinToString(" · ")
}
