package dev.claudesidecar.ui

import org.commonmark.ext.gfm.tables.TablesExtension
import org.commonmark.node.FencedCodeBlock
import org.commonmark.node.IndentedCodeBlock
import org.commonmark.node.Node
import org.commonmark.parser.Parser
import org.commonmark.renderer.NodeRenderer
import org.commonmark.renderer.html.HtmlNodeRendererContext
import org.commonmark.renderer.html.HtmlRenderer
import javax.swing.text.html.HTMLEditorKit
import javax.swing.text.html.StyleSheet

/**
 * Markdown to the HTML that Swing's HTMLEditorKit renders (HTML 3.2 and a little CSS), with
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
        .nodeRendererFactory { CodeBlockRenderer(it) }
        .build()

    fun toHtml(markdown: String): String = "<html><body>${renderer.render(parser.parse(markdown))}</body></html>"

    /** HTML of plain text (a prompt, a tool's output): escaped, line breaks kept. */
    fun escape(text: String): String = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")

    /**
     * A kit whose documents use [styleSheet] over Swing's defaults. (Setting the style sheet
     * of a plain HTMLEditorKit would change the one every HTML pane of the IDE shares.)
     */
    fun editorKit(): HTMLEditorKit = object : HTMLEditorKit() {
        private val sheet = styleSheet()
        override fun getStyleSheet(): StyleSheet = sheet
    }

    /** The style sheet of the look and feel now in use and its key: made once per theme, shared by every pane. */
    private var cachedSheet: Pair<String, StyleSheet>? = null

    private fun styleSheet(): StyleSheet {
        val key = listOf(Theme.foreground, Theme.font, Theme.monoFamily, Theme.codeBackground, Theme.border, Theme.muted, Theme.accent)
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
        val muted = Theme.hex(Theme.muted)
        val link = Theme.hex(Theme.accent)
        return StyleSheet().apply {
            addStyleSheet(HTMLEditorKit().styleSheet) // Swing's defaults (lists, headings, tables)
            addRule("body { font-family: '${Theme.font.family}'; font-size: ${size}pt; color: $fg; margin: 0; }")
            addRule("p { margin-top: 0; margin-bottom: 6pt; }")
            addRule("h1, h2, h3, h4 { margin-top: 8pt; margin-bottom: 4pt; font-weight: bold; }")
            addRule(
                "h1 { font-size: ${size + 5}pt; } h2 { font-size: ${size + 3}pt; } h3 { font-size: ${size + 1}pt; } h4 { font-size: ${size}pt; }",
            )
            addRule("ul, ol { margin-top: 0; margin-bottom: 6pt; margin-left: 18pt; }")
            addRule("li { margin-bottom: 2pt; }")
            addRule("code { font-family: '$mono'; font-size: ${size - 1}pt; background-color: $code; }")
            addRule(
                "div.code { font-family: '$mono'; font-size: ${size - 1}pt; background-color: $code; padding: 6pt 8pt; margin-top: 2pt; margin-bottom: 8pt; border: 1px solid $border; }",
            )
            addRule("div.lang { color: $muted; font-size: ${size - 2}pt; margin-bottom: 3pt; }")
            addRule("blockquote { color: $muted; margin-left: 8pt; padding-left: 8pt; border-left: 2px solid $border; }")
            addRule("table { border-collapse: collapse; margin-bottom: 6pt; } th, td { border: 1px solid $border; padding: 3pt 6pt; }")
            addRule("a { color: $link; text-decoration: none; }")
        }
    }

    /**
     * Code blocks as lines of monospaced text that wrap at spaces (indentation kept): Swing's
     * `<pre>` never wraps, and a chat column is narrow.
     */
    private class CodeBlockRenderer(private val context: HtmlNodeRendererContext) : NodeRenderer {
        override fun getNodeTypes(): Set<Class<out Node>> = setOf(FencedCodeBlock::class.java, IndentedCodeBlock::class.java)

        override fun render(node: Node) {
            val (language, literal) = when (node) {
                is FencedCodeBlock -> node.info.orEmpty().substringBefore(' ') to node.literal
                is IndentedCodeBlock -> "" to node.literal
                else -> return
            }
            val html = StringBuilder("<div class=\"code\">")
            if (language.isNotBlank()) html.append("<div class=\"lang\">").append(escape(language)).append("</div>")
            literal.trimEnd('\n').split('\n').forEachIndexed { i, line ->
                if (i > 0) html.append("<br>")
                val indent = line.length - line.trimStart(' ', '\t').length
                html.append("&nbsp;".repeat(line.take(indent).sumOf { if (it == '\t') 4 else 1 }))
                html.append(escape(line.substring(indent)).replace("  ", " &nbsp;"))
            }
            html.append("</div>")
            context.writer.raw(html.toString())
        }
    }
}
