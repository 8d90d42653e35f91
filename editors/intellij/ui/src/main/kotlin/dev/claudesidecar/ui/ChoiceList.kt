package dev.claudesidecar.ui

import dev.claudesidecar.core.SidecarException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import java.awt.BorderLayout
import java.awt.Component
import java.awt.event.ActionEvent
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
import javax.swing.ListSelectionModel
import kotlin.coroutines.CoroutineContext

/**
 * A list of what the daemon has (stored sessions, running chats) to pick one from: [heading]
 * and Refresh over it, each item a wrapping title over a line of muted facts, a message under
 * it (loading, none, why not). Double-click or Enter picks the selected item ([onChoose]).
 * [uiContext]: the EDT dispatcher of its requests. Subclasses say what to [fetch] and how an
 * item reads.
 */
abstract class ChoiceList<T : Any>(
    heading: String,
    uiContext: CoroutineContext,
    private val onChoose: (T) -> Unit,
) : JPanel(BorderLayout()) {
    protected val scope = CoroutineScope(SupervisorJob() + uiContext)
    private val model = DefaultListModel<T>()

    /** False until the list is built: Swing calls [updateUI] from JPanel's constructor too. */
    private var built = false

    val list: JList<T> = JList(model).apply {
        selectionMode = ListSelectionModel.SINGLE_SELECTION
        cellRenderer = Renderer()
        addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                if (e.clickCount == 2) selectedValue?.let(onChoose)
            }
        })
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, 0), CHOOSE)
        actionMap.put(
            CHOOSE,
            object : AbstractAction() {
                override fun actionPerformed(e: ActionEvent?) {
                    selectedValue?.let(onChoose)
                }
            },
        )
    }
    protected val scrollPane = JScrollPane(list)

    /** Under the list: the message, then what a subclass adds. */
    protected val south = Column(6)
    private val message = wrappingText("", Theme.smallFont, Theme.muted)

    init {
        // A cell's height depends on the width its title wraps at: JList measures its cells
        // once, so a new width measures them again.
        list.addComponentListener(object : ComponentAdapter() {
            override fun componentResized(e: ComponentEvent) {
                list.fixedCellHeight = 1
                list.fixedCellHeight = -1
            }
        })
        south.add(message)
        add(row(JLabel(heading), linkButton("Refresh") { load() }), BorderLayout.NORTH)
        add(scrollPane, BorderLayout.CENTER)
        add(south, BorderLayout.SOUTH)
        border = padding(8, 8, 8, 8)
        built = true
    }

    /** The items, newest or oldest first as the daemon gives them. */
    protected abstract suspend fun fetch(): List<T>

    /** What shows when there are none. */
    protected abstract val emptyText: String

    /** What shows when they cannot be listed. */
    protected abstract fun failedText(e: SidecarException): String

    /** The item's first line (wraps). */
    protected abstract fun title(item: T): String

    /** The item's second line, muted. */
    protected abstract fun facts(item: T): String

    /** The item's tooltip, if any. */
    protected open fun tooltip(item: T): String? = null

    /** Called on the EDT after the items were shown. */
    protected open fun loaded(items: List<T>) {}

    /** Lists the items again. */
    fun load() {
        message.text = "Loading…"
        scope.launch {
            val items = try {
                fetch()
            } catch (e: SidecarException) {
                message.text = failedText(e)
                return@launch
            }
            model.clear()
            items.forEach { model.addElement(it) }
            message.text = if (items.isEmpty()) emptyText else ""
            loaded(items)
        }
    }

    /** Stops its requests. */
    fun dispose() = scope.cancel()

    // The renderer and the message take their colours and fonts from [Theme] when they are
    // made: a new look and feel makes them again.
    override fun updateUI() {
        super.updateUI()
        if (!built) return
        list.cellRenderer = Renderer()
        message.foreground = Theme.muted
        message.font = Theme.smallFont
    }

    companion object {
        /** The key of the list's action that picks the selected item (Enter). */
        const val CHOOSE = "choose"
    }

    private inner class Renderer : ListCellRenderer<T> {
        private val title = wrappingText("")
        private val facts = wrappingText("", Theme.smallFont, Theme.muted)
        private val cell = Column(2).apply {
            border = padding(6, 8, 6, 8)
            add(title)
            add(facts)
        }

        override fun getListCellRendererComponent(list: JList<out T>, value: T, index: Int, selected: Boolean, focus: Boolean): Component {
            title.text = title(value)
            facts.text = facts(value)
            cell.toolTipText = tooltip(value)
            cell.isOpaque = selected
            cell.background = list.selectionBackground
            title.foreground = if (selected) list.selectionForeground else list.foreground
            cell.setSize(list.width, 1) // the title wraps at this width
            return cell
        }
    }
}
