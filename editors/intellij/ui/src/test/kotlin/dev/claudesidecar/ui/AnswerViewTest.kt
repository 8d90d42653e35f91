package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.protocol.TextEntry
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import javax.swing.SwingUtilities
import javax.swing.event.DocumentEvent
import javax.swing.event.DocumentListener

/** A streaming answer is rendered block by block: the finished blocks once, the growing tail again. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AnswerViewTest {
    private val answer = buildString {
        for (i in 1..120) {
            append("## Part $i\n\nSome **text** of part $i, long enough to matter.\n\n")
            append("```python\ndef f$i():\n\n    return $i\n```\n\n")
            append("- one\n\n- two, loose\n\n1. first\n2. second\n\n")
        }
    }

    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    private fun cuts(text: String) = MarkdownBlocks().apply { advance(text) }.cuts

    private fun panes(view: AnswerView) = find<MarkdownView>(view.component)

    /** What a view shows, its panes' texts joined, whitespace normalised. */
    private fun shown(view: AnswerView) = onEdt { panes(view).joinToString("\n") { it.plainText }.normalised() }

    private fun String.normalised() = split(Regex("\\s+")).filter { it.isNotEmpty() }.joinToString(" ")

    /** [text] rendered whole, at once. */
    private fun whole(text: String) = onEdt { MarkdownView().apply { markdown = text }.plainText.normalised() }

    @Test
    fun `a fenced code block is never cut, not even at its blank lines`() {
        val text = "Intro.\n\n```\na\n\nb\n```\n\nAfter.\n"
        assertEquals(listOf(text.indexOf("```"), text.indexOf("After.")), cuts(text))
    }

    @Test
    fun `a list item or an indented line after a blank line is not a cut`() {
        assertEquals(emptyList<Int>(), cuts("- one\n\n- two\n\n  more of two\n\n3. three\n"))
    }

    @Test
    fun `an answer streamed in pieces reads as the whole answer rendered at once`() {
        val view = onEdt { AnswerView() }
        for (end in answer.indices step 700) onEdt { view.update(TextEntry(id = "m:0", text = answer.take(end), streaming = true)) }
        onEdt { view.update(TextEntry(id = "m:0", text = answer)) }
        val expected = whole(answer)
        waitFor("the segments to render") { shown(view) == expected }
    }

    @Test
    fun `a streaming answer renders only its tail again, never the blocks before it`() {
        val view = onEdt { AnswerView() }
        var removed = 0
        var lowest = Int.MAX_VALUE
        val watched = mutableSetOf<MarkdownView>()
        fun watch() = panes(view).filter(watched::add).forEach { pane ->
            pane.document.addDocumentListener(object : DocumentListener {
                override fun removeUpdate(e: DocumentEvent) {
                    removed += e.length
                    if (pane === watched.first()) lowest = minOf(lowest, e.offset)
                }
                override fun insertUpdate(e: DocumentEvent) = Unit
                override fun changedUpdate(e: DocumentEvent) = Unit
            })
        }
        val step = 97
        for (end in answer.indices step step) {
            onEdt {
                watch()
                view.update(TextEntry(id = "m:0", text = answer.take(end), streaming = true))
            }
        }
        onEdt { view.update(TextEntry(id = "m:0", text = answer)) }
        waitFor("the whole answer") { shown(view) == whole(answer) }
        // Rendered whole on every update, the answer would be removed and inserted again
        // each time (its length times the updates over two); only tails (a block at most) are.
        val updates = answer.length / step
        assertTrue(removed < answer.length, "removed $removed characters over $updates updates of a ${answer.length}-character answer")
        assertTrue(lowest > 0, "the start of the answer was never removed")
    }

    @Test
    fun `the end already drawn while it streamed is not drawn again when the answer finishes`() {
        val view = onEdt { AnswerView() }
        val text = "Intro paragraph.\n\n```kotlin\nfun last() = 1\n```\n"
        onEdt { view.update(TextEntry(id = "m:0", text = text, streaming = true)) }
        waitFor("the streamed text") { shown(view) == whole(text) }
        val changes = mutableListOf<String>()
        onEdt {
            for (pane in panes(view)) {
                pane.document.addDocumentListener(object : DocumentListener {
                    override fun removeUpdate(e: DocumentEvent) {
                        changes += "removed ${e.length}"
                    }
                    override fun insertUpdate(e: DocumentEvent) {
                        changes += "inserted ${e.length}"
                    }
                    override fun changedUpdate(e: DocumentEvent) = Unit
                })
            }
        }
        onEdt { view.update(TextEntry(id = "m:0", text = text)) }
        onEdt { }
        assertEquals(emptyList<String>(), changes)
        assertEquals(whole(text), shown(view))
    }

    @Test
    fun `the last words of a streamed answer are drawn in the task that completes it`() {
        val view = onEdt { AnswerView() }
        val streamed = "Intro paragraph.\n\nA second paragraph that is still being"
        onEdt { view.update(TextEntry(id = "m:0", text = streamed, streaming = true)) }
        waitFor("the streamed text") { shown(view) == whole(streamed) }
        val text = "$streamed written, and then it ends.\n\n- one last point\n"
        // No round trip through the markdown thread: the end is there when the update returns.
        assertEquals(whole(text), onEdt { view.update(TextEntry(id = "m:0", text = text)).let { shown(view) } })
    }

    @Test
    fun `a long finished answer is rendered over several EDT tasks, not in one`() {
        val long = answer.repeat(4)
        val view = onEdt { AnswerView() }
        val expected = whole(long)
        val seen = mutableListOf<Int>()
        onEdt {
            view.update(TextEntry(id = "m:0", text = long))
            seen += shownLength(view)
        }
        // Each EDT task after it notes how much is shown, until all of it is.
        fun look() {
            seen += shownLength(view)
            if (shown(view) != expected) SwingUtilities.invokeLater(::look)
        }
        onEdt { SwingUtilities.invokeLater(::look) }
        waitFor("the rest to render") { shown(view) == expected }
        val steps = seen.distinct()
        assertTrue(steps.size > 2, "the answer appeared in ${steps.size - 1} steps: $steps")
        assertTrue(steps.zipWithNext().all { (a, b) -> b > a }, "each step adds to what is shown: $steps")
    }

    /** The number of characters a view shows. EDT only. */
    private fun shownLength(view: AnswerView) = panes(view).sumOf { it.length }

    @Test
    fun `an answer replaced by a different text shows the new text only`() {
        val view = onEdt { AnswerView() }
        onEdt { view.update(TextEntry(id = "m:0", text = "First draft.\n\nMore.\n", streaming = true)) }
        onEdt { view.update(TextEntry(id = "m:0", text = "Final answer.")) }
        waitFor("the new text") { shown(view) == "Final answer." }
    }
}
