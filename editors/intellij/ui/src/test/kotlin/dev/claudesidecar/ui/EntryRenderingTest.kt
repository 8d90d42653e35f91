package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.EntryToolResult
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.NoticeLevel
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.ProtocolJson
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.transcript.Fixtures
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import javax.swing.JFrame
import javax.swing.JScrollPane
import javax.swing.JTextArea
import javax.swing.SwingUtilities

/**
 * The chat panel renders what the entries say: the recorded streams (tests/data/streams) fed
 * to a panel as its chat's events, live, or as a resumed chat's history (the same entries).
 */
class EntryRenderingTest {
    private lateinit var frame: JFrame
    private lateinit var panel: ChatPanel

    @BeforeEach
    fun open() = onEdt {
        FlatLightLaf.setup()
        panel = ChatPanel()
        frame = JFrame("entries").apply {
            contentPane = panel
            setSize(640, 900)
            isVisible = true
        }
    }

    @AfterEach
    fun close() = onEdt {
        panel.dispose()
        frame.dispose()
    }

    /**
     * Feeds [events] as the chat would and waits until the EDT has drawn them (the panel
     * hands each to the EDT in order; an entry that no longer streams is drawn at once).
     */
    private fun feed(events: List<ChatEvent>) {
        events.forEach { panel.listener.onEvent(it) }
        settle()
        onEdt { frame.validate() }
        settle() // views the layout brought into the window
    }

    private fun live(name: String) = feed(Fixtures.notifications(name))

    @Test
    fun `events that come while the EDT is busy are applied together, each entry as the last of them left it, every turn end told`() {
        val events = Fixtures.notifications("compacted")
        var ends = 0
        var seenByNextTask = -1
        onEdt {
            panel.onTurnEnded = { ends++ }
            panel.listener.onEvent(events.first())
            // Queued behind the task of the first event: with the rest batched into that task,
            // this one finds every event applied.
            SwingUtilities.invokeLater { seenByNextTask = panel.transcript.entries.size }
            events.drop(1).forEach { panel.listener.onEvent(it) }
            assertTrue(panel.transcript.entries.isEmpty(), "nothing is applied while the EDT is busy")
        }
        settle()
        val expected = Fixtures.play("compacted").entries
        assertEquals(expected, onEdt { panel.transcript.entries })
        assertEquals(expected.size, seenByNextTask)
        assertEquals(events.count { it.method == "claude/turnEnded" }, ends)
        val last = expected.filterIsInstance<TextEntry>().last().text.lines().first { it.isNotBlank() }
        assertTrue(last in text(), "the last answer is drawn: $last")
    }

    /** The stream's entries as a resumed chat's history brings them. */
    private fun resumed(name: String) {
        val entries = ProtocolJson.gson.fromJson(Fixtures.expectedEntries(name), Array<Entry>::class.java).toList()
        feed(listOf(historyOf(entries)))
    }

    /** A stored session's history of [entries], whole. */
    private fun historyOf(entries: List<Entry>) = ChatEvent.History(History(entries, false, emptyList(), "s", emptyList(), null))

    private fun text() = onEdt { visibleText(panel) }

    private fun occurrences(text: String, of: String) = Regex(Regex.escape(of)).findAll(text).count()

    private fun row(name: String): ToolRow = onEdt {
        allComponents(panel).mapNotNull { EntryView.of(it) as? ToolRow }.first { visibleText(it.component).startsWith("▸\n✓\n$name") }
    }

    @Test
    fun `a closed thought, a call that ran and a turn that succeeded make no text area until one has text to show`() = onEdt {
        // A long chat scrolled through makes a view for each entry it passes: a text area each
        // (a millisecond or so to make) for text nobody sees would be most of that cost.
        val context = object : ViewContext {
            override val cwd: String? = null
            override fun fileUpdates(key: String) = emptyList<FileUpdatedNotification>()
        }
        val opened = OpenedEntries()
        val thought = entryView("t", ThinkingEntry(id = "t", text = "Let me look"), context, opened)
        val call = entryView("c", ToolEntry(id = "c", name = "Read", status = ToolStatus.DONE), context, opened)
        val footer = entryView("f", TurnEntry(0.0, 1200, "f", TurnOutcome.SUCCESS, 0), context, opened)
        for (view in listOf(thought, call, footer)) {
            assertEquals(emptyList<JTextArea>(), find<JTextArea>(view.component), "no text area in ${view::class.simpleName}")
        }
        opened.toggle("t")
        thought.update(ThinkingEntry(id = "t", text = "Let me look"))
        assertEquals(listOf("Let me look"), find<JTextArea>(thought.component).filter { it.isVisible }.map { it.text })
        call.update(ToolEntry(id = "c", name = "Read", status = ToolStatus.FAILED, result = EntryToolResult(text = "no such file")))
        assertEquals(listOf("Failed: no such file"), find<JTextArea>(call.component).filter { it.isVisible }.map { it.text })
        footer.update(TurnEntry(0.0, 1200, "f", TurnOutcome.ERROR, 0, error = "overloaded"))
        assertEquals(listOf("overloaded"), find<JTextArea>(footer.component).filter { it.isVisible }.map { it.text })
    }

    @Test
    fun `an allowed Write shows its permission decision and its +N -M`() {
        live("write-allowed")
        val shown = text()
        assertTrue(shown.contains("allowed") && shown.contains("+5 −1"), shown)
        assertTrue(shown.contains("README.md is updated.") && Regex("""\d+\.\d s""").containsMatchIn(shown), shown)
    }

    @Test
    fun `a denied Edit says it was denied and why`() {
        live("edit-denied")
        assertTrue(text().contains("Denied: Keep the greeting short."), text())
    }

    @Test
    fun `an interrupted answer says Interrupted once, in its footer`() {
        live("interrupted")
        val footer = text().lines().single { it.contains("Interrupted") }
        assertEquals(1, occurrences(text(), "Interrupted"), text())
        assertTrue(Regex("""^Interrupted {2}· {2}\d+\.\d s""").containsMatchIn(footer), footer)
    }

    @Test
    fun `a resumed interrupted answer says Interrupted once too`() {
        resumed("interrupted")
        assertEquals(1, occurrences(text(), "Interrupted"), text())
    }

    @Test
    fun `Interrupted is said once whatever order the notice and the footer come in`() {
        val events = Fixtures.notifications("interrupted")
        val notice = events.single { (it.params as? EntryNotification)?.entry is NoticeEntry }
        feed(events - notice + notice)
        assertEquals(1, occurrences(text(), "Interrupted"), text())
    }

    @Test
    fun `an interrupted answer without a footer says Interrupted itself, once`() {
        val stored = ProtocolJson.gson.fromJson(Fixtures.expectedEntries("interrupted"), Array<Entry>::class.java)
        val entries = stored.filterNot { it is TurnEntry }
        feed(listOf(historyOf(entries)))
        assertEquals(1, occurrences(text(), "Interrupted"), text())
        assertTrue(text().lines().none { Regex("""\d+\.\d s""").containsMatchIn(it) }, "no footer: ${text()}")
    }

    @Test
    fun `a sub-agent's entries are nested inside the Agent call that started it`() {
        live("sub-agent")
        val agent = row("Agent")
        val bash = row("Bash")
        assertTrue(onEdt { SwingUtilities.isDescendingFrom(bash.component, agent.children) }, "the Bash row is inside the Agent row")
        assertTrue(onEdt { visibleText(agent.children) }.contains("SUBTASK: say hi with echo"))
    }

    @Test
    fun `a resumed sub-agent is nested the same way`() {
        resumed("sub-agent")
        val agent = row("Agent")
        val bash = row("Bash")
        assertTrue(onEdt { SwingUtilities.isDescendingFrom(bash.component, agent.children) })
    }

    @Test
    fun `an API error shows its message in the error colour, and the turn fails`() {
        live("api-error")
        val notice = onEdt { allComponents(panel).first { shownText(it)?.startsWith("API Error: 500") == true } }
        assertEquals(Theme.error, onEdt { notice.foreground })
    }

    @Test
    fun `the entries of a stream shown as a resumed chat's history read as they did live, footers aside`() {
        for (name in Fixtures.names) {
            close()
            open()
            live(name)
            val live = text().lines().filterNot { Regex("""\d+\.\d s|^\$""").containsMatchIn(it) }
            close()
            open()
            resumed(name)
            val stored = text().lines().filterNot { Regex("""\d+\.\d s|^\$""").containsMatchIn(it) }
            assertEquals(live, stored, name)
        }
    }

    @Test
    fun `a notice of a subtype this client does not know is shown by its text and level`() {
        val notice = NoticeEntry(id = "n1", level = NoticeLevel.WARN, subtype = "somethingNew", text = "Something new happened.")
        feed(listOf(ChatEvent.Notification("claude/entry", EntryNotification("ch-1", notice, 1))))
        val label = onEdt { allComponents(panel).first { shownText(it) == "Something new happened." } }
        assertEquals(Theme.warning, onEdt { label.foreground })
    }

    @Test
    fun `the end of a long answer stays in sight while it renders, until the user scrolls away`() {
        val answer = (1..300).joinToString("\n\n") {
            "Paragraph $it, long enough to wrap across the width of the chat panel at least once."
        }
        fun entry(entry: Entry, seq: Int) = ChatEvent.Notification("claude/entry", EntryNotification("ch-1", entry, seq))
        // Arriving whole, the answer renders a segment per EDT task, growing after each.
        feed(listOf(entry(PromptEntry(id = "p1", text = "a long answer"), 1), entry(TextEntry(id = "m:0", text = answer), 2)))
        val bar = onEdt { find<JScrollPane>(panel).first { it.viewport.view is ScrollableColumn }.verticalScrollBar }
        fun atEnd() = bar.value + bar.visibleAmount >= bar.maximum // EDT only
        waitFor("the answer's end in sight", describe = { "${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            find<MarkdownView>(panel).any { it.plainText.contains("Paragraph 300,") } && atEnd()
        }
        // The user scrolls up (a wheel event): a layout's own moves do not count as leaving the end.
        onEdt { bar.value = 0 }
        waitFor("the view back at the end: that move was not the user's") { atEnd() }
        wheelUp(SwingUtilities.getAncestorOfClass(JScrollPane::class.java, bar) as JScrollPane, 1_000)
        waitFor("the wheel to scroll to the top") { bar.value == 0 }
        feed(listOf(entry(TextEntry(id = "m:1", text = "More text."), 3)))
        assertEquals(0, onEdt { bar.value }, "the view stays where the user scrolled to")
    }

    @Test
    fun `a streaming line that grows in place is repainted, not left stale on screen`() {
        fun entry(entry: Entry, seq: Int) = ChatEvent.Notification("claude/entry", EntryNotification("ch-1", entry, seq))
        feed(listOf(entry(PromptEntry(id = "p1", text = "a short answer"), 1)))
        // The last line grows word by word and never wraps: no view moves or changes size,
        // so only the text's own repaint of what changed can bring each word on screen.
        var text = "A short answer.\n\nIt grows:"
        var seq = 2
        for (word in listOf("one", "two", "three", "four", "five", "six", "seven")) {
            text += " $word"
            feed(listOf(entry(TextEntry(id = "m:0", text = text, streaming = true), seq++)))
        }
        val transcript = onEdt { find<JScrollPane>(panel).first { it.viewport.view is ScrollableColumn } }
        val robot = java.awt.Robot()
        fun same(): Boolean {
            val area = java.awt.Rectangle(transcript.locationOnScreen, transcript.size)
            val screen = robot.createScreenCapture(area)
            // The panel paints the transcript's background: draw it whole, compare the transcript's part.
            val at = SwingUtilities.convertPoint(transcript.parent, transcript.location, panel)
            val drawn = painted(panel).getSubimage(at.x, at.y, area.width, area.height)
            return (0 until area.height).all { y -> (0 until area.width).all { x -> screen.getRGB(x, y) == drawn.getRGB(x, y) } }
        }
        waitFor("the screen to show the last word as a full repaint draws it", timeoutMs = 15_000) {
            find<MarkdownView>(panel).any { it.plainText.contains("seven") } && same()
        }
    }

    @Test
    fun `a compaction is a divider`() {
        val notice = NoticeEntry(id = "n1", level = NoticeLevel.INFO, subtype = "compaction", text = "Conversation compacted")
        feed(listOf(ChatEvent.Notification("claude/entry", EntryNotification("ch-1", notice, 1))))
        assertTrue(text().contains("── Conversation compacted ──"), text())
    }
}
