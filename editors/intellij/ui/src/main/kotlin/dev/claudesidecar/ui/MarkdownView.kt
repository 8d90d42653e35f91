package dev.claudesidecar.ui

import java.awt.Desktop
import java.net.URI
import javax.swing.JEditorPane
import javax.swing.event.HyperlinkEvent
import javax.swing.text.DefaultCaret

/**
 * Markdown rendered in a read-only, selectable HTML pane. [markdown] re-renders the whole
 * text: the transcript only calls it for the block that changed, and throttles streaming.
 */
class MarkdownView : JEditorPane() {
    private var source: String? = null

    init {
        editorKit = Markdown.editorKit()
        isEditable = false
        isOpaque = false
        border = null
        putClientProperty(HONOR_DISPLAY_PROPERTIES, true)
        font = Theme.font
        // A caret that follows the text would scroll the transcript on every render.
        (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
        addHyperlinkListener { e ->
            if (e.eventType == HyperlinkEvent.EventType.ACTIVATED && Desktop.isDesktopSupported()) {
                runCatching { Desktop.getDesktop().browse(URI(e.url.toString())) }
            }
        }
    }

    /** The markdown shown; setting the same text again does nothing. */
    var markdown: String
        get() = source ?: ""
        set(value) {
            if (value == source) return
            source = value
            text = Markdown.toHtml(value)
            revalidate()
        }

    /** The rendered text, for tests and accessibility. */
    val plainText: String get() = document.getText(0, document.length)
}
