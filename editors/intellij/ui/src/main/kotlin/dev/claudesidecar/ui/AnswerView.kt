package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.TextEntry
import javax.swing.JComponent
import javax.swing.SwingUtilities

/**
 * The model's answer as markdown, marked "Interrupted" when an interrupt cut it short (unless
 * said elsewhere).
 *
 * A long answer is not rendered whole on every update (markdown to HTML to a text pane costs
 * its length): the finished blocks ([MarkdownBlocks]) go into panes of their own, each
 * rendered once, and only the growing tail after them is rendered again. Text that arrives
 * finished in bulk (a history, a replaced answer) is rendered [SEGMENT_CHARS] at a time, one
 * EDT task each, so the EDT stays free for the user between them. EDT only.
 */
class AnswerView :
    EntryView,
    InterruptMark {
    private val segments = Column(0)
    private val tail = MarkdownView()
    private val interrupted = mutedLabel("Interrupted").apply { isVisible = false }
    private val blocks = MarkdownBlocks()

    /** The text in [segments] and [waiting]: a prefix of [text]. */
    private var segmented = 0
    private val waiting = ArrayDeque<String>()
    private var draining = false
    private var text = ""
    private var streaming = false
    private var aborted = false
    override var saidElsewhere = false
        set(value) {
            field = value
            interrupted.isVisible = aborted && !value
        }

    override val component: JComponent = Column(0).apply {
        add(segments)
        add(tail)
        add(interrupted)
    }

    override fun update(entry: Entry) {
        entry as TextEntry
        aborted = entry.aborted == true
        interrupted.isVisible = aborted && !saidElsewhere
        if (!entry.text.startsWith(text)) restart()
        text = entry.text
        streaming = entry.streaming == true
        blocks.advance(text)
        // What is finished goes into segments; when the answer is complete, all of it is.
        val finished = if (streaming) blocks.cut else text.length
        var from = segmented
        for (cut in blocks.cuts.asReversed().takeWhile { it > segmented }.asReversed()) {
            if (cut >= finished) break
            if (cut - from >= SEGMENT_CHARS) {
                waiting.addLast(text.substring(from, cut))
                from = cut
            }
        }
        if (from < finished) waiting.addLast(text.substring(from, finished))
        segmented = finished
        if (!draining) drain()
    }

    /** Renders one waiting segment; the next in a later EDT task; the tail once none waits. */
    private fun drain() {
        waiting.removeFirstOrNull()?.let { segments.add(MarkdownView().apply { markdown = it }) }
        draining = waiting.isNotEmpty()
        // While segments wait, the tail (which comes after them) waits too.
        tail.markdown = if (draining) "" else text.substring(segmented)
        component.revalidate()
        if (draining) SwingUtilities.invokeLater(::drain)
    }

    private fun restart() {
        blocks.reset()
        segments.removeAll()
        waiting.clear()
        segmented = 0
        text = ""
    }

    private companion object {
        /** About as much markdown as renders in a few milliseconds. */
        const val SEGMENT_CHARS = 2_000
    }
}
