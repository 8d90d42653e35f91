package dev.claudesidecar.core.transcript

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.AskState
import dev.claudesidecar.core.protocol.AutoDecision
import dev.claudesidecar.core.protocol.CancelReason
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.EntryPermission
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.PermissionCancelledNotification
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import dev.claudesidecar.core.protocol.Transcript as LiveTranscript

// What the client keeps beside the entries: pending asks, file updates, the status, the folder.

class ChatStateTest {
    private var seq = 0

    private fun entry(entry: Entry) = ChatEvent.Notification("claude/entry", EntryNotification("ch-1", entry, ++seq))

    private fun tool(id: String, status: ToolStatus, permission: EntryPermission? = null) =
        ToolEntry(id = id, name = "Edit", status = status, permission = permission)

    private fun play(vararg events: ChatEvent) = ChatState().apply { events.forEach { apply(it) } }

    private fun ask(requestId: String, toolUseId: String, auto: AutoDecision? = null) = ChatEvent.Notification(
        "claude/permissionRequest",
        PermissionRequestNotification(
            channelId = "ch-1",
            input = JsonObject(),
            requestId = requestId,
            seq = ++seq,
            suggestions = emptyList(),
            toolName = "Edit",
            toolUseId = toolUseId,
            autoDecision = auto,
        ),
    )

    @Test
    fun `a permission request is pending until its tool's entry says how it went`() {
        val pending = EntryPermission(decision = AskState.PENDING, requestId = "r1")
        val t = play(entry(tool("toolu_1", ToolStatus.AWAITING_PERMISSION, pending)), ask("r1", "toolu_1"))
        assertEquals(setOf("r1"), t.pending.keys)
        t.apply(entry(tool("toolu_1", ToolStatus.RUNNING, pending.copy(decision = AskState.ANSWERED))))
        assertTrue(t.pending.isEmpty())
    }

    @Test
    fun `a permission request the channel's transcript shows answered is not pending`() {
        val answered = EntryPermission(decision = AskState.ANSWERED, requestId = "r1")
        val t = play(ask("r1", "toolu_1"))
        t.apply(ChatEvent.Transcript(LiveTranscript("ch-1", listOf(tool("toolu_1", ToolStatus.RUNNING, answered)), false, seq, null)))
        assertTrue(t.pending.isEmpty())
    }

    @Test
    fun `a cancelled, an auto-allowed, or an old channel's permission request is not pending`() {
        assertTrue(play(ask("r1", "toolu_1", auto = AutoDecision.ALLOW)).pending.isEmpty())
        val cancelled = ChatEvent.Notification(
            "claude/permissionCancelled",
            PermissionCancelledNotification("ch-1", CancelReason.entries.first(), "r1", ++seq),
        )
        assertTrue(play(ask("r1", "toolu_1"), cancelled).pending.isEmpty())
        val rebound = play(ChatEvent.Bound("ch-1", "s", "/p"), ask("r1", "toolu_1"), ChatEvent.Bound("ch-2", "s", "/p"))
        assertTrue(rebound.pending.isEmpty())
    }

    @Test
    fun `a tool's file updates are kept under its key, a rewind's under a notice of its own`() {
        fun update(toolUseId: String?) = ChatEvent.Notification(
            "claude/fileUpdated",
            FileUpdatedNotification("ch-1", "/p/a.txt", ++seq, "Edit", "@@ -1 +1 @@\n-a\n+b\n", null, null, null, null, null, toolUseId),
        )
        val t = play(entry(tool("toolu_1", ToolStatus.RUNNING)))
        assertEquals(setOf("toolu_1"), t.apply(update("toolu_1")).updated)
        assertEquals(1, t.fileUpdates("toolu_1").size)
        val change = t.apply(update(null))
        val notice = t.transcript.entries.last() as NoticeEntry
        assertEquals("fileChanged", notice.subtype)
        assertEquals(setOf(notice.id), change.added)
        assertEquals("/p/a.txt", t.fileUpdates(notice.id).single().path)
    }

    @Test
    fun `the status line's state comes from claude status`() {
        val status = JsonParser.parseString(
            """{"method":"claude/status","params":{"channelId":"ch-1","seq":1,"state":"running","sessionId":"s","model":"m1","permissionMode":"plan"}}""",
        )
        val t = play(Fixtures.notification(status))
        assertEquals("m1", t.status.model)
        assertEquals("plan", t.status.permissionMode)
        assertFalse(t.status.state == null)
    }

    @Test
    fun `a chat that cannot open ends with the reason, its waiting prompts after it, not sent and no longer queued`() {
        val t = play(entry(PromptEntry(id = "p1", text = "stored")))
        t.waiting("w1", "first")
        t.waiting("w2", "second")
        val change = t.openFailed("the CLI exited", listOf("w1", "w2"))
        val entries = t.transcript.entries
        assertEquals(listOf("p1", "w1", "w2"), entries.filterIsInstance<PromptEntry>().map { it.id })
        assertEquals("${ChatState.OPEN_FAILED_PREFIX}the CLI exited", (entries[1] as NoticeEntry).text, "the reason before the prompts")
        assertTrue(entries.filterIsInstance<PromptEntry>().none { it.queued == true }, "none queued: nothing will send them")
        assertEquals(listOf("first", "second"), entries.drop(2).map { (it as PromptEntry).text }, "their text kept, in order")
        assertEquals("the CLI exited", t.notSentBecause("w1"))
        assertEquals(null, t.notSentBecause("p1"), "a prompt of the conversation was not refused")
        assertEquals("the CLI exited", t.status.openFailure)
        assertEquals(setOf(entries[1].let { (it as NoticeEntry).id }), change.added, "the notice is new")
        assertEquals(setOf("w1", "w2"), change.updated, "the prompts are drawn again")
        assertTrue(change.reordered, "the prompts moved out of the queue")
    }

    @Test
    fun `a prompt waiting for a chat not refused is not marked not sent`() {
        val t = ChatState()
        t.waiting("w1", "first")
        assertEquals(null, t.notSentBecause("w1"))
        assertEquals(null, t.status.openFailure)
    }

    @Test
    fun `the folder is the bound channel's`() {
        assertEquals("/p", play(ChatEvent.Bound("ch-1", "s", "/p")).cwd)
    }
}
