package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.TextEntry
import java.awt.image.BufferedImage
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicBoolean
import javax.swing.JComponent
import javax.swing.SwingUtilities

/**
 * The model's answer as markdown, marked "Interrupted" when an interrupt cut it short (unless
 * said elsewhere).
 *
 * A long answer is not rendered whole on every update: the finished blocks ([MarkdownBlocks])
 * are appended to a [MarkdownView] once, and only the growing tail after them (the block still
 * being written) is rendered again. A view takes about [PANE_CHARS] of markdown, then the next
 * one starts: a change relays out the paragraphs of the last view only. Finished text is
 * parsed into paragraphs [SEGMENT_CHARS] at a time on [RENDERER]'s thread, while the EDT lays
 * out and paints what came before, and appended in EDT tasks of [TASK_NANOS] each, so the EDT
 * stays free for the user between them (a backlog: the end of a fast stream, a history, a
 * replaced answer). EDT only.
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
    private val styles = MarkdownStyles.current()

    /** Finished segments not appended yet, in order, each with its paragraphs being made. */
    private val waiting = ArrayDeque<Segment>()
    private var draining = false
        set(value) {
            if (value != field) rendering += if (value) 1 else -1
            field = value
        }
    private var text = ""

    /** Whether the answer was seen streaming (an answer that comes whole, from a history, is rendered off the EDT). */
    private var streamed = false
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
        if (entry.streaming == true) streamed = true
        if (streamed && entry.streaming != true && waiting.sumOf { it.markdown.length } + finished - segmented <= END_CHARS) {
            // What waits for the markdown thread goes in now too, each segment made here unless it is made.
            while (waiting.isNotEmpty()) appendSegment(waiting.removeFirst())
            draining = false
            finishHere(finished)
            return
        }
        var from = segmented
        for (cut in blocks.cuts.asReversed().takeWhile { it > segmented }.asReversed()) {
            if (cut >= finished) break
            if (cut - from >= SEGMENT_CHARS) {
                waiting.addLast(segment(text.substring(from, cut)))
                from = cut
            }
        }
        if (from < finished) waiting.addLast(segment(text.substring(from, finished)))
        segmented = finished
        if (!draining) drain()
    }

    /**
     * The streamed answer is complete and what is not appended yet is short (what streamed
     * since the last cut, and segments the markdown thread has not made or the EDT not
     * appended): it is rendered here, the last blocks where the tail is. A round trip through
     * [RENDERER] would wait for two other threads to get a core, the end of the answer
     * waiting with them on a busy machine.
     */
    private fun finishHere(finished: Int) {
        showTail(text.substring(segmented, finished))
        paneChars += finished - segmented
        tailStart = pane.length
        tailShown = ""
        segmented = finished
    }

    private fun segment(markdown: String) =
        Segment(markdown, CompletableFuture.supplyAsync({ MarkdownParagraphs(styles).render(markdown) }, RENDERER))

    /**
     * Appends waiting segments in order, each once its paragraphs are made (this runs again
     * when they are), until the task has spent [TASK_NANOS]; the rest in later EDT tasks; the
     * tail once none waits.
     */
    private fun drain() {
        val started = System.nanoTime()
        while (true) {
            val next = waiting.firstOrNull() ?: break
            // The tail on screen is this segment, drawn from the same markdown: it stays (the
            // usual end of a streamed answer, whose last block was drawn while it streamed).
            val drawn = next.markdown == tailShown
            if (!drawn && !next.paragraphs.isDone) {
                draining = true
                next.paragraphs.whenComplete { _, _ -> SwingUtilities.invokeLater(::drain) }
                return
            }
            appendSegment(waiting.removeFirst())
            if (System.nanoTime() - started >= TASK_NANOS) break
        }
        draining = waiting.isNotEmpty()
        // While segments wait, the tail (which comes after them) waits too.
        if (draining) SwingUtilities.invokeLater(::drain) else showTail(text.substring(segmented))
    }

    /**
     * Appends [next] after the finished text (unless it is the tail drawn already), with its
     * paragraphs when they are made, else made here (a failure on the other thread too).
     */
    private fun appendSegment(next: Segment) {
        if (next.markdown != tailShown) {
            showTail("")
            if (paneChars >= PANE_CHARS) newPane()
            val made = if (next.paragraphs.isDone) runCatching { next.paragraphs.join() }.getOrNull() else null
            pane.append(made ?: MarkdownParagraphs(styles).render(next.markdown))
        }
        tailShown = ""
        paneChars += next.markdown.length
        tailStart = pane.length
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

    /** Finished markdown to append, and its paragraphs (made on [RENDERER]'s thread). */
    private class Segment(
        val markdown: String,
        val paragraphs: CompletableFuture<List<StyledParagraph>>,
    )

    companion object {
        private val warm = AtomicBoolean()

        /**
         * Renders a sample answer off screen, once per JVM, so that the first real answer does
         * not pay for loading and first compiling the parser and Swing's text classes while
         * it streams (on a cold JVM that made its end show a second late). Call on the EDT
         * when a chat opens; it returns at once, parsing on the markdown thread, then laying
         * out and painting the sample a block per EDT task, [WARM_UP_ROUNDS] times (the whole
         * sample in one task held a cold EDT 88-183 ms, 35-65 ms of its CPU, three or four times
         * as the first chat opened; now the first table alone, ~45 ms of CPU, goes over 50 ms).
         */
        fun warmUp() {
            if (warm.compareAndSet(false, true)) warmUp(MarkdownStyles.current(), WARM_UP_ROUNDS)
        }

        /** One round of [warmUp], then the next ([rounds] in all), each block in a task of its own. */
        private fun warmUp(styles: MarkdownStyles, rounds: Int) {
            CompletableFuture.supplyAsync({ WARM_UP.map { MarkdownParagraphs(styles).render(it) } }, RENDERER).thenAccept { blocks ->
                SwingUtilities.invokeLater { drawWarmUp(styles, rounds, blocks, 0) }
            }
        }

        /** Lays out and paints block [index] of the sample off screen; the next block in a later task. */
        private fun drawWarmUp(styles: MarkdownStyles, rounds: Int, blocks: List<List<StyledParagraph>>, index: Int) {
            val view = MarkdownView().apply {
                append(blocks[index])
                setSize(WARM_UP_WIDTH, WARM_UP_HEIGHT)
                setSize(WARM_UP_WIDTH, preferredSize.height)
            }
            val image = BufferedImage(WARM_UP_WIDTH, view.height.coerceIn(1, WARM_UP_HEIGHT), BufferedImage.TYPE_INT_ARGB)
            val graphics = image.createGraphics()
            try {
                view.paint(graphics)
            } finally {
                graphics.dispose()
            }
            when {
                index + 1 < blocks.size -> SwingUtilities.invokeLater { drawWarmUp(styles, rounds, blocks, index + 1) }
                rounds > 1 -> warmUp(styles, rounds - 1)
            }
        }

        /** Every kind of block and inline markdown has, a few times over (a few kilobytes), block by block. */
        private val WARM_UP = (1..8).flatMap { i ->
            """
            |## Part $i
            |
            |Some *emphasis*, **strong words**, `inline code` and a [link](https://example.com/$i), long enough
            |to wrap at the width of a chat panel at least once, with a hard break  
            |after it.
            |
            |- a point
            |- another, with `code`
            |  1. nested
            |
            |> A quoted line.
            |
            |```kotlin
            |fun part$i(x: Int): Int {
            |	return x * $i
            |}
            |```
            |
            || Name | Value |
            || --- | --- |
            || part | $i |
            |
            |---
            |
            """.trimMargin().split("\n\n").filter {
                it.isNotBlank()
            }
        }

        /** Rounds of the sample: enough for the just-in-time compiler to take up the hottest paths. */
        private const val WARM_UP_ROUNDS = 4
        private const val WARM_UP_WIDTH = 600
        private const val WARM_UP_HEIGHT = 800

        /** How many answers have markdown still to append (tests wait for none). EDT only. */
        var rendering = 0
            private set

        /**
         * The thread that parses finished markdown into paragraphs: one for every answer, so
         * that an answer's segments are made in order and the parsing never takes both cores.
         */
        private val RENDERER: ExecutorService = Executors.newSingleThreadExecutor { task ->
            Thread(task, "claude-sidecar markdown").apply { isDaemon = true }
        }

        /**
         * The markdown parsed at a time on the other thread: a little more than an EDT task
         * appends while the answer streams, so that its blocks go in as they finish.
         */
        private const val SEGMENT_CHARS = 4_000

        /**
         * How long an EDT task appends segments (a backlog: the end of a fast stream, a long
         * history): the layout and paint that follow take about twice that, so keys typed
         * meanwhile still echo within a few frames; fewer, larger tasks would each stall
         * longer, more and smaller ones would lay out and paint the view again each time.
         */
        private const val TASK_NANOS = 2_000_000L

        /**
         * At most this much markdown left unfinished when an answer completes is rendered on
         * the EDT at once (a few milliseconds, as a streaming tail is); more goes through [RENDERER].
         */
        private const val END_CHARS = 8_000

        /** Markdown per view: its layout, redone for each change, stays within a few milliseconds. */
        private const val PANE_CHARS = 8_000
    }
}
