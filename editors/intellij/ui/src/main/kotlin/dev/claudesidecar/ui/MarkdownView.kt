package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Cursor
import java.awt.Desktop
import java.awt.Font
import java.awt.FontMetrics
import java.awt.Graphics
import java.awt.Shape
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import java.net.URI
import javax.swing.Action
import javax.swing.JTextPane
import javax.swing.SizeRequirements
import javax.swing.text.AbstractDocument
import javax.swing.text.DefaultCaret
import javax.swing.text.DefaultStyledDocument
import javax.swing.text.DefaultStyledDocument.ElementSpec
import javax.swing.text.Document
import javax.swing.text.Element
import javax.swing.text.FlowView
import javax.swing.text.GlyphView
import javax.swing.text.ParagraphView
import javax.swing.text.SimpleAttributeSet
import javax.swing.text.StyleConstants
import javax.swing.text.StyleContext
import javax.swing.text.StyledEditorKit
import javax.swing.text.TabExpander
import javax.swing.text.View
import javax.swing.text.ViewFactory

/**
 * Markdown in one read-only, selectable styled document (see [MarkdownParagraphs]). It grows
 * at its end: [append] adds rendered blocks and [truncate] drops what follows an offset, so
 * a streaming answer renders only what is new, and Swing lays out and paints only the
 * paragraphs that changed (an HTML pane would parse, style and lay out its whole text again).
 */
class MarkdownView internal constructor(
    /** Rows laid out by [FittingStrategy]; false (tests only) leaves them to Swing's own strategy. */
    fittingRows: Boolean,
) : JTextPane() {
    constructor() : this(fittingRows = true)

    private val styles = MarkdownStyles.current()

    /**
     * Font metrics by font. Swing's text views ask the component for a font's metrics each time
     * they measure a run (for every run of every paragraph laid out), and each answer goes
     * through the rendering-context and metrics caches: a third of the layout's time. A styled
     * document's fonts are few and shared ([StyleContext.getFont]); the map is dropped when the
     * look and feel or the screen changes what the metrics would be.
     */
    private val metrics = HashMap<Font, FontMetrics>()

    /** The markdown [markdown] set, until [append] or [truncate] change the text. */
    private var source: String? = null

    init {
        editorKit = Kit(fittingRows)
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

    override fun getFontMetrics(font: Font): FontMetrics = metrics.getOrPut(font) { super.getFontMetrics(font) }

    override fun updateUI() {
        // Called by JComponent's constructor, before this class's fields are set.
        @Suppress("SENSELESS_COMPARISON")
        if (metrics != null) metrics.clear()
        super.updateUI()
    }

    override fun addNotify() {
        metrics.clear()
        super.addNotify()
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
    fun append(markdown: String) = append(MarkdownParagraphs(styles).render(markdown))

    /** Adds [paragraphs] (markdown rendered by [MarkdownParagraphs], on any thread) after what is shown. */
    fun append(paragraphs: List<StyledParagraph>) {
        source = null
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
                    val attributes = run.component?.let { make ->
                        SimpleAttributeSet(run.attributes).also { StyleConstants.setComponent(it, make()) }
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
    private class Kit(private val fittingRows: Boolean) : StyledEditorKit() {
        private val styled = super.getViewFactory()

        override fun createDefaultDocument(): Document = MarkdownDocument()
        private val factory = ViewFactory { element ->
            if (element.name == AbstractDocument.ParagraphElementName) BlockParagraphView(element, fittingRows) else styled.create(element)
        }

        override fun getViewFactory(): ViewFactory = factory

        // Swing merges the kit's actions with its superclass's into a new table at each call
        // (twice per pane made); they are the same stateless actions for every pane.
        override fun getActions(): Array<Action> = ACTIONS.clone()

        private companion object {
            val ACTIONS: Array<Action> = StyledEditorKit().actions
        }
    }

    /**
     * Swing's flow of a paragraph into rows, the same rows for less work. For each run it
     * places, Swing's strategy asks at once where the run could break (a line-break iterator
     * over the whole paragraph), in case a later run does not fit: half the layout's time, and
     * wasted on every row that fits whole (a code line, a list item, a heading, a paragraph's
     * last line). Here the runs are measured first, and only when one does not fit are the
     * breaks asked, from that run back: the first run that can break between words is the one
     * Swing picks (the last with the best break weight); without one, the last that can break
     * at all; without that, the run overflows, as in Swing. A paragraph holding anything but
     * text (a table's component) is left to Swing.
     */
    private class FittingStrategy : FlowView.FlowStrategy() {
        override fun layoutRow(fv: FlowView, rowIndex: Int, pos: Int): Int {
            val end = fv.endOffset
            var x = fv.getFlowStart(rowIndex).toFloat()
            var left = fv.getFlowSpan(rowIndex).toFloat()
            val tabs = fv as? TabExpander
            val placed = ArrayList<Placed>()
            var at = pos
            while (at < end) {
                val view = createView(fv, at, left.toInt(), rowIndex) ?: break
                if (view !is GlyphView) return super.layoutRow(fv, rowIndex, pos)
                val span = view.getTabbedSpan(x, tabs)
                placed += Placed(view, x, left)
                if (span > left) {
                    breakRow(placed)
                    break
                }
                left -= span
                x += span
                at = view.endOffset
            }
            val row = fv.getView(rowIndex)
            row.replace(0, row.viewCount, Array(placed.size) { placed[it].view })
            return if (placed.isEmpty()) at else row.endOffset
        }

        /** Cuts [placed], whose last run overflows the row, where Swing's strategy would. */
        private fun breakRow(placed: MutableList<Placed>) {
            var cut = -1
            for (i in placed.indices.reversed()) {
                val (view, x, left) = placed[i]
                val weight = view.getBreakWeight(View.X_AXIS, x, left)
                if (weight >= View.ExcellentBreakWeight) {
                    cut = i
                    break
                }
                if (weight > View.BadBreakWeight && cut < 0) cut = i
            }
            if (cut < 0) return
            val (view, x, left) = placed[cut]
            while (placed.size > cut) placed.removeAt(placed.size - 1)
            placed += Placed(view.breakView(View.X_AXIS, view.startOffset, x, left), x, left)
        }

        /** A run placed on the row, where it starts and the room it had. */
        private data class Placed(
            val view: View,
            val x: Float,
            val left: Float,
        )
    }

    /**
     * A paragraph that paints what [MarkdownAttribute] says before its text: the selection,
     * which the text's views paint, stays on top.
     */
    private class BlockParagraphView(
        element: Element,
        fittingRows: Boolean,
    ) : ParagraphView(element) {
        init {
            if (fittingRows) strategy = FittingStrategy()
        }

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
