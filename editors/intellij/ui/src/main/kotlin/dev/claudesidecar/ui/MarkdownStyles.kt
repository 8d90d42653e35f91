package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Font
import java.awt.FontMetrics
import javax.swing.JLabel
import javax.swing.text.AttributeSet
import javax.swing.text.SimpleAttributeSet
import javax.swing.text.StyleConstants

/**
 * Attributes of rendered markdown that Swing's views do not know: a paragraph's box (a code
 * block's background and border), a quote's bar, a thematic break, and a link's destination.
 * [MarkdownView]'s paragraph view paints the first three; its mouse listener follows links.
 */
enum class MarkdownAttribute {
    /** Color: the background of the box the paragraph is part of (a code block). */
    BOX_FILL,

    /** Color: the box's border. */
    BOX_BORDER,

    /** Float: where the box starts, from the paragraph's left edge (a code block inside a list is indented). */
    BOX_LEFT,

    /** Int: the space above the box; set on the box's first paragraph only, which draws the top border. */
    BOX_TOP,

    /** Int: the space below the box; set on the box's last paragraph only, which draws the bottom border. */
    BOX_BOTTOM,

    /** Float: the x of a quote's bar, from the paragraph's left edge. */
    QUOTE_BAR,

    /** Boolean: the paragraph is a thematic break (a horizontal line). */
    RULE,

    /** String (a character attribute): the link's destination. */
    LINK,
}

/**
 * How rendered markdown looks in the look and feel in use when it was made (fonts, colours,
 * spacing): the attribute sets [MarkdownParagraphs] gives its paragraphs and runs. A theme
 * switch makes new views, and with them new styles ([current] gives the look's own). Read-only
 * once made: views on the EDT and renders on the markdown thread share one.
 */
class MarkdownStyles private constructor(private val look: Look) {
    /** Styles of the look and feel in use now (tests make their own; views share [current]). */
    constructor() : this(Look.now())

    val family: String = look.font.family
    val size: Int = look.font.size
    val foreground: Color = look.foreground
    private val muted = Theme.muted
    private val accent = look.accent
    private val codeBackground = Theme.codeBackground
    private val border = look.border
    private val mono = Theme.monoFamily
    private val metrics: FontMetrics = JLabel().getFontMetrics(look.font)

    /** A table's style sheet (CSS): tables are HTML panes ([Markdown.tableDocument]). */
    val tableCss: String = Markdown.tableCss()

    /** The width of [text] in the body font: a list marker's hanging indent. */
    fun width(text: String): Float = metrics.stringWidth(text).toFloat()

    /** A body paragraph [indent] pixels from the left, [below] pixels above the next. */
    fun paragraph(indent: Float, below: Int, quoteBar: Float?) = SimpleAttributeSet().apply {
        StyleConstants.setLeftIndent(this, indent)
        StyleConstants.setSpaceBelow(this, below.toFloat())
        if (quoteBar != null) {
            StyleConstants.setForeground(this, muted)
            addAttribute(MarkdownAttribute.QUOTE_BAR, quoteBar)
            addAttribute(MarkdownAttribute.BOX_BORDER, border)
        }
    }

    /** A heading of [level] (1 is the largest). */
    fun heading(level: Int, indent: Float, quoteBar: Float?) = paragraph(indent, HEADING_BELOW, quoteBar).apply {
        StyleConstants.setSpaceAbove(this, HEADING_ABOVE.toFloat())
        StyleConstants.setBold(this, true)
        StyleConstants.setFontSize(this, size + HEADING_GROWTH.getOrElse(level - 1) { 0 })
    }

    /**
     * One line of a code block: monospaced, in a box [indent] pixels from the left. The
     * first line (and a [label] above it) takes the space above the box, the last the space below.
     */
    fun codeLine(indent: Float, first: Boolean, last: Boolean, label: Boolean = false) = SimpleAttributeSet().apply {
        StyleConstants.setLeftIndent(this, indent + CODE_PADDING_X)
        StyleConstants.setRightIndent(this, CODE_PADDING_X.toFloat())
        StyleConstants.setFontFamily(this, if (label) family else mono)
        StyleConstants.setFontSize(this, if (label) size - 2 else size - 1)
        if (label) StyleConstants.setForeground(this, muted)
        addAttribute(MarkdownAttribute.BOX_FILL, codeBackground)
        addAttribute(MarkdownAttribute.BOX_BORDER, border)
        addAttribute(MarkdownAttribute.BOX_LEFT, indent)
        if (first) {
            StyleConstants.setSpaceAbove(this, (CODE_MARGIN_TOP + CODE_PADDING_Y).toFloat())
            addAttribute(MarkdownAttribute.BOX_TOP, CODE_MARGIN_TOP)
        }
        if (last) {
            StyleConstants.setSpaceBelow(this, (CODE_MARGIN_BOTTOM + CODE_PADDING_Y).toFloat())
            addAttribute(MarkdownAttribute.BOX_BOTTOM, CODE_MARGIN_BOTTOM)
        } else if (label) {
            StyleConstants.setSpaceBelow(this, LABEL_BELOW.toFloat())
        }
    }

    /** A thematic break: a line across the column. */
    fun rule(indent: Float) = paragraph(indent, PARAGRAPH_BELOW, null).apply {
        StyleConstants.setFontSize(this, size / 2)
        addAttribute(MarkdownAttribute.RULE, true)
        addAttribute(MarkdownAttribute.BOX_BORDER, border)
    }

    val bold: AttributeSet = SimpleAttributeSet().apply { StyleConstants.setBold(this, true) }
    val italic: AttributeSet = SimpleAttributeSet().apply { StyleConstants.setItalic(this, true) }

    /** Inline code: monospaced on the code background. */
    val code: AttributeSet = SimpleAttributeSet().apply {
        StyleConstants.setFontFamily(this, mono)
        StyleConstants.setFontSize(this, size - 1)
        StyleConstants.setBackground(this, codeBackground)
    }

    /** A link to [destination]: the accent colour, followed on click. */
    fun link(destination: String): AttributeSet = SimpleAttributeSet().apply {
        StyleConstants.setForeground(this, accent)
        addAttribute(MarkdownAttribute.LINK, destination)
    }

    /**
     * What the styles are made from: the look and feel's font and colours (the others derive
     * from these). Equal looks give equal styles.
     */
    private data class Look(
        val font: Font,
        val foreground: Color,
        val background: Color,
        val accent: Color,
        val border: Color,
    ) {
        companion object {
            fun now() = Look(Theme.font, Theme.foreground, Theme.background, Theme.accent, Theme.border)
        }
    }

    companion object {
        @Volatile
        private var shared: MarkdownStyles? = null

        /**
         * The styles of the look and feel in use, made again only when it changed. Each entry
         * drawn used to make its own (twice for an answer): a label for its font metrics, the
         * table CSS, the readable-colour search; 7% of the EDT's samples while a long chat
         * opened and scrolled.
         */
        fun current(): MarkdownStyles {
            val look = Look.now()
            shared?.takeIf { it.look == look }?.let { return it }
            return MarkdownStyles(look).also { shared = it }
        }

        const val PARAGRAPH_BELOW = 6
        const val TIGHT_ITEM_BELOW = 2
        const val HEADING_ABOVE = 8
        const val HEADING_BELOW = 4
        const val LIST_INDENT = 18f
        const val QUOTE_INDENT = 16f
        const val QUOTE_BAR_X = 6f
        private const val CODE_PADDING_X = 8
        private const val CODE_PADDING_Y = 6
        private const val CODE_MARGIN_TOP = 2
        private const val CODE_MARGIN_BOTTOM = 8
        private const val LABEL_BELOW = 3
        private val HEADING_GROWTH = listOf(5, 3, 1, 0)
    }
}
