package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.TextEntry
import javax.swing.JComponent
import javax.swing.SwingUtilities

/**
 * The model's answer as markdown, marked "Interrupted" when an interrupt cut it short (unless
 * said elsewhere).
 *
 * A long answer is not rendered whole on every update: the finished blocks ([MarkdownBlocks])
 * are appended to a [MarkdownView] once, and only the growing tail after them (the block still
 * being written) is rendered again. A view takes about [PANE_CHARS] of markdown, then the next
 * one starts: a change relays out the paragraphs of the last view only. Text that arrives
 * finished in bulk (a history, a replaced answer) is appended [SEGMENT_CHARS] at a time, one
 * EDT task each, so the EDT stays free for the user between them. EDT only.
 */
class AnswerView :
    EntryView,
    InterruptMark {
    private val panes = Column(0)
    private var pane = MarkdownView().also { panes.add(it) }

    /** The markdown of the finished blocks in [pane]. */
    private var paneChars = 0
    private val interrupted = mutedLabel("Interrupted").apply { isVisible = false }
    private val blocks = MarkdownBlocks()

    /** The text in the pane's finished part and in [waiting]: a prefix of [text]. */
    private var segmented = 0

    /** Where the pane's tail starts (after the finished part), and the markdown it shows. */
    private var tailStart = 0
    private var tailShown = ""
    private val waiting = ArrayDeque<String>()
    private var draining = false
    private var text = ""
    private var aborted = false
    override var saidElsewhere = false
        set(value) {
            field = value
            interrupted.isVisible = aborted && !value
        }

    override val component: JComponent = Column(0).apply {
        add(panes)
        add(interrupted)
    }

    override fun update(entry: Entry) {
        entry as TextEntry
        aborted = entry.aborted == true
        interrupted.isVisible = aborted && !saidElsewhere
        if (!entry.text.startsWith(text)) restart()
        text = entry.text
        blocks.advance(text)
        // What is finished goes into segments; when the answer is complete, all of it is.
        val finished = if (entry.streaming == true) blocks.cut else text.length
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

    /** Appends one waiting segment; the next in a later EDT task; the tail once none waits. */
    private fun drain() {
        waiting.removeFirstOrNull()?.let { segment ->
            // The tail on screen is this segment, drawn from the same markdown: it stays (the
            // usual end of a streamed answer, whose last block was drawn while it streamed).
            if (segment != tailShown) {
                showTail("")
                if (paneChars >= PANE_CHARS) newPane()
                pane.append(segment)
            }
            tailShown = ""
            paneChars += segment.length
            tailStart = pane.length
        }
        draining = waiting.isNotEmpty()
        // While segments wait, the tail (which comes after them) waits too.
        if (draining) SwingUtilities.invokeLater(::drain) else showTail(text.substring(segmented))
    }

    private fun showTail(markdown: String) {
        if (markdown == tailShown) return
        pane.truncate(tailStart)
        pane.append(markdown)
        tailShown = markdown
    }

    private fun newPane() {
        pane = MarkdownView().also { panes.add(it) }
        paneChars = 0
        tailStart = 0
        tailShown = ""
    }

    private fun restart() {
        blocks.reset()
        panes.removeAll()
        newPane()
        waiting.clear()
        segmented = 0
        text = ""
    }

    private companion object {
        /**
         * About as much markdown as a warm JVM appends in under 10 ms: larger, an EDT task
         * keeps keys waiting; smaller, a fast stream outruns the layout and paint between segments.
         */
        const val SEGMENT_CHARS = 4_000

        /** Markdown per view: its layout, redone for each change, stays within a few milliseconds. */
        const val PANE_CHARS = 8_000
    }
}
