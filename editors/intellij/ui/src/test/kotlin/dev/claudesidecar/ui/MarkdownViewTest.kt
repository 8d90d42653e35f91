package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatDarkLaf
import com.formdev.flatlaf.FlatLightLaf
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNotSame
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.awt.Cursor
import java.awt.event.MouseEvent
import javax.swing.JEditorPane
import javax.swing.JFrame
import javax.swing.JScrollPane
import javax.swing.text.AttributeSet
import javax.swing.text.Element
import javax.swing.text.StyleConstants
import javax.swing.text.html.HTMLDocument
import kotlin.concurrent.thread

/** Markdown rendered into one styled document: each block looks as it should, and appending equals rendering whole. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MarkdownViewTest {
    private val sample = """
        |# Plan for the parser
        |
        |The **lexer** reads *each* line once; see `Lexer.next()` and [the notes](https://example.com/notes).
        |A second line of the same paragraph,  
        |after a hard break.
        |
        |- read the input
        |- split it into tokens
        |  - keep the offsets
        |- parse
        |
        |1. Run the tests.
        |2. Read the output.
        |
        |> Quoted advice: measure before you change anything.
        |
        |```kotlin
        |fun main() {
        |    println("hi")
        |}
        |```
        |
        || Step | Time |
        || --- | --- |
        || lex | 2 ms |
        || parse | 5 ms |
        |
        |---
        |
        |That is all.
        |
    """.trimMargin()

    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    @AfterAll
    fun light() {
        onEdt { FlatLightLaf.setup() }
    }

    private fun view(markdown: String) = onEdt { MarkdownView().apply { this.markdown = markdown } }

    /** The document's paragraphs: their text (without the line end) and attributes. EDT only. */
    private fun paragraphs(view: MarkdownView): List<Pair<String, Element>> {
        val root = view.styledDocument.defaultRootElement
        return (0 until root.elementCount).map { i ->
            val p = root.getElement(i)
            view.document.getText(p.startOffset, p.endOffset - p.startOffset).removeSuffix("\n") to p
        }
    }

    private fun paragraph(view: MarkdownView, text: String): Element = paragraphs(view).firstOrNull { it.first.contains(text) }?.second
        ?: error("no paragraph with \"$text\" in ${paragraphs(view).map { it.first }}")

    /** [attributes] of their own (not the document's style they resolve to), by name. */
    private fun own(attributes: AttributeSet): Map<String, String> =
        attributes.attributeNames.toList().filter { it != StyleConstants.ResolveAttribute }.associate {
            it.toString() to
                attributes.getAttribute(it).toString()
        }

    /** The character attributes at the start of [text]. EDT only. */
    private fun at(view: MarkdownView, text: String): AttributeSet =
        view.styledDocument.getCharacterElement(view.plainText.indexOf(text).also { check(it >= 0) { "no \"$text\"" } }).attributes

    @Test
    fun `a heading is bold and larger than the text`() = onEdt {
        val view = view(sample)
        val heading = at(view, "Plan for the parser")
        assertTrue(StyleConstants.isBold(heading))
        assertTrue(StyleConstants.getFontSize(heading) > StyleConstants.getFontSize(at(view, "reads")), "larger than body text")
    }

    @Test
    fun `emphasis, inline code and links keep their styles`() = onEdt {
        val view = view(sample)
        assertTrue(StyleConstants.isBold(at(view, "lexer")))
        assertTrue(StyleConstants.isItalic(at(view, "each")))
        val code = at(view, "Lexer.next()")
        assertEquals(Theme.monoFamily, StyleConstants.getFontFamily(code))
        assertEquals(Theme.codeBackground, StyleConstants.getBackground(code))
        val link = at(view, "the notes")
        assertEquals("https://example.com/notes", link.getAttribute(MarkdownAttribute.LINK))
        assertEquals(Theme.accent, StyleConstants.getForeground(link))
        assertEquals(null, at(view, "reads").getAttribute(MarkdownAttribute.LINK))
    }

    @Test
    fun `a hard line break starts a new line with no paragraph space between`() = onEdt {
        val view = view(sample)
        val first = paragraph(view, "A second line").attributes
        val second = paragraph(view, "after a hard break").attributes
        assertEquals(0f, StyleConstants.getSpaceBelow(first))
        assertEquals(0f, StyleConstants.getSpaceAbove(second))
    }

    @Test
    fun `list items lead with their markers, nested deeper, wrapped lines hanging`() = onEdt {
        val view = view(sample)
        val texts = paragraphs(view).map { it.first }
        assertTrue("• read the input" in texts, texts.toString())
        assertTrue("◦ keep the offsets" in texts, texts.toString())
        assertTrue("1. Run the tests." in texts && "2. Read the output." in texts, texts.toString())
        val outer = paragraph(view, "read the input").attributes
        val inner = paragraph(view, "keep the offsets").attributes
        assertTrue(StyleConstants.getLeftIndent(inner) > StyleConstants.getLeftIndent(outer), "nested items sit deeper")
        assertTrue(StyleConstants.getFirstLineIndent(outer) < 0, "the marker hangs left of the item's text")
    }

    @Test
    fun `a code block's lines are one box, indentation kept, its language above`() = onEdt {
        val view = view(sample)
        val label = paragraph(view, "kotlin").attributes
        val lines = listOf("fun main() {", "    println(\"hi\")", "}").map { line ->
            paragraphs(view).single { it.first == line }.second.attributes
        }
        for (p in listOf(label) + lines) assertEquals(Theme.codeBackground, p.getAttribute(MarkdownAttribute.BOX_FILL))
        assertNotNull(label.getAttribute(MarkdownAttribute.BOX_TOP), "the box starts at the language")
        assertNotNull(lines.last().getAttribute(MarkdownAttribute.BOX_BOTTOM), "and ends at the last line")
        assertEquals(null, lines.first().getAttribute(MarkdownAttribute.BOX_BOTTOM))
        assertEquals(Theme.monoFamily, StyleConstants.getFontFamily(lines[1]))
    }

    @Test
    fun `a quote has a bar and muted text`() = onEdt {
        val view = view(sample)
        val quote = paragraph(view, "Quoted advice").attributes
        assertNotNull(quote.getAttribute(MarkdownAttribute.QUOTE_BAR))
        assertEquals(Theme.muted, StyleConstants.getForeground(quote))
    }

    @Test
    fun `a table shows as a table`() = onEdt {
        val view = view(sample)
        val table = find<JEditorPane>(view).single { it !== view }
        assertTrue(table.text.contains("<table"), table.text)
        assertTrue(table.document.getText(0, table.document.length).contains("parse"))
    }

    @Test
    fun `a table is parsed once with its paragraphs off the EDT and shows in the theme's font`() {
        val styles = onEdt { MarkdownStyles() }
        var paragraphs: List<StyledParagraph> = emptyList()
        // As the answer view makes them: on a thread of its own, the EDT free meanwhile.
        thread(name = "markdown") { paragraphs = MarkdownParagraphs(styles).render(sample) }.join()
        val run = paragraphs.flatMap { it.runs }.single { it.component != null }
        val table = onEdt { run.component!!() as JEditorPane }
        val document = table.document as HTMLDocument
        assertTrue(document.getText(0, document.length).contains("parse"), "the table's cells were parsed")
        // Parsed with the paragraphs, not when the EDT makes its pane: another pane shows the same document.
        assertSame(document, onEdt { (run.component!!() as JEditorPane).document })
        val body = onEdt { document.styleSheet.getFont(document.styleSheet.getRule("body")) }
        assertEquals(Theme.font.family, body.family)
        assertEquals(Theme.font.size, body.size)
    }

    @Test
    fun `blocks appended one by one render as the whole text at once`() = onEdt {
        val whole = view(sample)
        val pieces = MarkdownView()
        val cuts = MarkdownBlocks().apply { advance(sample) }.cuts
        (listOf(0) + cuts + sample.length).zipWithNext().forEach { (from, to) -> pieces.append(sample.substring(from, to)) }
        assertEquals(whole.plainText, pieces.plainText)
        val expected = paragraphs(whole).map { (text, p) -> text to own(p.attributes) }
        val actual = paragraphs(pieces).map { (text, p) -> text to own(p.attributes) }
        assertEquals(expected, actual)
    }

    @Test
    fun `truncating drops what follows and keeps the paragraphs before as they were`() = onEdt {
        val view = view("First paragraph.\n\n")
        val kept = view.length
        val before = paragraphs(view).map { (text, p) -> text to own(p.attributes) }
        view.append("## A heading being written")
        view.truncate(kept)
        view.append("```\ncode\n```\n")
        view.truncate(kept)
        assertEquals(before, paragraphs(view).map { (text, p) -> text to own(p.attributes) })
    }

    @Test
    fun `rows break where Swing's own layout breaks them, at any width`() = onEdt {
        // Runs of every kind wrapping together, a word wider than the view, tabs, a break
        // that must fall in a run before the one that overflows.
        val text = sample + """
            |A paragraph with `inline code`, **bold words**, *emphasis* and [a link](https://example.com/a/long/path)
            |that goes on long enough to wrap several times at every width tried, with short words and
            |averyveryverylongwordwithoutanyplacetobreakitthatisneverthelesswrittenhereonce and more after it.
            |
            |**Bold**`code`*emphasis*[link](https://example.com)**without**`any`*space*between**them**`at`*all*.
            |
            |```
            |	tabbed	line	of	code	that	is	long	enough	to	wrap	somewhere	in	the	middle	of	it
            |```
            |
        """.trimMargin()
        for (width in listOf(90, 170, 333, 610)) {
            val (fitting, swing) = listOf(true, false).map { fitting ->
                MarkdownView(fittingRows = fitting).apply {
                    markdown = text
                    setSize(width, 10_000)
                    setSize(width, preferredSize.height)
                }
            }
            val (expected, actual) = rows(swing) to rows(fitting)
            val first = expected.indices.firstOrNull { expected[it] != actual[it] }
            assertTrue(first == null) {
                val shown = swing.plainText.substring(first!!, minOf(swing.length, first + 30))
                "at width $width, \"$shown\" (offset $first) is drawn at ${actual[first]}, Swing draws it at ${expected[first]}"
            }
            assertEquals(swing.preferredSize, fitting.preferredSize, "size at width $width")
        }
    }

    /** Where each character is drawn (its row's top and its left), in document order. EDT only. */
    private fun rows(view: MarkdownView): List<Pair<Int, Int>> = (0 until view.length).map { offset ->
        view.modelToView2D(offset).bounds.let { it.y to it.x }
    }

    @Test
    fun `the pointer over a link is a hand`() {
        val frame = onEdt {
            JFrame("markdown").apply {
                contentPane.add(MarkdownView().apply { markdown = "Open [the notes](https://example.com/notes) now." })
                setSize(500, 120)
                isVisible = true
            }
        }
        try {
            waitFor("the view laid out") { find<MarkdownView>(frame.contentPane).single().height > 0 }
            onEdt {
                val view = find<MarkdownView>(frame.contentPane).single()
                fun move(offset: Int): Cursor {
                    val at = view.modelToView2D(offset).bounds
                    view.dispatchEvent(MouseEvent(view, MouseEvent.MOUSE_MOVED, 0, 0, at.x + 2, at.y + at.height / 2, 0, false))
                    return view.cursor
                }
                assertEquals(Cursor.HAND_CURSOR, move(view.plainText.indexOf("notes")).type)
                assertEquals(Cursor.TEXT_CURSOR, move(view.plainText.indexOf("now")).type)
            }
        } finally {
            onEdt { frame.dispose() }
        }
    }

    @Test
    fun `views share the styles of the look in use until the theme changes`() = onEdt {
        try {
            FlatLightLaf.setup() // another test may have left the dark one
            val light = MarkdownStyles.current()
            assertSame(light, MarkdownStyles.current(), "made once for the look, not per view")
            FlatDarkLaf.setup()
            val dark = MarkdownStyles.current()
            assertNotSame(light, dark)
            assertEquals(Theme.foreground, dark.foreground)
            assertNotEquals(light.foreground, dark.foreground)
            // A view made now draws in the dark look's colours.
            val text = MarkdownView().apply { markdown = "dark" }
            val run = text.styledDocument.getCharacterElement(0).attributes
            assertEquals(Theme.foreground, text.styledDocument.getForeground(run))
            FlatLightLaf.setup()
            assertEquals(light.foreground, MarkdownStyles.current().foreground)
        } finally {
            FlatLightLaf.setup()
        }
    }

    @Test
    fun `a rich answer reads well in the light and the dark theme`() {
        for ((name, setup) in listOf("light" to { FlatLightLaf.setup() }, "dark" to { FlatDarkLaf.setup() })) {
            val frame = onEdt {
                setup()
                val column = ScrollableColumn(0).apply {
                    border = padding(12, 14, 12, 14)
                    add(MarkdownView().apply { markdown = sample })
                }
                JFrame("markdown").apply {
                    contentPane.add(JScrollPane(column).apply { border = null })
                    setSize(560, 900)
                    isVisible = true
                }
            }
            try {
                waitFor("the view laid out") { find<MarkdownView>(frame.contentPane).single().height > 200 }
                val root = onEdt { frame.rootPane }
                screenshot(root, "markdown-$name")
                assertEquals(emptyList<String>(), onEdt { lowContrast(root) }, "texts below WCAG AA in the $name theme")
            } finally {
                onEdt { frame.dispose() }
            }
        }
    }
}
