package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryToolResult
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.transcript.Transcript
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.awt.event.MouseEvent
import javax.swing.JFrame
import javax.swing.SwingUtilities
import dev.claudesidecar.core.protocol.Transcript as TranscriptData

/**
 * A tool row or thought the user opened stays open when the windowed transcript drops its view
 * (scrolled far away) and makes it again (scrolled back), and after a theme switch makes every
 * view again: whether it is open belongs to the transcript's [OpenedEntries], not to the view.
 * A row opened in a long chat scrolled up opens downward, its header where it was clicked, and
 * shows the lines of its result left out when asked (screenshot long-chat-tool-row-opened.png).
 */
class OpenedEntriesTest {
    private lateinit var frame: JFrame
    private lateinit var transcript: Transcript
    private lateinit var view: TranscriptView

    private val context = object : ViewContext {
        override val cwd: String? = null
        override fun fileUpdates(key: String): List<FileUpdatedNotification> = emptyList()
    }

    @BeforeEach
    fun open() = onEdt {
        FlatLightLaf.setup()
        transcript = Transcript()
        view = TranscriptView(transcript, context, wholeUpTo = WHOLE_UP_TO)
        frame = JFrame("opened entries").apply {
            contentPane = view.scrollPane
            setSize(640, 600)
            isVisible = true
        }
        view.show(
            transcript.apply(
                ChatEvent.Transcript(TranscriptData(channelId = "ch-1", entries = ALL, hasMore = false, seq = 1, nextCursor = null)),
            ),
        )
    }

    @AfterEach
    fun close() = onEdt { frame.dispose() }

    /** The view in the column for the tool row ([TOOL]) or the thought ([THOUGHT]), the only ones of their kind; null when not drawn. */
    private fun viewOf(key: String): EntryView? = onEdt {
        allComponents(view.scrollPane.viewport.view).firstNotNullOfOrNull { c ->
            EntryView.of(c)?.takeIf { v -> c.isShowing && if (key == TOOL) v is ToolRow else v is ThinkingView }
        }
    }

    /** Clicks the row's header (a tool row's line, a thought's "▸ Thought") as the user does. */
    private fun click(v: EntryView) = onEdt {
        val target = if (v is ThinkingView) find<javax.swing.JButton>(v.component).first() else v.component.getComponent(0)
        if (target is javax.swing.JButton) {
            target.doClick()
        } else {
            target.dispatchEvent(MouseEvent(target, MouseEvent.MOUSE_CLICKED, System.currentTimeMillis(), 0, 4, 4, 1, false))
        }
    }

    /** Turns the wheel (up for the [top], else down) until the view is at the top or the end. */
    private fun wheelTo(top: Boolean) {
        repeat(TURNS) {
            wheelUp(view.scrollPane, if (top) 2_000 else -2_000)
            settle()
            onEdt { }
            val bar = onEdt { view.scrollPane.verticalScrollBar.let { Triple(it.value, it.visibleAmount, it.maximum) } }
            if (if (top) bar.first == 0 else bar.first + bar.second >= bar.third) {
                settle()
                onEdt { }
                return
            }
        }
        error("the view did not reach its ${if (top) "top" else "end"} in $TURNS turns of the wheel")
    }

    private fun waitForEnd() = waitFor("the end in sight") { view.inSight(TOOL) }

    @Test
    fun `an opened tool row is open again when the user scrolls away and back`() {
        waitForEnd()
        val before = viewOf(TOOL) ?: error("the tool row is not drawn at the end")
        click(before)
        assertTrue(onEdt { visibleText(before.component) }.contains(TOOL_INPUT_LINE), "clicked open: its input shows")
        wheelTo(top = true)
        assertFalse(onEdt { before.component.parent?.isShowing == true }, "the row's view was dropped at the top")
        wheelTo(top = false)
        val after = viewOf(TOOL) ?: error("the tool row is not drawn again at the end")
        assertNotSame(before, after, "a view made again")
        val text = onEdt { visibleText(after.component) }
        assertTrue(text.startsWith("▾"), "it shows ▾ (open): $text")
        assertTrue(text.contains(TOOL_INPUT_LINE), "and its input: $text")
    }

    @Test
    fun `an opened thought and a closed tool row stay as they were after a theme switch`() {
        waitForEnd()
        click(viewOf(THOUGHT) ?: error("the thought is not drawn"))
        onEdt { view.restyle() }
        settle()
        waitForEnd()
        val thought = onEdt { visibleText(viewOf(THOUGHT)!!.component) }
        assertTrue(thought.startsWith("▾ Thought") && thought.contains(THOUGHT_TEXT), "the thought is open: $thought")
        val tool = onEdt { visibleText(viewOf(TOOL)!!.component) }
        assertTrue(tool.startsWith("▸") && !tool.contains(TOOL_INPUT_LINE), "the tool row is closed: $tool")
    }

    @Test
    fun `in a long chat scrolled up a tool row opens below its header and shows its whole result when asked`() {
        val (panel, window) = onEdt {
            val panel = ChatPanel()
            panel to JFrame("long chat").apply {
                contentPane = panel
                setSize(640, 760)
                isVisible = true
            }
        }
        try {
            panel.listener.onEvent(
                ChatEvent.Transcript(TranscriptData(channelId = "ch-1", entries = EXCHANGES, hasMore = true, seq = 1, nextCursor = "c1")),
            )
            waitFor("the last exchange drawn") { panel.transcriptView.inSight("u59") }
            settle()
            repeat(3) {
                wheelUp(panel.transcriptView.scrollPane, 12)
                settle()
                onEdt { }
            }
            val row = onEdt {
                allComponents(panel.transcriptView.scrollPane.viewport.view).firstNotNullOf { c ->
                    (EntryView.of(c) as? ToolRow)?.takeIf {
                        panel.transcriptView.scrollPane.viewport.viewRect.contains(
                            SwingUtilities.convertPoint(c.parent, c.location, panel.transcriptView.scrollPane.viewport.view),
                        )
                    }
                }
            }
            val viewport = panel.transcriptView.scrollPane.viewport
            val before = onEdt { row.component.y - viewport.viewPosition.y }

            // The window follows a row's growth in a task of its own, and the views it makes
            // above may still be drawn then (ci25 measured once before they were): the row ends
            // where it was clicked; one that grows upward stays moved, and this times out.
            fun staysInPlace(what: String) = waitFor(
                "$what: the row where it was clicked ($before px from the view's top)",
                timeoutMs = 10_000,
                describe = { "it is ${row.component.y - viewport.viewPosition.y} px from the top" },
            ) { row.component.y - viewport.viewPosition.y == before }
            click(row)
            settle()
            staysInPlace("the opened row opens downward")
            val text = onEdt { visibleText(row.component) }
            assertTrue(
                text.startsWith("▾") && text.contains("test_page_12 PASSED"),
                "the row is open, its result's first lines shown: $text",
            )
            assertFalse(text.contains("test_page_13"), "not the rest: $text")
            screenshot(panel, "long-chat-tool-row-opened")
            onEdt { find<javax.swing.JButton>(row.component).single { it.text == "Show 5 more lines" }.doClick() }
            settle()
            staysInPlace("the row stays in place as its result grows")
            val whole = onEdt { visibleText(row.component) }
            assertTrue(whole.contains("test_page_16 PASSED\n16 passed in 3.2s"), "the result whole: $whole")
        } finally {
            onEdt {
                window.dispose()
                panel.dispose()
            }
        }
    }

    private companion object {
        const val WHOLE_UP_TO = 40
        const val TURNS = 20
        const val TOOL = "tool-1"
        const val THOUGHT = "thinking-1"
        const val TOOL_COMMAND = "ls -la src"
        const val TOOL_INPUT_LINE = "echo listed"
        const val THOUGHT_TEXT = "Listing the sources first"

        /** 60 exchanges of a working session: a prompt, a thought, a Bash call with its output, an answer, the turn's footer. */
        val EXCHANGES: List<Entry> = (0 until 60).flatMap { i ->
            listOf(
                PromptEntry(id = "q$i", text = "Run the paging tests again (round $i) and tell me what failed."),
                ThinkingEntry(id = "th$i", text = "The tests live in tests/test_paging.py; run them with -q."),
                ToolEntry(
                    id = "b$i",
                    name = "Bash",
                    status = ToolStatus.DONE,
                    input = JsonObject().apply { addProperty("command", "uv run pytest tests/test_paging.py -q -n 0") },
                    result = EntryToolResult(
                        text = (1..16).joinToString("\n") { n -> "tests/test_paging.py::test_page_$n PASSED" } + "\n16 passed in 3.2s",
                    ),
                ),
                TextEntry(id = "a$i", text = "All **16** paging tests pass in round $i. The slowest is `test_page_7` at 0.4 s."),
                TurnEntry(
                    costUsd = 0.0123,
                    durationMs = 5400,
                    id = "u$i",
                    outcome = TurnOutcome.SUCCESS,
                    permissionWaitMs = 0,
                ),
            )
        }

        /** 300 entries of questions and answers, then a thought and a Bash call at the end. */
        val ALL: List<Entry> = (0 until 300).map { i ->
            if (i % 2 == 0) {
                PromptEntry(id = "p$i", text = "question $i: what comes next?")
            } else {
                TextEntry(id = "t$i", text = "answer $i: the next step.\n\nIt takes a second paragraph to say why.")
            }
        } + listOf(
            PromptEntry(id = "p-last", text = "list the sources"),
            ThinkingEntry(id = THOUGHT, text = THOUGHT_TEXT),
            ToolEntry(
                id = TOOL,
                name = "Bash",
                status = ToolStatus.DONE,
                input = JsonObject().apply { addProperty("command", "$TOOL_COMMAND\n$TOOL_INPUT_LINE") },
            ),
            TextEntry(id = "t-last", text = "Those are the sources."),
        )
    }
}
