package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Cursor
import java.awt.Desktop
import java.awt.Graphics
import java.awt.Shape
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import java.net.URI
import javax.swing.JTextPane
import javax.swing.SizeRequirements
import javax.swing.text.AbstractDocument
import javax.swing.text.DefaultCaret
import javax.swing.text.DefaultStyledDocument
import javax.swing.text.DefaultStyledDocument.ElementSpec
import javax.swing.text.Document
import javax.swing.text.Element
import javax.swing.text.ParagraphView
import javax.swing.text.SimpleAttributeSet
import javax.swing.text.StyleConstants
import javax.swing.text.StyleContext
import javax.swing.text.StyledEditorKit
import javax.swing.text.ViewFactory

/**
 * Markdown in one read-only, selectable styled document (see [MarkdownParagraphs]). It grows
 * at its end: [append] adds rendered blocks and [truncate] drops what follows an offset, so
 * a streaming answer renders only what is new, and Swing lays out and paints only the
 * paragraphs that changed (an HTML pane would parse, style and lay out its whole text again).
 */
class MarkdownView : JTextPane() {
    private val styles = MarkdownStyles()

    /** The markdown [markdown] set, until [append] or [truncate] change the text. */
    private var source: String? = null

    init {
        editorKit = Kit()
        isEditable = false
        isOpaque = false
        border = null
        // A caret that follows the text would scroll the transcript on every render.
        (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
        font = Theme.font
        foreground = styles.foreground
        styledDocument.getStyle(StyleContext.DEFAULT_STYLE).apply {
            StyleConstants.setFontFamily(this, styles.family)
            StyleConstants.setFontSize(this, styles.size)
            StyleConstants.setForeground(this, styles.foreground)
        }
        val links = object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                val link = linkAt(e) ?: return
                if (Desktop.isDesktopSupported()) runCatching { Desktop.getDesktop().browse(URI(link)) }
            }

            override fun mouseMoved(e: MouseEvent) {
                cursor = Cursor.getPredefinedCursor(if (linkAt(e) != null) Cursor.HAND_CURSOR else Cursor.TEXT_CURSOR)
            }
        }
        addMouseListener(links)
        addMouseMotionListener(links)
    }

    /** The markdown shown, rendered whole; setting the same text again does nothing. */
    var markdown: String
        get() = source ?: plainText
        set(value) {
            if (value == source) return
            truncate(0)
            append(value)
            source = value
        }

    /** The number of characters in the document: an offset to [truncate] to later. */
    val length: Int get() = document.length

    /** Renders [markdown] (whole blocks) after what is shown. */
    fun append(markdown: String) {
        source = null
        val paragraphs = MarkdownParagraphs(styles).render(markdown)
        if (paragraphs.isEmpty()) return
        val base = styledDocument.getStyle(StyleContext.DEFAULT_STYLE)
        for (paragraph in paragraphs) paragraph.attributes.resolveParent = base
        (styledDocument as MarkdownDocument).append(paragraphs)
        revalidate()
    }

    /** Drops everything after [offset] (what [length] was before an [append]). */
    fun truncate(offset: Int) {
        if (offset >= document.length) return
        source = null
        document.remove(offset, document.length - offset)
        revalidate()
    }

    /** The rendered text, for tests and accessibility. */
    val plainText: String get() = document.getText(0, document.length)

    private fun linkAt(e: MouseEvent): String? {
        val offset = viewToModel2D(e.point)
        if (offset < 0) return null
        val element = styledDocument.getCharacterElement(offset)
        val bounds = modelToView2D(element.startOffset)?.bounds ?: return null
        if (e.y < bounds.y) return null
        return element.attributes.getAttribute(MarkdownAttribute.LINK) as? String
    }

    /**
     * A styled document that takes rendered paragraphs in one edit: one event for the views
     * (inserting run by run and styling paragraph by paragraph would send one per call).
     */
    private class MarkdownDocument : DefaultStyledDocument() {
        fun append(paragraphs: List<StyledParagraph>) {
            val offset = length
            val specs = ArrayList<ElementSpec>()
            var last: ElementSpec? = null
            paragraphs.forEachIndexed { i, paragraph ->
                if (i > 0 || offset > 0) {
                    // End the paragraph before (the document's last, or the one just added).
                    specs += ElementSpec(SimpleAttributeSet.EMPTY, ElementSpec.ContentType, NEWLINE, 0, 1)
                    specs += ElementSpec(null, ElementSpec.EndTagType)
                    last = ElementSpec(paragraph.attributes, ElementSpec.StartTagType).also { specs += it }
                }
                for (run in paragraph.runs) {
                    val attributes = run.component?.let { c ->
                        SimpleAttributeSet(run.attributes).also { StyleConstants.setComponent(it, c) }
                    }
                    specs += ElementSpec(attributes ?: run.attributes, ElementSpec.ContentType, run.text.toCharArray(), 0, run.text.length)
                }
            }
            // The last new paragraph takes over the document's closing newline (as insertString does).
            last?.direction = ElementSpec.JoinFractureDirection
            insert(offset, specs.toTypedArray())
            // A paragraph joined with one that was there keeps that one's attributes: set its own.
            if (offset == 0) setParagraphAttributes(0, 1, paragraphs.first().attributes, true)
            if (last != null) setParagraphAttributes(length, 0, paragraphs.last().attributes, true)
        }

        private companion object {
            val NEWLINE = charArrayOf('\n')
        }
    }

    /** Styled text whose paragraphs paint their boxes, quote bars and rules. */
    private class Kit : StyledEditorKit() {
        private val styled = super.getViewFactory()

        override fun createDefaultDocument(): Document = MarkdownDocument()
        private val factory = ViewFactory { element ->
            if (element.name == AbstractDocument.ParagraphElementName) BlockParagraphView(element) else styled.create(element)
        }

        override fun getViewFactory(): ViewFactory = factory
    }

    /**
     * A paragraph that paints what [MarkdownAttribute] says before its text: the selection,
     * which the text's views paint, stays on top.
     */
    private class BlockParagraphView(element: Element) : ParagraphView(element) {
        override fun paint(g: Graphics, a: Shape) {
            val r = a.bounds
            val attributes = element.attributes
            val border = attributes.getAttribute(MarkdownAttribute.BOX_BORDER) as? Color
            (attributes.getAttribute(MarkdownAttribute.BOX_FILL) as? Color)?.let { fill ->
                val left = r.x + ((attributes.getAttribute(MarkdownAttribute.BOX_LEFT) as? Float) ?: 0f).toInt()
                val top = attributes.getAttribute(MarkdownAttribute.BOX_TOP) as? Int
                val bottom = attributes.getAttribute(MarkdownAttribute.BOX_BOTTOM) as? Int
                val y0 = r.y + (top ?: 0)
                val y1 = r.y + r.height - (bottom ?: 0)
                val right = r.x + r.width - 1
                g.color = fill
                g.fillRect(left, y0, right - left + 1, y1 - y0)
                if (border != null) {
                    g.color = border
                    g.drawLine(left, y0, left, y1 - 1)
                    g.drawLine(right, y0, right, y1 - 1)
                    if (top != null) g.drawLine(left, y0, right, y0)
                    if (bottom != null) g.drawLine(left, y1 - 1, right, y1 - 1)
                }
            }
            (attributes.getAttribute(MarkdownAttribute.QUOTE_BAR) as? Float)?.let { bar ->
                g.color = border ?: Color.GRAY
                g.fillRect(r.x + bar.toInt(), r.y, 2, r.height)
            }
            if (attributes.getAttribute(MarkdownAttribute.RULE) == true) {
                g.color = border ?: Color.GRAY
                val left = r.x + leftInset.toInt()
                g.drawLine(left, r.y + r.height / 2, r.x + r.width - 1, r.y + r.height / 2)
            }
            super.paint(g, a)
        }

        /**
         * Any width, from none up: the paragraph wraps at the width it is given. Swing's own
         * requirements measure every glyph and every break (the widest word, the line unwrapped),
         * again for each paragraph whenever the document changes, and only a layout that sizes
         * a text by its preferred width needs them; the transcript's column gives the width.
         */
        override fun calculateMinorAxisRequirements(axis: Int, r: SizeRequirements?): SizeRequirements = (r ?: SizeRequirements()).apply {
            minimum = 0
            preferred = 0
            maximum = Int.MAX_VALUE
            alignment = 0.5f
        }
    }
}
