package dev.claudesidecar.ui

import dev.claudesidecar.core.transcript.TextEntry
import dev.claudesidecar.core.transcript.Transcript
import dev.claudesidecar.core.transcript.TranscriptChange
import javax.swing.JScrollPane
import javax.swing.ScrollPaneConstants
import javax.swing.SwingUtilities
import javax.swing.Timer

/**
 * The transcript's entries, top to bottom, in a scroll pane that follows the end while the
 * user is there. Only what a change names is redrawn; a streaming answer is re-rendered at
 * most every [STREAM_RENDER_MS] however fast its deltas come. EDT only.
 */
class TranscriptView(
    private val transcript: Transcript,
    private val context: ViewContext,
) {
    private val column = ScrollableColumn(10).apply { border = padding(12, 14, 12, 14) }
    private val queued = wrappingText("", Theme.smallFont, Theme.muted).apply { isVisible = false }
    private val views = HashMap<Int, EntryView>()
    private val streaming = LinkedHashSet<EntryView>()
    private val renderTimer = Timer(STREAM_RENDER_MS) { flushStreaming() }.apply { isRepeats = false }

    val scrollPane = JScrollPane(column).apply {
        border = null
        horizontalScrollBarPolicy = ScrollPaneConstants.HORIZONTAL_SCROLLBAR_NEVER
        verticalScrollBar.unitIncrement = 24
        viewport.isOpaque = false
        isOpaque = false
    }

    init {
        column.add(queued)
    }

    /** Shows what [change] did to the transcript. */
    fun show(change: TranscriptChange) {
        val follow = atEnd()
        if (change.rebuilt) {
            rebuild()
        } else {
            for (entry in change.added) {
                val view = entryView(entry, context).also { views[entry.id] = it }
                column.add(view.component, column.componentCount - 1)
                view.update()
            }
            for (entry in change.updated) {
                val view = views[entry.id] ?: continue
                if (entry is TextEntry && entry.streaming) {
                    streaming += view
                    if (!renderTimer.isRunning) renderTimer.start()
                } else {
                    streaming -= view
                    view.update()
                }
            }
        }
        showQueued()
        if (change.added.isNotEmpty() || change.updated.isNotEmpty() || change.rebuilt) relayout(follow)
    }

    /** Redraws every entry (a history went in front of them). */
    fun rebuild() {
        streaming.clear()
        views.clear()
        column.removeAll()
        for (entry in transcript.entries) {
            val view = entryView(entry, context).also { views[entry.id] = it }
            column.add(view.component)
            view.update()
        }
        column.add(queued)
    }

    /** Draws every entry again in the look and feel now in use (its colours and fonts). */
    fun restyle() {
        val follow = atEnd()
        queued.font = Theme.smallFont
        queued.foreground = Theme.muted
        rebuild()
        showQueued()
        relayout(follow)
    }

    private fun flushStreaming() {
        if (streaming.isEmpty()) return
        val follow = atEnd()
        streaming.toList().also { streaming.clear() }.forEach { it.update() }
        relayout(follow)
    }

    private fun showQueued() {
        val prompts = transcript.queued
        queued.isVisible = prompts.isNotEmpty()
        queued.text = prompts.joinToString("\n") { "Queued: ${it.text}" }
    }

    private fun atEnd(): Boolean {
        val bar = scrollPane.verticalScrollBar
        return bar.value + bar.visibleAmount >= bar.maximum - FOLLOW_SLACK
    }

    private fun relayout(follow: Boolean) {
        column.revalidate()
        column.repaint()
        if (follow) {
            // After the layout that the revalidate above schedules.
            SwingUtilities.invokeLater {
                scrollPane.validate()
                val bar = scrollPane.verticalScrollBar
                bar.value = bar.maximum
            }
        }
    }

    companion object {
        const val STREAM_RENDER_MS = 60

        /** How close to the end (pixels) still counts as "at the end": a new line keeps following. */
        private const val FOLLOW_SLACK = 48
    }
}
