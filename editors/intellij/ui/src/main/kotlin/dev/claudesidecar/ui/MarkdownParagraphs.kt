package dev.claudesidecar.ui

import org.commonmark.ext.gfm.tables.TableBlock
import org.commonmark.node.BlockQuote
import org.commonmark.node.BulletList
import org.commonmark.node.Code
import org.commonmark.node.Emphasis
import org.commonmark.node.FencedCodeBlock
import org.commonmark.node.HardLineBreak
import org.commonmark.node.Heading
import org.commonmark.node.HtmlBlock
import org.commonmark.node.HtmlInline
import org.commonmark.node.Image
import org.commonmark.node.IndentedCodeBlock
import org.commonmark.node.Link
import org.commonmark.node.LinkReferenceDefinition
import org.commonmark.node.ListBlock
import org.commonmark.node.ListItem
import org.commonmark.node.Node
import org.commonmark.node.OrderedList
import org.commonmark.node.Paragraph
import org.commonmark.node.SoftLineBreak
import org.commonmark.node.StrongEmphasis
import org.commonmark.node.Text
import org.commonmark.node.ThematicBreak
import javax.swing.JComponent
import javax.swing.text.AttributeSet
import javax.swing.text.SimpleAttributeSet
import javax.swing.text.StyleConstants

/**
 * A run of text in one character style, or, with [component], a component shown in the text
 * (made when the run is put in a document, on the EDT: the paragraphs may be made on another
 * thread).
 */
class StyledRun(
    val text: String,
    val attributes: AttributeSet,
    val component: (() -> JComponent)? = null,
)

/** One paragraph of rendered markdown: how it looks as a whole, and its runs. */
class StyledParagraph(
    val attributes: SimpleAttributeSet,
    val runs: List<StyledRun>,
)

/**
 * Markdown as the paragraphs of a styled document (see [MarkdownView]): headings, paragraphs,
 * lists with their markers, quotes, code blocks in a box, inline code, emphasis and links;
 * a table as a component of its own. Raw HTML shows as written. Any thread: it reads only
 * [styles], which are made on the EDT and never change.
 */
class MarkdownParagraphs(private val styles: MarkdownStyles) {
    private val out = mutableListOf<StyledParagraph>()
    private var runs = mutableListOf<StyledRun>()
    private var character: AttributeSet = SimpleAttributeSet.EMPTY

    /** The marker of the list item whose first paragraph comes next ("• ", "3. "). */
    private var marker: String? = null

    /** Where a block is: its left indent, a quote's bar, and whether a tight list holds it. */
    private data class Place(
        val indent: Float = 0f,
        val quoteBar: Float? = null,
        val tight: Boolean = false,
        val depth: Int = 0,
    )

    /** The paragraphs of [markdown]. */
    fun render(markdown: String): List<StyledParagraph> {
        blocks(Markdown.parse(markdown), Place())
        return out.toList().also { out.clear() }
    }

    private fun blocks(parent: Node, place: Place) {
        var node = parent.firstChild
        while (node != null) {
            block(node, place)
            node = node.next
        }
    }

    private fun block(node: Node, place: Place) {
        when (node) {
            is Paragraph -> textParagraph(styles.paragraph(place.indent, below(place), place.quoteBar), node)
            is Heading -> textParagraph(styles.heading(node.level, place.indent, place.quoteBar), node)
            is BlockQuote -> {
                val bar = place.indent + MarkdownStyles.QUOTE_BAR_X
                blocks(node, place.copy(indent = place.indent + MarkdownStyles.QUOTE_INDENT, quoteBar = bar))
            }
            is ListBlock -> list(node, place)
            is FencedCodeBlock -> code(node.info.orEmpty().substringBefore(' '), node.literal, place)
            is IndentedCodeBlock -> code("", node.literal, place)
            is ThematicBreak -> paragraph(styles.rule(place.indent), listOf(StyledRun(" ", SimpleAttributeSet.EMPTY)))
            is HtmlBlock -> paragraph(
                styles.paragraph(place.indent, below(place), place.quoteBar),
                listOf(StyledRun(node.literal.trimEnd(), SimpleAttributeSet.EMPTY)),
            )
            is TableBlock -> paragraph(
                styles.paragraph(place.indent, MarkdownStyles.PARAGRAPH_BELOW, place.quoteBar),
                Markdown.tableDocument(node, styles.tableCss).let { table ->
                    listOf(StyledRun(" ", SimpleAttributeSet.EMPTY) { Markdown.tableView(table) })
                },
            )
            is LinkReferenceDefinition -> Unit
            else -> blocks(node, place)
        }
    }

    private fun below(place: Place) = if (place.tight) MarkdownStyles.TIGHT_ITEM_BELOW else MarkdownStyles.PARAGRAPH_BELOW

    private fun list(list: ListBlock, place: Place) {
        var number = (list as? OrderedList)?.markerStartNumber ?: 1
        val delimiter = (list as? OrderedList)?.markerDelimiter ?: "."
        val inner = place.copy(indent = place.indent + MarkdownStyles.LIST_INDENT, tight = list.isTight, depth = place.depth + 1)
        var item = list.firstChild
        while (item != null) {
            if (item is ListItem) {
                marker = if (list is BulletList) BULLETS[place.depth % BULLETS.size] + " " else "${number++}$delimiter "
                blocks(item, inner)
                // An empty item still shows its marker.
                marker?.let { paragraph(styles.paragraph(inner.indent, below(inner), inner.quoteBar), emptyList()) }
            }
            item = item.next
        }
        // A list ends with a paragraph's space, however tight its items.
        out.lastOrNull()?.attributes?.let {
            if (StyleConstants.getSpaceBelow(it) < MarkdownStyles.PARAGRAPH_BELOW) {
                StyleConstants.setSpaceBelow(it, MarkdownStyles.PARAGRAPH_BELOW.toFloat())
            }
        }
    }

    private fun code(language: String, literal: String, place: Place) {
        val lines = literal.trimEnd('\n').split('\n').map { it.replace("\t", "    ") }
        // The marker of a list item that starts with code goes on a line of its own.
        marker?.let { paragraph(styles.paragraph(place.indent, MarkdownStyles.TIGHT_ITEM_BELOW, place.quoteBar), emptyList()) }
        if (language.isNotBlank()) {
            val label = styles.codeLine(place.indent, first = true, last = false, label = true)
            paragraph(label, listOf(StyledRun(language, SimpleAttributeSet.EMPTY)))
        }
        lines.forEachIndexed { i, line ->
            val attributes = styles.codeLine(place.indent, first = i == 0 && language.isBlank(), last = i == lines.lastIndex)
            // An empty line would collapse to nothing in some views: a space keeps its height.
            paragraph(attributes, listOf(StyledRun(line.ifEmpty { " " }, SimpleAttributeSet.EMPTY)))
        }
    }

    /** A paragraph of [node]'s inline content; a hard line break starts a new paragraph with no space between. */
    private fun textParagraph(attributes: SimpleAttributeSet, node: Node) {
        runs = mutableListOf()
        character = SimpleAttributeSet.EMPTY
        inlines(node)
        val lines = splitAtBreaks(runs)
        lines.forEachIndexed { i, line ->
            val each = SimpleAttributeSet(attributes)
            if (i > 0) StyleConstants.setSpaceAbove(each, 0f)
            if (i < lines.lastIndex) StyleConstants.setSpaceBelow(each, 0f)
            paragraph(each, line)
        }
    }

    /** Adds a paragraph, led by the pending list marker (hanging: wrapped lines align with the text). */
    private fun paragraph(attributes: SimpleAttributeSet, content: List<StyledRun>) {
        val lead = marker
        marker = null
        val all = if (lead == null) {
            content
        } else {
            StyleConstants.setFirstLineIndent(attributes, -styles.width(lead))
            listOf(StyledRun(lead, SimpleAttributeSet.EMPTY)) + content
        }
        out += StyledParagraph(attributes, all.ifEmpty { listOf(StyledRun(" ", SimpleAttributeSet.EMPTY)) })
    }

    private fun inlines(parent: Node) {
        var node = parent.firstChild
        while (node != null) {
            inline(node)
            node = node.next
        }
    }

    private fun inline(node: Node) {
        when (node) {
            is Text -> text(node.literal)
            is Code -> styled(styles.code) { text(node.literal) }
            is Emphasis -> styled(styles.italic) { inlines(node) }
            is StrongEmphasis -> styled(styles.bold) { inlines(node) }
            is Link -> styled(styles.link(node.destination)) { inlines(node) }
            is Image -> styled(styles.link(node.destination)) { if (node.firstChild == null) text(node.destination) else inlines(node) }
            is SoftLineBreak -> text(" ")
            is HardLineBreak -> runs += LINE_BREAK
            is HtmlInline -> text(node.literal)
            else -> inlines(node)
        }
    }

    private fun text(text: String) {
        if (text.isNotEmpty()) runs += StyledRun(text, character)
    }

    private inline fun styled(extra: AttributeSet, body: () -> Unit) {
        val outer = character
        character = SimpleAttributeSet(outer).apply { addAttributes(extra) }
        body()
        character = outer
    }

    private fun splitAtBreaks(runs: List<StyledRun>): List<List<StyledRun>> {
        val lines = mutableListOf(mutableListOf<StyledRun>())
        for (run in runs) if (run === LINE_BREAK) lines += mutableListOf<StyledRun>() else lines.last() += run
        return lines
    }

    private companion object {
        val BULLETS = listOf("•", "◦", "▪")

        /** Stands for a hard line break among a paragraph's runs (told apart by identity). */
        val LINE_BREAK = StyledRun("\n", SimpleAttributeSet.EMPTY)
    }
}
