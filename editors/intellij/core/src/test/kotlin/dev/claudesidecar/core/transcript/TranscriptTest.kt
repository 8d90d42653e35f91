package dev.claudesidecar.core.transcript

import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.HistoryMessage
import dev.claudesidecar.core.protocol.HistoryMessageKind
import dev.claudesidecar.core.protocol.HistoryPermission
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.ProtocolJson
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.protocol.orUnknown
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

// The transcript reducer over the notification streams recorded from the real daemon, CLI
// and stand-in model (the VS Code client's fixtures), as core delivers them.

class TranscriptTest {
    private fun play(events: List<ChatEvent>, transcript: Transcript = Transcript()) = transcript.apply { events.forEach { apply(it) } }

    private fun chat(name: String) = play(Fixtures.chatEvents(name))

    private fun kinds(t: Transcript) = t.entries.map {
        when (it) {
            is UserEntry -> "user"
            is TextEntry -> if (it.thinking) "thinking" else "text"
            is ToolEntry -> "tool:${it.name}"
            is TurnEntry -> "turn"
            is NoticeEntry -> "notice"
            is FileEntry -> "file"
        }
    }

    private fun tool(t: Transcript, name: String) = t.entries.filterIsInstance<ToolEntry>().first { it.name == name }

    private fun texts(t: Transcript, thinking: Boolean) = t.entries.filterIsInstance<TextEntry>().filter { it.thinking == thinking }

    private fun firstIndex(events: List<ChatEvent>, method: String) =
        events.indexOfFirst { it is ChatEvent.Notification && it.method == method }

    @Test
    fun `a streamed answer shows the prompt once, the thinking, the answer and the footer`() {
        val t = chat("streamed-thinking")
        assertEquals(listOf("user", "thinking", "text", "turn"), kinds(t))
        assertEquals("write a palindrome check", (t.entries[0] as UserEntry).text)
        assertEquals(Fixtures.finalTexts("streamed-thinking", "thinking")[0], texts(t, true)[0].text.toString())
        val answer = texts(t, false).single()
        assertEquals(Fixtures.finalTexts("streamed-thinking", "text")[0], answer.text.toString())
        assertTrue(!answer.streaming && !texts(t, true)[0].streaming)
        val turn = t.entries.last() as TurnEntry
        assertEquals(TurnOutcome.SUCCESS, turn.outcome)
        assertTrue(turn.costUsd > 0 && turn.durationMs > 0)
        assertEquals(ChannelState.IDLE, t.status.state)
        assertEquals(turn.costUsd, t.totalCostUsd)
    }

    @Test
    fun `deltas stream into the open block and change only it`() {
        val events = Fixtures.chatEvents("streamed-thinking")
        val t = Transcript()
        var streamed = ""
        var deltaChanges = 0
        for (event in events) {
            val change = t.apply(event)
            val text = texts(t, false).firstOrNull()
            if (text?.streaming == true) streamed = text.text.toString()
            if ((event as? ChatEvent.Notification)?.params is DeltaNotification && text?.streaming == true && text.text.isNotEmpty()) {
                assertEquals(emptyList<Entry>(), change.added)
                assertTrue(change.updated.size == 1, "a delta changed ${change.updated.size} entries")
                deltaChanges++
            }
        }
        val final = Fixtures.finalTexts("streamed-thinking", "text")[0]
        assertTrue(streamed.isNotEmpty() && final.startsWith(streamed), "the text never streamed")
        assertTrue(deltaChanges > 1)
    }

    @Test
    fun `a Write is pending with its preview, then answered, then allowed with its file update`() {
        val t = Transcript()
        val seen = mutableListOf<String>()
        for (event in Fixtures.chatEvents("write-allowed")) {
            t.apply(event)
            val write = t.entries.filterIsInstance<ToolEntry>().firstOrNull() ?: continue
            val mark = "${write.status}/${write.permission?.state ?: "-"}/${t.pending.size}"
            if (seen.lastOrNull() != mark) seen += mark
        }
        assertEquals(listOf("PENDING/-/0", "RUNNING/-/0", "PENDING/PENDING/1", "RUNNING/ANSWERED/0", "DONE/ALLOWED/0"), seen)
        val write = tool(t, "Write")
        assertEquals("/home/dev/project/README.md", write.input?.get("file_path")?.asString)
        assertTrue(Regex("(?m)^\\+A tiny web shop\\.$").containsMatchIn(write.permission?.preview ?: ""))
        assertTrue(write.result!!.text.contains("updated successfully"))
        assertEquals(listOf(t.files.single().seq), write.fileUpdates)
        assertTrue(!write.result!!.details.toString().contains("originalFile"))
        assertEquals(listOf("user", "text", "tool:Write", "text", "turn"), kinds(t))
    }

    @Test
    fun `an Edit denied with a reason keeps its diff and shows the reason`() {
        val t = chat("edit-denied")
        val edit = tool(t, "Edit")
        assertEquals(ToolStatus.DENIED, edit.status)
        assertEquals(PermissionState.DENIED, edit.permission?.state)
        assertEquals("Keep the greeting short.", edit.result?.text)
        assertTrue(Regex("(?m)^\\+print\\('hello, world'\\)$").containsMatchIn(edit.permission?.preview ?: ""))
        assertTrue(t.files.isEmpty() && t.pending.isEmpty())
        assertEquals(listOf("user", "tool:Edit", "text", "turn"), kinds(t))
    }

    @Test
    fun `an interrupted answer is kept, marked aborted, with an interrupted footer`() {
        val t = chat("interrupted")
        assertEquals(listOf("user", "text", "turn"), kinds(t))
        val text = texts(t, false).single()
        assertTrue(text.aborted && !text.streaming)
        assertEquals(Fixtures.finalTexts("interrupted", "text")[0], text.text.toString())
        assertEquals(TurnOutcome.INTERRUPTED, (t.entries.last() as TurnEntry).outcome)
        assertNull((t.entries.last() as TurnEntry).error)
    }

    @Test
    fun `an AskUserQuestion is pending with its questions, then done with the answers`() {
        val events = Fixtures.chatEvents("ask-question")
        val asked = firstIndex(events, "claude/permissionRequest")
        val t = play(events.subList(0, asked + 2))
        val request = t.pending.values.single()
        assertEquals(true, request.requiresUserInteraction)
        assertEquals(2, request.input.getAsJsonArray("questions").size())
        assertEquals(ChannelState.AWAITING_PERMISSION, t.status.state)
        play(events.subList(asked + 2, events.size), t)
        val ask = tool(t, "AskUserQuestion")
        assertEquals(ToolStatus.DONE, ask.status)
        assertEquals(PermissionState.ALLOWED, ask.permission?.state)
        val answers = ask.result!!.details!!.asJsonObject.getAsJsonObject("answers")
        assertEquals("Blue", answers["Which colour should the button be?"].asString)
        assertEquals("hover, focus", answers["Which states need styles?"].asString)
    }

    @Test
    fun `Bash output, an API error, a plan and a sub-agent`() {
        val bash = tool(chat("bash-output"), "Bash")
        assertEquals(ToolStatus.DONE, bash.status)
        assertEquals((1..12).joinToString("\n"), bash.result?.text)

        val failed = chat("api-error")
        assertEquals(listOf("user", "turn"), kinds(failed))
        assertTrue((failed.entries.last() as TurnEntry).error!!.contains("API Error: 500 scripted failure"))

        val plan = chat("plan-approved")
        assertEquals("acceptEdits", plan.status.permissionMode)
        assertEquals(ToolStatus.DONE, tool(plan, "ExitPlanMode").status)
        assertTrue(tool(plan, "ExitPlanMode").input!!["plan"].asString.startsWith("# Greeting plan"))
        assertEquals(1, tool(plan, "Write").fileUpdates.size)

        val agent = chat("sub-agent")
        assertEquals(tool(agent, "Agent").toolUseId, tool(agent, "Bash").parentToolUseId)
        assertEquals("hi", tool(agent, "Bash").result?.text)
        assertEquals(1, agent.entries.count { it is UserEntry }, "the sub-agent's prompt is not a user message")
    }

    @Test
    fun `a prompt sent while a turn runs waits until the CLI takes it up`() {
        val events = Fixtures.chatEvents("streamed-thinking")
        val firstDelta = firstIndex(events, "claude/delta")
        val t = play(events.subList(0, firstDelta))
        t.apply(ChatEvent.UserMessage("second", "and another", 0))
        assertEquals(1, t.queued.size)
        play(events.subList(firstDelta, events.size), t)
        assertTrue(t.queued.isEmpty())
        assertEquals(listOf("user", "thinking", "text", "turn", "user"), kinds(t))
    }

    @Test
    fun `permission requests auto-allowed, cancelled, or dropped by a new channel are not pending`() {
        fun request(auto: Boolean) = ChatEvent.Notification(
            "claude/permissionRequest",
            PermissionRequestNotification(
                channelId = "ch-1",
                input = JsonObject(),
                requestId = "r1",
                seq = 1,
                suggestions = emptyList(),
                toolName = "Read",
                toolUseId = "toolu_1",
                autoDecision = if (auto) dev.claudesidecar.core.protocol.AutoDecision.ALLOW else null,
            ),
        )
        assertTrue(play(listOf(request(auto = true))).pending.isEmpty())
        val restarted = play(listOf(ChatEvent.Bound("ch-1", "s", "/p"), request(auto = false), ChatEvent.Bound("ch-2", "s", "/p")))
        assertTrue(restarted.pending.isEmpty())
        assertEquals(PermissionState.CANCELLED, tool(restarted, "Read").permission?.state)
    }

    @Test
    fun `a history comes first, live entries after it`() {
        val history = History(
            messages = listOf(
                HistoryMessage(HistoryMessageKind.USER_PROMPT, "u1", text = "write a readme please"),
                HistoryMessage(HistoryMessageKind.TOOL_USE, "a1", toolName = "Edit", toolUseId = "toolu_h1"),
                HistoryMessage(
                    HistoryMessageKind.TOOL_RESULT,
                    "r1",
                    toolUseId = "toolu_h1",
                    text = "No.",
                    isError = true,
                    permission = HistoryPermission.DENIED,
                ),
                HistoryMessage(HistoryMessageKind.ASSISTANT_TEXT, "a2", text = "Done."),
            ),
            sessionId = "s",
            warnings = emptyList(),
        )
        val t = Transcript()
        t.apply(ChatEvent.Bound("ch-1", "s", "/p"))
        t.apply(ChatEvent.Notice(ChatEvent.Notice.Level.INFO, "Resumed"))
        assertTrue(t.apply(ChatEvent.History(history)).rebuilt)
        play(Fixtures.chatEvents("bash-output"), t)
        assertEquals(listOf("user", "tool:Edit", "text", "notice", "user"), kinds(t).take(5))
        assertEquals("u1", (t.entries[0] as UserEntry).messageId)
        assertEquals(ToolStatus.DENIED, tool(t, "Edit").status)
        assertEquals(ToolStatus.DONE, tool(t, "Bash").status, "live tool results still find their call")
    }

    @Test
    fun `a delta or history message of a kind this client does not know is skipped`() {
        // A newer daemon's kind: Gson reads it as null, whatever the Kotlin type says.
        val delta = ProtocolJson.gson.fromJson(
            """{"channelId":"ch-1","index":0,"kind":"newKind","seq":1,"text":"x"}""",
            DeltaNotification::class.java,
        )
        val message = ProtocolJson.gson.fromJson("""{"kind":"newKind","uuid":"n1","text":"x"}""", HistoryMessage::class.java)
        assertNull(delta.kind.orUnknown())
        val t = Transcript()
        t.apply(ChatEvent.History(History(listOf(message), "s", emptyList())))
        t.apply(ChatEvent.Notification("claude/delta", delta))
        assertTrue(t.entries.isEmpty())
    }

    @Test
    fun `appending a long stream costs time proportional to the deltas`() {
        val t = play(Fixtures.chatEvents("interrupted").take(12))
        val open = texts(t, false).single()
        val delta = ChatEvent.Notification("claude/delta", DeltaNotification(t.channelId!!, 0, DeltaKind.TEXT, 0, "word "))
        val started = System.nanoTime()
        repeat(200_000) { t.apply(delta) }
        val ms = (System.nanoTime() - started) / 1_000_000
        assertTrue(open.text.length >= 1_000_000)
        assertTrue(ms < 1500, "200k deltas took $ms ms")
    }
}
