package dev.claudesidecar.ui

import org.commonmark.ext.gfm.tables.TableBlock
import org.commonmark.ext.gfm.tables.TablesExtension
import org.commonmark.node.Node
import org.commonmark.parser.Parser
import org.commonmark.renderer.html.HtmlRenderer
import javax.swing.JComponent
import javax.swing.JEditorPane
import javax.swing.text.DefaultCaret
import javax.swing.text.html.HTMLEditorKit
import javax.swing.text.html.StyleSheet

/**
 * Markdown parsed once, the same way for every view ([MarkdownParagraphs] renders it), and
 * the one block a styled document cannot lay out, a table, as HTML in a pane of its own, with
 * a stylesheet that looks like the IDE: the UI font, code in the editor font on a tinted
 * background.
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

    /** A read-only pane showing [table] (and its inline markdown) as an HTML table. */
    fun tableView(table: TableBlock): JComponent = JEditorPane().apply {
        editorKit = editorKit()
        isEditable = false
        isOpaque = false
        border = null
        (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
        text = "<html><body>${renderer.render(table)}</body></html>"
    }

    /** HTML of plain text (a prompt, a tool's output): escaped, line breaks kept. */
    fun escape(text: String): String = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")

    /**
     * A kit whose documents use [styleSheet] over Swing's defaults. (Setting the style sheet
     * of a plain HTMLEditorKit would change the one every HTML pane of the IDE shares.)
     */
    private fun editorKit(): HTMLEditorKit = object : HTMLEditorKit() {
        private val sheet = styleSheet()
        override fun getStyleSheet(): StyleSheet = sheet
    }

    /** The style sheet of the look and feel now in use and its key: made once per theme, shared by every pane. */
    private var cachedSheet: Pair<String, StyleSheet>? = null

    private fun styleSheet(): StyleSheet {
        val key = listOf(Theme.foreground, Theme.font, Theme.monoFamily, Theme.codeBackground, Theme.border, Theme.accent)
            .joinToString()
        cachedSheet?.let { (cachedKey, sheet) -> if (cachedKey == key) return sheet }
        return newStyleSheet().also { cachedSheet = key to it }
    }

    private fun newStyleSheet(): StyleSheet {
        val fg = Theme.hex(Theme.foreground)
        val size = Theme.font.size
        val mono = Theme.monoFamily
        val code = Theme.hex(Theme.codeBackground)
        val border = Theme.hex(Theme.border)
        val link = Theme.hex(Theme.accent)
        return StyleSheet().apply {
            addStyleSheet(HTMLEditorKit().styleSheet) // Swing's defaults (tables)
            addRule("body { font-family: '${Theme.font.family}'; font-size: ${size}pt; color: $fg; margin: 0; }")
            addRule("code { font-family: '$mono'; font-size: ${size - 1}pt; background-color: $code; }")
            addRule("table { border-collapse: collapse; margin-bottom: 6pt; } th, td { border: 1px solid $border; padding: 3pt 6pt; }")
            addRule("a { color: $link; text-decoration: none; }")
        }
    }
}
