package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.transcript.Transcript
import dev.claudesidecar.core.transcript.id
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.awt.Component
import javax.swing.JFrame
import javax.swing.SwingUtilities
import dev.claudesidecar.core.protocol.Transcript as TranscriptData

/**
 * The transcript of a long chat read a page at a time (the daemon's `transcriptPaging`): the
 * view starts at the last page, asks for the page before when the user scrolls near the top
 * (one request at a time, none at the top), puts it in above without moving what is on screen,
 * and draws only the entries near the screen. The pages are fed as the chat delivers them.
 */
class TranscriptPagingTest {
    private lateinit var frame: JFrame
    private lateinit var transcript: Transcript
    private lateinit var view: TranscriptView

    /** How many pages the view asked for. */
    private var asked = 0

    private val context = object : ViewContext {
        override val cwd: String? = null
        override fun fileUpdates(key: String): List<FileUpdatedNotification> = emptyList()
    }

    @BeforeEach
    fun open() = onEdt {
        FlatLightLaf.setup()
        transcript = Transcript()
        view = TranscriptView(transcript, context, loadOlder = { asked++ }, wholeUpTo = WHOLE_UP_TO)
        frame = JFrame("paging").apply {
            contentPane = view.scrollPane
            setSize(640, 600)
            isVisible = true
        }
    }

    @AfterEach
    fun close() = onEdt { frame.dispose() }

    private fun apply(event: ChatEvent) = onEdt { view.show(transcript.apply(event)) }

    /** The last page: the conversation's last [PAGE] entries, older ones left to read. */
    private fun showLastPage() {
        apply(ChatEvent.Transcript(page(ALL.size)))
        settle()
    }

    /** The [PAGE] entries before entry [end] (the last page for the conversation's end; else what the cursor `c<end>` reads). */
    private fun page(end: Int): TranscriptData {
        val start = (end - PAGE).coerceAtLeast(0)
        return TranscriptData(
            channelId = "ch-1",
            entries = ALL.subList(start, end),
            hasMore = start > 0,
            seq = 1,
            nextCursor = if (start > 0) "c$start" else null,
        )
    }

    /** Turns the wheel up until the view is at its top (entries drawn above may take a few turns to reach). */
    private fun toTheTop() {
        repeat(TURNS) {
            wheelUp(view.scrollPane, 2_000)
            settle()
            onEdt { }
            if (onEdt { view.scrollPane.viewport.viewPosition.y } == 0) {
                // The answers drawn for the top render on another thread: settled before a test measures.
                settle()
                onEdt { }
                return
            }
        }
        error("the view did not reach its top in $TURNS turns of the wheel: at ${onEdt { view.scrollPane.viewport.viewPosition.y }}")
    }

    /** The entry views in the column from the top, by the entry each shows. */
    private fun drawnKeys(): List<String> = onEdt {
        allComponents(view.scrollPane.viewport.view).mapNotNull { c -> EntryView.of(c)?.let { keyOf(c) } }
    }

    private fun keyOf(c: Component): String? = shownText(
        allComponents(c).firstOrNull { shownText(it)?.startsWith("question") == true || shownText(it)?.startsWith("answer") == true }
            ?: return null,
    )?.substringBefore(":")

    /** The entry view at the top of the screen, and how far from the screen's top it is drawn. */
    private fun topOfScreen(): Pair<Component, Int> = onEdt {
        val viewport = view.scrollPane.viewport
        val y = viewport.viewPosition.y
        val c = (viewport.view as java.awt.Container).components.first { EntryView.of(it) != null && it.y + it.height > y + 40 }
        c to (c.y - y)
    }

    @Test
    fun `a long chat shows its last page at the end and asks for nothing until the user scrolls up`() {
        showLastPage()
        waitFor("the end in sight") { view.scrollPane.verticalScrollBar.let { it.value + it.visibleAmount >= it.maximum } }
        assertEquals(0, asked)
        assertTrue(drawnKeys().contains("answer ${ALL.size - 1}"), "the last entry is drawn")
    }

    @Test
    fun `a page shown draws the last entry in its first task, then the rest of the screen task by task`() {
        onEdt { view.makeBudgetNs = 0 } // no time for a second view in a task
        onEdt {
            view.show(transcript.apply(ChatEvent.Transcript(page(ALL.size))))
            assertEquals(1, view.viewCount, "one view made in the task that showed the page")
            assertTrue(view.inSight(ALL.last().id()), "the last entry in sight")
        }
        settle()
        onEdt {
            val viewport = view.scrollPane.viewport
            val drawn = (viewport.view as java.awt.Container).components.filter { EntryView.of(it) != null }
            assertTrue(drawn.first().y <= viewport.viewPosition.y, "the screen drawn to its top, and above")
            assertTrue(view.inSight(ALL.last().id()), "the end still in sight")
        }
        val drawn = drawnKeys()
        assertEquals(ALL.takeLast(drawn.size).map { label(it) }, drawn, "the last entries, in order, each once")
    }

    @Test
    fun `a short chat, drawn whole, draws its last entry in the first task and every entry once the tasks after it ran`() {
        val short = ALL.takeLast(WHOLE_UP_TO - 10)
        onEdt {
            view.makeBudgetNs = 0
            val whole = TranscriptData("ch-1", entries = short, hasMore = false, seq = 1, nextCursor = null)
            view.show(transcript.apply(ChatEvent.Transcript(whole)))
            assertEquals(1, view.viewCount, "one view made in the task that showed the chat")
            assertTrue(view.inSight(short.last().id()), "the last entry in sight")
        }
        settle()
        assertEquals(short.map { label(it) }, drawnKeys(), "every entry drawn, in order, each once")
        assertTrue(onEdt { view.inSight(short.last().id()) }, "the end still in sight")
    }

    @Test
    fun `scrolling near the top asks for the page before once, and says that it loads`() {
        showLastPage()
        toTheTop()
        assertEquals(1, asked)
        assertTrue(onEdt { visibleText(view.scrollPane) }.startsWith(TranscriptView.LOADING_OLDER))
        wheelUp(view.scrollPane, 50)
        settle()
        assertEquals(1, asked, "one request at a time")
    }

    @Test
    fun `an older page goes in above without moving the entry on screen`() {
        showLastPage()
        toTheTop()
        val (entry, offset) = topOfScreen()
        onEdt {
            view.show(transcript.apply(ChatEvent.OlderEntries(page(ALL.size - PAGE))))
            view.olderSettled(read = true)
        }
        settle()
        onEdt { }
        onEdt {
            assertTrue(entry.parent != null, "the entry on screen is still drawn")
            assertEquals(offset, entry.y - view.scrollPane.viewport.viewPosition.y, "it stays where it was on screen")
            assertFalse(view.loadingOlder)
            assertFalse(visibleText(view.scrollPane).contains(TranscriptView.LOADING_OLDER))
        }
    }

    @Test
    fun `reading every page up to the top shows each entry once, in order, and asks for none at the top`() {
        showLastPage()
        var end = ALL.size - PAGE
        while (end > 0) {
            val before = asked
            toTheTop()
            assertEquals(before + 1, asked, "the page before $end asked for")
            onEdt {
                view.show(transcript.apply(ChatEvent.OlderEntries(page(end))))
                view.olderSettled(read = true)
            }
            end -= PAGE
        }
        assertFalse(onEdt { transcript.hasOlder })
        val pages = asked
        toTheTop()
        wheelUp(view.scrollPane, 50)
        settle()
        assertEquals(pages, asked, "no request at the top")
        assertEquals(ALL.map { it.id() }, onEdt { transcript.keys })
        val drawn = drawnKeys()
        assertEquals(drawn.distinct(), drawn, "no entry drawn twice")
        assertEquals(ALL.take(drawn.size).map { label(it) }, drawn, "the first entries drawn from the top, in order")
        assertTrue(view.viewCount < ALL.size / 3, "only the entries near the screen are drawn: ${view.viewCount} of ${ALL.size}")
    }

    @Test
    fun `an older page costs the view its own entries, not those loaded before it`() {
        showLastPage()
        var end = ALL.size - PAGE
        while (end > PAGE) {
            apply(ChatEvent.OlderEntries(page(end)))
            end -= PAGE
        }
        settle()
        val (placed, marked) = onEdt { view.entriesPlaced to view.entriesMarked }
        apply(ChatEvent.OlderEntries(page(end)))
        settle()
        onEdt {
            assertEquals(PAGE.toLong(), view.entriesPlaced - placed, "only the page's entries put into slots (${ALL.size} loaded)")
            // The page's exchanges and the one it runs into (an answer, ending with the first prompt after it).
            assertTrue(view.entriesMarked - marked <= PAGE + 2, "Interrupted marks read again: ${view.entriesMarked - marked}")
        }
        assertEquals(ALL.map { it.id() }, onEdt { transcript.keys })
    }

    @Test
    fun `an entry added at the end of a chat read to its top costs the view that entry and its exchange`() {
        showLastPage()
        var end = ALL.size - PAGE
        while (end > 0) {
            apply(ChatEvent.OlderEntries(page(end)))
            end -= PAGE
        }
        settle()
        val (placed, marked) = onEdt { view.entriesPlaced to view.entriesMarked }
        apply(entryAdded(PromptEntry(id = "p-new", text = "question new: and now?"), seq = 2))
        apply(entryAdded(TextEntry(id = "t-new", text = "answer new: half", aborted = true), seq = 3))
        settle()
        onEdt {
            assertEquals(2L, view.entriesPlaced - placed, "only the new entries put into slots (${ALL.size} loaded)")
            // Each time the exchange at the end, and the one before it when a prompt starts one.
            assertTrue(view.entriesMarked - marked <= 6, "Interrupted marks read again: ${view.entriesMarked - marked}")
        }
        assertEquals(ALL.map { it.id() } + listOf("p-new", "t-new"), onEdt { transcript.keys })
        val footer = TurnEntry(costUsd = 0.0, durationMs = 1, id = "u-new", outcome = TurnOutcome.INTERRUPTED, permissionWaitMs = 0)
        apply(entryAdded(footer, seq = 4))
        settle()
        waitFor("the end in sight") { view.inSight("u-new") }
        val text = onEdt { visibleText(view.scrollPane) }
        assertEquals(1, Regex("Interrupted").findAll(text).count(), "said by the new footer only: $text")
        assertTrue(text.endsWith("answer new: half\nInterrupted  ·  0.0 s"), "the new exchange drawn at the end: ${text.takeLast(200)}")
    }

    @Test
    fun `a sub-agent's entry added at the end goes into the row of the Agent call that started it`() {
        showLastPage()
        val agent = ToolEntry(
            id = "agent-1",
            name = "Agent",
            status = ToolStatus.RUNNING,
            input = JsonObject().apply { addProperty("description", "look around") },
        )
        apply(entryAdded(agent, seq = 2))
        val placed = onEdt { view.entriesPlaced }
        apply(entryAdded(TextEntry(id = "sub-1", text = "answer sub: found it", parentId = "agent-1"), seq = 3))
        settle()
        waitFor("the Agent call in sight") { view.inSight("agent-1") }
        onEdt {
            assertEquals(1L, view.entriesPlaced - placed, "the new entry sorted in alone")
            val row = allComponents(view.scrollPane.viewport.view).firstNotNullOf { EntryView.of(it) as? ToolRow }
            assertTrue(
                visibleText(row.children).contains("answer sub: found it"),
                "inside the Agent call's row: ${visibleText(row.component)}",
            )
        }
    }

    private fun entryAdded(entry: Entry, seq: Int) = ChatEvent.Notification(
        Notifications.ENTRY.name,
        EntryNotification(channelId = "ch-1", entry = entry, seq = seq),
    )

    @Test
    fun `an older page ending in an aborted answer whose footer was loaded first says Interrupted once`() {
        val aborted =
            listOf(PromptEntry(id = "p0", text = "question 0: stop me"), TextEntry(id = "t0", text = "answer 0: half", aborted = true))
        val loaded = listOf(
            TurnEntry(costUsd = 0.0, durationMs = 1, id = "u0", outcome = TurnOutcome.INTERRUPTED, permissionWaitMs = 0),
            PromptEntry(id = "p1", text = "question 1: go on"),
            TextEntry(id = "t1", text = "answer 1: done"),
        )
        apply(ChatEvent.Transcript(TranscriptData(channelId = "ch-1", entries = loaded, hasMore = true, seq = 1, nextCursor = "c2")))
        apply(ChatEvent.OlderEntries(TranscriptData(channelId = "ch-1", entries = aborted, hasMore = false, seq = 1, nextCursor = null)))
        settle()
        val text = onEdt { visibleText(view.scrollPane) }
        assertEquals(1, Regex("Interrupted").findAll(text).count(), "said by the footer only: $text")
    }

    @Test
    fun `the last page again with an entry changed meanwhile draws that entry as it is now`() {
        showLastPage()
        val last = ALL.last() as TextEntry
        val changed = page(ALL.size).let {
            it.copy(entries = it.entries.dropLast(1) + last.copy(text = "answer changed meanwhile"), seq = 2)
        }
        apply(ChatEvent.Transcript(changed))
        settle()
        assertTrue(onEdt { visibleText(view.scrollPane) }.contains("answer changed meanwhile"), "the entry as it is now")
    }

    private companion object {
        const val PAGE = 50
        const val WHOLE_UP_TO = 40
        const val TURNS = 20

        /** A conversation of 300 entries: a question, then a few lines of answer, 150 times. */
        val ALL: List<Entry> = (0 until 300).map { i ->
            if (i % 2 == 0) {
                PromptEntry(id = "p$i", text = "question $i: what comes next?")
            } else {
                TextEntry(id = "t$i", text = "answer $i: the next step.\n\nIt takes a second paragraph to say why.")
            }
        }

        fun label(entry: Entry) = if (entry is PromptEntry) "question ${entry.id().drop(1)}" else "answer ${entry.id().drop(1)}"
    }
}
