package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.protocol.orUnknown
import dev.claudesidecar.core.transcript.Transcript
import dev.claudesidecar.core.transcript.TranscriptChange
import dev.claudesidecar.core.transcript.id
import dev.claudesidecar.core.transcript.parentId
import java.awt.Container
import java.awt.EventQueue
import java.awt.event.InputEvent
import javax.swing.JComponent
import javax.swing.JScrollPane
import javax.swing.ScrollPaneConstants
import javax.swing.Timer

/**
 * The transcript's entries, top to bottom, in a scroll pane that follows the end while the
 * user is there; a sub-agent's entries sit inside the Agent/Task call that started them. Only
 * what a change names is redrawn; a streaming entry is redrawn at most every
 * [STREAM_RENDER_MS] however fast its deltas come. EDT only.
 */
class TranscriptView(
    private val transcript: Transcript,
    private val context: ViewContext,
) {
    private val column = ScrollableColumn(10).apply { border = padding(12, 14, 12, 14) }
    private val views = HashMap<String, EntryView>()
    private val streaming = LinkedHashSet<String>()
    private val renderTimer = Timer(STREAM_RENDER_MS) { flushStreaming() }.apply { isRepeats = false }

    /** Whether a streaming entry's latest text still waits for the render timer (a test waits for it to be drawn). */
    internal val drawPending: Boolean get() = streaming.isNotEmpty()

    val scrollPane = JScrollPane(column).apply {
        border = null
        horizontalScrollBarPolicy = ScrollPaneConstants.HORIZONTAL_SCROLLBAR_NEVER
        verticalScrollBar.unitIncrement = 24
        viewport.isOpaque = false
        isOpaque = false
    }

    /** Whether the view keeps the end in sight: until the user scrolls away from it, and again once back. */
    private var following = true
    private var scrolledTo = 0

    /** Shown while the conversation has no entry: what to do first. */
    private val hint = wrappingText(EMPTY_HINT, Theme.font, Theme.muted).apply {
        border = padding(24, 0, 0, 0)
        isFocusable = false
    }

    init {
        scrollPane.verticalScrollBar.model.addChangeListener { onScroll() }
        place()
    }

    /** Keeps the end in sight again (the user sent a prompt: its turn is what they look at). */
    fun followEnd() {
        following = true
        val bar = scrollPane.verticalScrollBar
        bar.value = bar.maximum - bar.visibleAmount
        scrolledTo = bar.value
    }

    /** Shows what [change] did to the transcript. */
    fun show(change: TranscriptChange) {
        if (change.isEmpty) return
        var drawn = false
        for (key in change.updated) {
            val entry = transcript.entry(key) ?: continue
            val view = views[key] ?: continue
            if (isStreaming(entry)) {
                streaming += key
                if (!renderTimer.isRunning) renderTimer.start()
            } else {
                streaming -= key
                view.update(entry)
                drawn = true
            }
        }
        if (change.added.isNotEmpty() || change.reordered || hint.parent != null) place()
        if (drawn || change.added.isNotEmpty() || change.reordered) {
            markInterrupts()
            // A delta of a streaming entry changes nothing on screen until the timer draws it.
            relayout()
        }
    }

    /** Draws every entry again in the look and feel now in use (its colours and fonts). */
    fun restyle() {
        hint.font = Theme.font
        hint.foreground = Theme.muted
        streaming.clear()
        views.clear()
        column.removeAll()
        place()
        markInterrupts()
        relayout()
    }

    /**
     * Makes the views of new entries and puts every view where its entry is: in transcript
     * order, a sub-agent's inside its Agent/Task call (at the top level when that call is not shown).
     */
    private fun place() {
        val order = LinkedHashMap<Container, MutableList<JComponent>>()
        order[column] = mutableListOf()
        for (key in transcript.keys) {
            val entry = transcript.entry(key) ?: continue
            val view = views.getOrPut(key) { entryView(key, entry, context) }
            val parent = entry.parentId()?.let { views[it] } as? ToolRow
            order.getOrPut(parent?.children ?: column) { mutableListOf() } += view.component
        }
        order.getValue(column).let { if (it.isEmpty()) it += hint }
        for ((container, components) in order) arrange(container, components)
    }

    /** Puts [components] into [container] in this order, moving only those out of place. */
    private fun arrange(container: Container, components: List<JComponent>) {
        components.forEachIndexed { i, c -> if (i >= container.componentCount || container.getComponent(i) !== c) container.add(c, i) }
        while (container.componentCount > components.size) container.remove(components.size)
    }

    /**
     * "Interrupted" is said once per exchange (a prompt and what follows it): by its footer,
     * which reads how the turn ended; while it has none (a turn still ending, a stored session
     * without its footers), by the first aborted answer or interrupt notice in it.
     */
    private fun markInterrupts() {
        val exchange = mutableListOf<Entry>()
        fun mark() {
            val footer = exchange.lastOrNull { it is TurnEntry } as TurnEntry?
            var said = footer?.outcome.orUnknown() == TurnOutcome.INTERRUPTED
            for (entry in exchange.filter(::saysInterrupted)) {
                (views[entry.id()] as? InterruptMark)?.saidElsewhere = said
                said = true
            }
            exchange.clear()
        }
        for (entry in transcript.entries) {
            if (entry is PromptEntry && entry.parentId == null) mark()
            exchange += entry
        }
        mark()
    }

    private fun saysInterrupted(entry: Entry) =
        (entry is TextEntry && entry.aborted == true) || (entry is NoticeEntry && entry.subtype == "interrupted")

    private fun isStreaming(entry: Entry) =
        (entry is TextEntry && entry.streaming == true) || (entry is ThinkingEntry && entry.streaming == true)

    private fun flushStreaming() {
        if (streaming.isEmpty()) return
        for (key in streaming.toList().also { streaming.clear() }) {
            val entry = transcript.entry(key) ?: continue
            views[key]?.update(entry)
        }
        // A text's own changes repaint what they touch, and a moved or resized view repaints
        // its place: repainting the whole column would paint every visible line each time.
        column.revalidate()
    }

    private fun atEnd(): Boolean {
        val bar = scrollPane.verticalScrollBar
        return bar.value + bar.visibleAmount >= bar.maximum - FOLLOW_SLACK
    }

    /**
     * Keeps the end in sight while [following]: the bar's model changes when someone scrolls
     * (its value: the user, or this view) and when the entries grow or shrink (its maximum),
     * which they also do in EDT tasks after a change (an answer rendered a segment at a time).
     */
    private fun onScroll() {
        val bar = scrollPane.verticalScrollBar
        if (bar.value != scrolledTo) {
            scrolledTo = bar.value
            // Only the user (wheel, scroll bar, keys: an input event) takes the view away from
            // the end; a move of the layout's own (views made again after a theme switch, a
            // text's caret scrolling its ancestors) is undone while following.
            if (EventQueue.getCurrentEvent() is InputEvent) {
                following = atEnd()
            } else if (following && !atEnd()) {
                bar.value = bar.maximum - bar.visibleAmount
            }
        } else if (following && bar.value + bar.visibleAmount < bar.maximum) {
            bar.value = bar.maximum - bar.visibleAmount
        }
    }

    private fun relayout() {
        column.revalidate()
        column.repaint()
    }

    companion object {
        const val STREAM_RENDER_MS = 60

        /** What an empty chat says. */
        const val EMPTY_HINT =
            "Ask Claude to explain, change or review the code of this folder. Enter sends, Shift+Enter starts a new line, Esc stops Claude."

        /** How close to the end (pixels) still counts as "at the end": a new line keeps following. */
        private const val FOLLOW_SLACK = 48
    }
}
