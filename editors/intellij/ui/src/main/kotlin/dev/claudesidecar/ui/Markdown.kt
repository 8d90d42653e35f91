package dev.claudesidecar.ui

import org.commonmark.ext.gfm.tables.TableBlock
import org.commonmark.ext.gfm.tables.TablesExtension
import org.commonmark.node.Node
import org.commonmark.parser.Parser
import org.commonmark.renderer.html.HtmlRenderer
import java.io.StringReader
import javax.swing.JComponent
import javax.swing.JEditorPane
import javax.swing.text.DefaultCaret
import javax.swing.text.Document
import javax.swing.text.html.HTMLEditorKit
import javax.swing.text.html.StyleSheet

/**
 * Markdown parsed once, the same way for every view ([MarkdownParagraphs] renders it), and
 * the one block a styled document cannot lay out, a table, as HTML in a pane of its own, with
 * a style sheet that looks like the IDE ([tableCss]).
 */
object Markdown {
    private val extensions = listOf(TablesExtension.create())
    private val parser = Parser.builder().extensions(extensions).build()
    private val renderer = HtmlRenderer.builder()
        .extensions(extensions)
        .escapeHtml(true)
        .sanitizeUrls(true)
        .build()

    /** The syntax tree of [markdown] (GitHub's tables included). */
    fun parse(markdown: String): Node = parser.parse(markdown)

    /**
     * [table] (and its inline markdown) as an HTML document in the style sheet [css] (over
     * Swing's defaults): parsed on any thread, shown by [tableView] on the EDT. Made with the
     * paragraphs on the markdown thread, the style sheet and the parse (~20 ms of a fresh JVM's
     * EDT at its first table, 2 ms warm) no longer hold up the EDT.
     */
    fun tableDocument(table: TableBlock, css: String): TableDocument {
        val kit = Kit(styleSheet(css))
        val document = kit.createDefaultDocument()
        kit.read(StringReader("<html><body>${renderer.render(table)}</body></html>"), document, 0)
        return TableDocument(kit, document)
    }

    /** A read-only pane showing [table], made by [tableDocument]. EDT. */
    fun tableView(table: TableDocument): JComponent = JEditorPane().apply {
        editorKit = table.kit
        document = table.document
        isEditable = false
        isOpaque = false
        border = null
        (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
    }

    /** A table's HTML document and the kit whose views show it. */
    class TableDocument internal constructor(
        internal val kit: HTMLEditorKit,
        internal val document: Document,
    )

    /**
     * The style sheet of a table in the look and feel in use ([MarkdownStyles.tableCss] reads
     * it on the EDT): the UI font, code in the editor font on a tinted background.
     */
    fun tableCss(): String {
        val fg = Theme.hex(Theme.foreground)
        val size = Theme.font.size
        val mono = Theme.monoFamily
        val code = Theme.hex(Theme.codeBackground)
        val border = Theme.hex(Theme.border)
        val link = Theme.hex(Theme.accent)
        return """
            body { font-family: '${Theme.font.family}'; font-size: ${size}pt; color: $fg; margin: 0; }
            code { font-family: '$mono'; font-size: ${size - 1}pt; background-color: $code; }
            table { border-collapse: collapse; margin-bottom: 6pt; } th, td { border: 1px solid $border; padding: 3pt 6pt; }
            a { color: $link; text-decoration: none; }
        """.trimIndent()
    }

    /** HTML of plain text (a prompt, a tool's output): escaped, line breaks kept. */
    fun escape(text: String): String = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")

    /**
     * A kit whose documents use [sheet] over Swing's defaults. (Setting the style sheet of a
     * plain HTMLEditorKit would change the one every HTML pane of the IDE shares.)
     */
    private class Kit(private val sheet: StyleSheet) : HTMLEditorKit() {
        override fun getStyleSheet(): StyleSheet = sheet
    }

    /** The style sheet of [css] last made: made once per theme, shared by every table. */
    private var cachedSheet: Pair<String, StyleSheet>? = null

    @Synchronized
    private fun styleSheet(css: String): StyleSheet {
        cachedSheet?.let { (cachedCss, sheet) -> if (cachedCss == css) return sheet }
        return StyleSheet().apply {
            addStyleSheet(HTMLEditorKit().styleSheet) // Swing's defaults (tables)
            addRule(css)
        }.also { cachedSheet = css to it }
    }
}
