package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.TextEntry
import javax.swing.JComponent

/** The model's answer as markdown, marked "Interrupted" when an interrupt cut it short. */
class AnswerView : EntryView {
    private val markdown = MarkdownView()
    private val interrupted = mutedLabel("Interrupted").apply { isVisible = false }
    override val component: JComponent = Column(2).apply {
        add(markdown)
        add(interrupted)
    }

    override fun update(entry: Entry) {
        entry as TextEntry
        markdown.markdown = entry.text
        interrupted.isVisible = entry.aborted == true
    }
}
