package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.EntryPermission
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.NoticeLevel
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.ProtocolJson
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.claudesidecar.core.protocol.Transcript as LiveTranscript

// The entry store, one rule each: upsert by id, append deltas, queued prompts last, a history
// or a live transcript in front, the client's own notices.

class TranscriptTest {
    private var seq = 0

    private fun entry(entry: Entry) = ChatEvent.Notification("claude/entry", EntryNotification("ch-1", entry, ++seq))

    private fun delta(entryId: String?, text: String, kind: DeltaKind = DeltaKind.TEXT) =
        ChatEvent.Notification("claude/delta", DeltaNotification("ch-1", 0, kind, ++seq, text, entryId = entryId))

    private fun text(id: String, text: String, streaming: Boolean? = null) = TextEntry(id = id, text = text, streaming = streaming)

    private fun prompt(id: String, queued: Boolean? = null) = PromptEntry(id = id, text = "prompt $id", queued = queued)

    private fun tool(id: String, status: ToolStatus, permission: EntryPermission? = null) =
        ToolEntry(id = id, name = "Edit", status = status, permission = permission)

    private fun play(vararg events: ChatEvent) = Transcript().apply { events.forEach { apply(it) } }

    private fun ids(t: Transcript) = t.entries.map { it.id() }

    @Test
    fun `events applied together name each entry they changed once, an entry new in them as added`() {
        val state = ChatState()
        state.apply(entry(prompt("p1")))
        val change = state.apply(
            listOf(
                entry(text("m:0", "", streaming = true)),
                delta("m:0", "Hel"),
                delta("m:0", "lo"),
                entry(text("m:1", "x")),
                delta("m:1", "y"),
            ),
        )
        assertEquals(listOf("m:0", "m:1"), change.added.toList())
        assertTrue(change.updated.isEmpty() && !change.reordered)
        val later = state.apply(listOf(delta("m:0", ","), delta("m:1", "z"), delta("m:0", " world")))
        assertEquals(listOf("m:0", "m:1"), later.updated.toList())
        assertTrue(later.added.isEmpty())
    }

    @Test
    fun `events applied together leave the transcript as applied one by one, the last state of each entry`() {
        val events = listOf(
            entry(prompt("p1")),
            entry(text("m:0", "", streaming = true)),
            delta("m:0", "Hel"),
            delta("m:0", "lo"),
            entry(prompt("p2", queued = true)),
            entry(text("m:0", "Hello.", streaming = false)),
            entry(prompt("p2")),
        )
        val together = ChatState()
        val change = together.apply(events)
        val oneByOne = play(*events.toTypedArray())
        assertEquals(oneByOne.entries, together.transcript.entries)
        assertEquals("Hello.", (together.transcript.entry("m:0") as TextEntry).text)
        assertTrue(change.reordered, "the queued prompt taken up moved: the batch says so")
    }

    @Test
    fun `an entry with a known id is replaced in place`() {
        val t = play(entry(prompt("p1")), entry(text("m:0", "draft")), entry(prompt("p2")), entry(text("m:0", "final")))
        assertEquals(listOf("p1", "m:0", "p2"), ids(t))
        assertEquals("final", (t.entries[1] as TextEntry).text)
    }

    @Test
    fun `a delta appends to its entry's text and changes that entry only`() {
        val t = play(entry(prompt("p1")), entry(text("m:0", "", streaming = true)), delta("m:0", "Hel"))
        val change = t.apply(delta("m:0", "lo"))
        assertEquals("Hello", (t.entry("m:0") as TextEntry).text)
        assertEquals(setOf("m:0"), change.updated)
        assertTrue(change.added.isEmpty() && !change.reordered)
    }

    @Test
    fun `a tool input delta appends to the tool's partial input`() {
        val t =
            play(
                entry(tool("toolu_1", ToolStatus.PENDING)),
                delta("toolu_1", "{\"a\":", DeltaKind.TOOL_INPUT),
                delta("toolu_1", "1}", DeltaKind.TOOL_INPUT),
            )
        assertEquals("{\"a\":1}", (t.entry("toolu_1") as ToolEntry).partialInput)
    }

    @Test
    fun `a delta without an entry it can append to changes nothing`() {
        val t = play(entry(text("m:0", "kept")))
        assertTrue(t.apply(delta(null, "lost")).isEmpty)
        assertTrue(t.apply(delta("m:9", "lost")).isEmpty)
        assertEquals("kept", (t.entry("m:0") as TextEntry).text)
    }

    @Test
    fun `a notice about the running turn goes before its prompt, and the answer streams on after it`() {
        val attached = ChatEvent.Notice(ChatEvent.Notice.Level.INFO, "Attached.", beforeTurn = true)
        val footer = TurnEntry(id = "turn:1", outcome = TurnOutcome.SUCCESS, costUsd = 0.01, durationMs = 1200, permissionWaitMs = 0)
        val t =
            play(
                entry(prompt("p1")),
                entry(text("m:0", "done")),
                entry(footer),
                entry(prompt("p2")),
                entry(text("m:1", "stre", streaming = true)),
            )
        val change = t.apply(attached)
        assertTrue(change.reordered)
        val notice = change.added.single()
        t.apply(delta("m:1", "aming"))
        t.apply(entry(text("m:2", "more")))
        assertEquals(listOf("p1", "m:0", "turn:1", notice, "p2", "m:1", "m:2"), ids(t))
        assertEquals("streaming", (t.entry("m:1") as TextEntry).text)
        // No turn running (it ended), or only a sub-agent's prompt after the main one: at the end, or before the main prompt.
        t.apply(entry(footer.copy(id = "turn:2")))
        assertEquals(t.apply(attached).added.single(), ids(t).last())
        val sub = play(entry(prompt("p1")), entry(PromptEntry(id = "p-sub", text = "sub-task", parentId = "toolu_1")))
        sub.apply(attached)
        assertEquals(listOf("p1", "p-sub"), ids(sub).drop(1))
    }

    @Test
    fun `a queued prompt is listed last until the CLI takes it up, then moves to the end`() {
        val t = play(entry(prompt("p1")), entry(prompt("p2", queued = true)), entry(text("m:0", "answer to p1")))
        assertEquals(listOf("p1", "m:0", "p2"), ids(t))
        t.apply(entry(text("m:1", "more")))
        assertEquals(listOf("p1", "m:0", "m:1", "p2"), ids(t))
        val change = t.apply(entry(prompt("p2")))
        assertTrue(change.reordered)
        t.apply(entry(text("m2:0", "answer to p2")))
        assertEquals(listOf("p1", "m:0", "m:1", "p2", "m2:0"), ids(t))
    }

    @Test
    fun `an entry of a kind this client does not know is skipped`() {
        val note = ProtocolJson.gson.fromJson(
            """{"channelId":"ch-1","seq":1,"entry":{"kind":"hologram","id":"h1","text":"x"}}""",
            EntryNotification::class.java,
        )
        val history = ProtocolJson.gson.fromJson(
            """{"sessionId":"s","messages":[],"warnings":[],"entries":[{"kind":"hologram","id":"h1"},{"kind":"prompt","id":"p1","text":"hi"}]}""",
            History::class.java,
        )
        val t = play(ChatEvent.Notification("claude/entry", note), ChatEvent.History(history))
        assertEquals(listOf("p1"), ids(t))
    }

    @Test
    fun `a stored history goes in front of the live entries`() {
        val history =
            History(
                messages = emptyList(),
                sessionId = "s",
                warnings = emptyList(),
                entries = listOf(prompt("old"), text("mo:0", "old answer")),
                hasMore = false,
                nextCursor = null,
            )
        val t = play(entry(prompt("p1")))
        assertTrue(t.apply(ChatEvent.History(history)).reordered)
        assertEquals(listOf("old", "mo:0", "p1"), ids(t))
    }

    @Test
    fun `a history's warnings are warning notices`() {
        val t = play(ChatEvent.History(History(emptyList(), false, emptyList(), "s", listOf("line 3: not valid JSON"), null)))
        val notice = t.entries.single() as NoticeEntry
        assertEquals(NoticeLevel.WARN, notice.level)
        assertEquals("history: line 3: not valid JSON", notice.text)
    }

    @Test
    fun `a live transcript replaces what it covers and skips the notifications it already has`() {
        val t = play(entry(prompt("p1")), entry(text("m:0", "", streaming = true)))
        val snapshot = LiveTranscript("ch-1", listOf(prompt("p1"), text("m:0", "Hello", streaming = true)), false, seq + 1, null)
        t.apply(ChatEvent.Transcript(snapshot))
        t.apply(delta("m:0", "Hello")) // numbered within the snapshot: already in it
        t.apply(delta("m:0", ", world"))
        assertEquals("Hello, world", (t.entry("m:0") as TextEntry).text)
    }

    @Test
    fun `a channel's transcript goes in front of what its notifications already added`() {
        val t = play(entry(prompt("p1")))
        t.apply(ChatEvent.Transcript(LiveTranscript("ch-1", listOf(prompt("old"), text("mo:0", "stored answer")), false, 0, null)))
        assertEquals(listOf("old", "mo:0", "p1"), ids(t))
    }

    @Test
    fun `a live transcript does not undo what a newer notification changed`() {
        val t = play(entry(text("m:0", "", streaming = true)), delta("m:0", "Hello"))
        t.apply(ChatEvent.Transcript(LiveTranscript("ch-1", listOf(text("m:0", "", streaming = true)), false, seq - 1, null)))
        assertEquals("Hello", (t.entry("m:0") as TextEntry).text)
    }

    private fun page(entries: List<Entry>, hasMore: Boolean) = LiveTranscript("ch-1", entries, hasMore, seq, null)

    @Test
    fun `an older page goes in front of the entries loaded, which stay as they were`() {
        val t = Transcript()
        t.apply(ChatEvent.Transcript(page(listOf(prompt("p3"), text("m:3", "three")), hasMore = true)))
        t.apply(entry(text("m:4", "four")))
        val change = t.apply(ChatEvent.OlderEntries(page(listOf(prompt("p1"), text("m:1", "one"), prompt("p2")), hasMore = false)))
        assertEquals(listOf("p1", "m:1", "p2"), change.inFront, "the page, in order, in front")
        assertEquals(setOf("p1", "m:1", "p2"), change.added)
        assertTrue(!change.reordered && change.updated.isEmpty(), "the entries loaded did not move")
        assertEquals(listOf("p1", "m:1", "p2", "p3", "m:3", "m:4"), ids(t))
        assertEquals(ids(t), t.keysInOrder.toList())
    }

    @Test
    fun `older pages applied together go in front in the order they came, the later one first`() {
        val state = ChatState()
        state.apply(ChatEvent.Transcript(page(listOf(prompt("p3")), hasMore = true)))
        val change = state.apply(
            listOf(
                ChatEvent.OlderEntries(page(listOf(prompt("p2")), hasMore = true)),
                ChatEvent.OlderEntries(page(listOf(prompt("p1")), hasMore = false)),
            ),
        )
        assertEquals(listOf("p1", "p2"), change.inFront)
        assertEquals(listOf("p1", "p2", "p3"), ids(state.transcript))
    }

    @Test
    fun `an older page naming an entry already loaded holds each entry once, in the page's order`() {
        val t = Transcript()
        t.apply(ChatEvent.Transcript(page(listOf(prompt("p2"), text("m:2", "two")), hasMore = true)))
        val change = t.apply(ChatEvent.OlderEntries(page(listOf(prompt("p1"), prompt("p2")), hasMore = false)))
        assertTrue(change.reordered && change.inFront.isEmpty(), "not a page in front of the rest: the view places all again")
        assertEquals(listOf("p1", "p2", "m:2"), ids(t))
    }

    private fun stored(entries: List<Entry>, cursor: String?) = History(
        entries = entries,
        hasMore = cursor != null,
        messages = emptyList(),
        sessionId = "s",
        warnings = emptyList(),
        nextCursor = cursor,
    )

    @Test
    fun `a stored page shown before its channel says where the page before it is, until the channel's page replaces it`() {
        val t = Transcript()
        t.apply(ChatEvent.Preview(stored(listOf(prompt("p3"), text("m:3", "three")), cursor = "c3"), cwd = "/w"))
        assertEquals("c3", t.storedCursor)
        assertTrue(t.hasOlder)
        t.apply(ChatEvent.Transcript(page(listOf(prompt("p3"), text("m:3", "three")), hasMore = true)))
        assertEquals(null, t.storedCursor, "the channel pages its own")
    }

    @Test
    fun `an older stored page goes in front of the stored page shown, and says where the next one is`() {
        val t = Transcript()
        t.apply(ChatEvent.Preview(stored(listOf(prompt("p3"), text("m:3", "three")), cursor = "c3"), cwd = "/w"))
        t.openFailed("the CLI ended", emptyList())
        val change = t.apply(ChatEvent.OlderHistory(stored(listOf(prompt("p2"), text("m:2", "two")), cursor = "c2")))
        assertEquals(listOf("p2", "m:2"), change.inFront, "the page, in order, in front")
        assertEquals("c2", t.storedCursor)
        assertTrue(t.hasOlder)
        t.apply(ChatEvent.OlderHistory(stored(listOf(prompt("p1")), cursor = null)))
        assertEquals(listOf("p1", "p2", "m:2", "p3", "m:3"), ids(t).filter { !it.startsWith("client") })
        assertEquals(null, t.storedCursor)
        assertTrue(!t.hasOlder, "the first entry is shown")
    }

    @Test
    fun `the client's own notices are entries of subtype client`() {
        val t = play(ChatEvent.Notice(ChatEvent.Notice.Level.WARN, "the daemon stopped; restarting it."))
        val notice = t.entries.single() as NoticeEntry
        assertEquals(Transcript.CLIENT_NOTICE, notice.subtype)
        assertEquals(NoticeLevel.WARN, notice.level)
    }
}
