package dev.claudesidecar.ui

import dev.claudesidecar.core.ChannelRoster
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
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import java.time.Duration
import java.time.Instant
import javax.swing.JButton
import javax.swing.JLabel
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.JTable
import javax.swing.ListSelectionModel
import javax.swing.Timer
import javax.swing.table.AbstractTableModel
import javax.swing.table.DefaultTableCellRenderer
import kotlin.coroutines.CoroutineContext

/**
 * Who needs you: every chat of the daemon ([SidecarClient.watchChannels]) in a table, the
 * chats waiting for a permission first, with the count of those in [heading]. Columns: state,
 * folder (or the worktree's branch), what a worktree chat changed (+/-), time since its last
 * event, its last prompt. Open (also double-click) hands the selected chat to [onOpen]; with a
 * daemon serving `worktrees`, Review, Merge… and Discard… act on a worktree chat
 * ([WorktreeDialogs]). [start] begins watching; [dispose] ends it.
 */
class ChatRosterPanel(
    private val client: SidecarClient,
    private val uiContext: CoroutineContext = Dispatchers.Swing,
    private val onOpen: (ChannelSummary) -> Unit,
) : JPanel(BorderLayout()) {
    private val scope = CoroutineScope(SupervisorJob() + uiContext)
    private val model = RosterModel()

    /** "Chats · 1 waiting for you" (the count shown only when some wait). */
    val heading = JLabel("Chats").apply {
        font = Theme.font.deriveFont(java.awt.Font.BOLD)
        border = padding(6, 8, 4, 8)
    }

    /** What went wrong watching, or nothing. */
    val message = mutedLabel("")

    val table = JTable(model).apply {
        selectionModel.selectionMode = ListSelectionModel.SINGLE_SELECTION
        autoCreateRowSorter = false
        fillsViewportHeight = true
        setDefaultRenderer(Any::class.java, Renderer())
        rowHeight = getFontMetrics(Theme.font).height + 8
        tableHeader.reorderingAllowed = false
        val widths = intArrayOf(150, 220, 90, 90, 320)
        widths.forEachIndexed { i, w -> columnModel.getColumn(i).preferredWidth = w }
        addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                if (e.clickCount == 2) selected?.let(onOpen)
            }
        })
    }

    /** The selected chat, if any. */
    val selected: ChannelSummary? get() = table.selectedRow.takeIf { it >= 0 }?.let { model.rows[it] }

    val openButton: JButton = primaryButton("Open") { selected?.let(onOpen) }
    val reviewButton: JButton = button("Review") { selected?.let { dialogs.review(it) } }
    val mergeButton: JButton = button("Merge…") { selected?.let { dialogs.merge(it) } }
    val discardButton: JButton = button("Discard…") { selected?.let { dialogs.discard(it) } }
    private val dialogs = WorktreeDialogs(client, this, scope).apply { onBusyChanged = ::enableActions }

    /** Whether the daemon serves `worktrees` (the worktree actions show only then). */
    private var worktrees = false

    /** Redraws the "12 s ago" column every second. */
    private val ticker = Timer(1000) { model.fireTableRowsUpdated(0, (model.rowCount - 1).coerceAtLeast(0)) }

    init {
        add(heading, BorderLayout.NORTH)
        add(
            JScrollPane(table).apply {
                preferredSize = Dimension(860, 200)
            },
            BorderLayout.CENTER,
        )
        val actions = row(openButton, reviewButton, mergeButton, discardButton)
        val south = Column(4).apply {
            add(actions)
            add(message)
            border = padding(4, 4, 6, 4)
        }
        add(south, BorderLayout.SOUTH)
        table.selectionModel.addListSelectionListener { enableActions() }
        enableActions()
    }

    /** Watches the daemon's chats (the list follows every change) and which actions it serves. */
    fun start() {
        scope.launch {
            client.features.collect {
                worktrees = it != null && SidecarClient.WORKTREES in it
                enableActions()
            }
        }
        scope.launch {
            try {
                client.watchChannels().collect(::show)
            } catch (e: SidecarException) {
                message.text = e.message ?: "Cannot list the chats."
            }
        }
        ticker.start()
    }

    /** Stops watching. */
    fun dispose() {
        ticker.stop()
        scope.cancel()
    }

    private fun show(channels: List<ChannelSummary>) {
        val keep = selected?.channelId
        model.rows = channels
        model.fireTableDataChanged()
        val index = channels.indexOfFirst { it.channelId == keep }.takeIf { it >= 0 } ?: if (channels.isNotEmpty()) 0 else -1
        if (index >= 0) table.setRowSelectionInterval(index, index)
        val waiting = channels.count(ChannelRoster::waiting)
        heading.text = if (waiting == 0) "Chats" else "Chats · $waiting waiting for you"
        message.text = if (channels.isEmpty()) "No chat is running." else ""
        enableActions()
    }

    private fun enableActions() {
        val channel = selected
        openButton.isEnabled = channel != null
        // While its merge or discard runs, a chat is not merged or discarded again.
        val busy = channel != null && dialogs.isBusy(channel)
        for (b in listOf(reviewButton, mergeButton, discardButton)) {
            b.isVisible = worktrees
            b.isEnabled = channel?.worktree != null && (b == reviewButton || !busy)
        }
        val tip = if (channel != null && channel.worktree == null) "Only for a chat in a worktree (New chat in worktree…)" else null
        for (b in listOf(reviewButton, mergeButton, discardButton)) b.toolTipText = tip
        if (busy) for (b in listOf(mergeButton, discardButton)) b.toolTipText = "A merge or discard of this chat is under way"
    }

    private class RosterModel : AbstractTableModel() {
        var rows: List<ChannelSummary> = emptyList()

        override fun getRowCount() = rows.size

        override fun getColumnCount() = COLUMNS.size

        override fun getColumnName(column: Int) = COLUMNS[column]

        override fun getValueAt(row: Int, column: Int): Any = ChatRows.cells(rows[row], Instant.now())[column]
    }

    /** The state cell in the state's colour: waiting stands out, ended ones are muted. */
    private inner class Renderer : DefaultTableCellRenderer() {
        override fun getTableCellRendererComponent(t: JTable, value: Any?, sel: Boolean, focus: Boolean, row: Int, column: Int): Component {
            val c = super.getTableCellRendererComponent(t, value, sel, false, row, column)
            val channel = model.rows.getOrNull(row)
            border = padding(0, 6, 0, 6)
            font =
                if (column == 0 && channel != null &&
                    ChannelRoster.waiting(channel)
                ) {
                    Theme.font.deriveFont(java.awt.Font.BOLD)
                } else {
                    Theme.font
                }
            toolTipText = value?.toString()?.takeIf { it.isNotEmpty() }
            // A folder cut at its end would hide its name, the part that tells chats apart: cut its start.
            if (column == 1 && value is String) text = leftElided(value, t.columnModel.getColumn(column).width - 14)
            if (!sel && channel != null) {
                foreground = when {
                    column == 0 && ChannelRoster.waiting(channel) -> Theme.warning
                    column == 0 && ChannelRoster.failed(channel) -> Theme.error
                    channel.state == ChannelState.EXITED -> Theme.muted
                    else -> Theme.foreground
                }
            }
            return c
        }

        private fun leftElided(text: String, width: Int): String {
            val metrics = getFontMetrics(font)
            if (metrics.stringWidth(text) <= width) return text
            var cut = text
            while (cut.isNotEmpty() && metrics.stringWidth("…$cut") > width) cut = cut.drop(1)
            return "…$cut"
        }
    }

    companion object {
        val COLUMNS = listOf("State", "Folder or branch", "Changes", "Last event", "Last prompt")
    }
}

/** How a chat of the daemon reads in the chat list (and in tests). */
object ChatRows {
    /** The row's cells, in [ChatRosterPanel.COLUMNS]' order, as of [now]. */
    fun cells(channel: ChannelSummary, now: Instant): List<String> = listOf(
        state(channel),
        place(channel),
        changes(channel),
        channel.lastEventAt?.let { runCatching { Instant.parse(it) }.getOrNull() }?.let { ago(Duration.between(it, now)) }.orEmpty(),
        channel.lastPrompt.orEmpty(),
    )

    /** "waiting (2)", "running", "idle", "ended", "failed". */
    fun state(channel: ChannelSummary): String {
        val waiting = channel.pendingPermissions.orEmpty().size
        return when {
            ChannelRoster.waiting(channel) -> if (waiting > 1) "waiting for you ($waiting)" else "waiting for you"
            ChannelRoster.failed(channel) -> "failed"
            channel.state == ChannelState.EXITED -> "ended"
            channel.state == ChannelState.AWAITING_PERMISSION -> "waiting for you"
            else -> channel.state.wire
        }
    }

    /** A worktree chat's branch ("⎇ worktree-search"), else its folder (home as `~`). */
    fun place(channel: ChannelSummary): String {
        channel.worktree?.let { return "⎇ ${it.branch}" }
        val home = System.getProperty("user.home")
        return if (home != null && channel.cwd.startsWith("$home/")) "~" + channel.cwd.removePrefix(home) else channel.cwd
    }

    /** "+12 −3 · 2 files" for a worktree chat (as last counted), else nothing. */
    fun changes(channel: ChannelSummary): String {
        val c = channel.changes ?: return if (channel.worktree != null) "no changes" else ""
        if (c.files == 0) return "no changes"
        return "+${c.added} −${c.deleted} · ${c.files} file${if (c.files == 1) "" else "s"}"
    }

    /** "12 s ago", "3 min ago", "2 h ago", "4 d ago". */
    fun ago(elapsed: Duration): String {
        val s = elapsed.seconds.coerceAtLeast(0)
        return when {
            s < 60 -> "$s s ago"
            s < 3600 -> "${s / 60} min ago"
            s < 86400 -> "${s / 3600} h ago"
            else -> "${s / 86400} d ago"
        }
    }
}
