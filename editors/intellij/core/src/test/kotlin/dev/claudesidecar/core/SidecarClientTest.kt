package dev.claudesidecar.core

import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.EditorTool
import dev.claudesidecar.core.protocol.ImageBlock
import dev.claudesidecar.core.protocol.ImageMediaType
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import kotlin.io.path.readText
import kotlin.io.path.writeText
import kotlin.time.Duration.Companion.seconds

/**
 * The protocol client core against the real daemon, the real Claude Code CLI and the stand-in
 * model (one per class): each test one behaviour, in its own HOME and workspace.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("the protocol client core")
class SidecarClientTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient
    private val pids = mutableSetOf<Long>()

    private val hello get() = box.workspace.resolve("hello.py")

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @BeforeEach fun setUp() {
        box = Sandbox(model)
        hello.writeText("print('hello')\n")
        client = box.client()
        pids.clear()
    }

    @AfterEach fun tearDown() {
        client.close()
        assertAllGone(synchronized(pids) { pids.toList() })
        box.close()
    }

    private fun test(body: suspend () -> Unit) = runBlocking { withTimeout(90.seconds) { body() } }

    private suspend fun open(): Recorder = record { client.openChat(NewChannelParams(cwd = box.cwd), it) }

    private suspend fun record(open: suspend (ChatListener) -> Chat) = Recorder(client, pids).start(open)

    @Test fun `an answer streams as text deltas that add up to the answer`() = test {
        val rec = open()
        val since = rec.mark()
        val ended = rec.turn("hello there")
        assertEquals(TurnOutcome.SUCCESS, ended.outcome)
        val text = rec.notifications(Notifications.DELTA, since).filter { it.kind == DeltaKind.TEXT }.map { it.text }
        assertTrue(text.size > 1, "several text deltas, got ${text.size}")
        assertEquals("Hello from the stand-in model.", text.joinToString(""))
        assertTrue(rec.notifications(Notifications.DELTA, since).any { it.kind == DeltaKind.THINKING }, "the thinking streamed too")
        assertTrue(rec.chat.totalCostUsd >= 0.0)
    }

    @Test fun `an image goes to the model with the text of the message`() = test {
        val rec = open()
        val png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
        val since = rec.mark()
        val messageId = rec.chat.send(
            "hello, what is in this picture?",
            listOf(ImageBlock(data = png, mediaType = ImageMediaType.IMAGE_PNG)),
        )
        assertEquals(TurnOutcome.SUCCESS, rec.next(Notifications.TURN_ENDED, since) { messageId in (it.messageIds ?: emptyList()) }.outcome)
        val prompt = rec.entries(since).filterIsInstance<PromptEntry>().last { it.id == messageId }
        assertEquals(PromptEntry(id = messageId, text = "hello, what is in this picture?", imageCount = 1), prompt)
        val sent = rec.events().first { it is ChatEvent.UserMessage }
        assertEquals(ChatEvent.UserMessage(messageId, "hello, what is in this picture?", 1), sent)
    }

    @Test fun `an allowed edit runs and is reported as a file update with its diff`() = test {
        val rec = open()
        val chat = rec.chat
        val since = rec.mark()
        chat.send("greet the world")
        val ask = rec.next(Notifications.PERMISSION_REQUEST, since)
        assertEquals("Edit", ask.toolName)
        assertTrue(Regex("(?m)^\\+print\\('hello, world'\\)$").containsMatchIn(ask.preview ?: ""), ask.preview)
        assertTrue(ask.requestId in chat.permissionRequests)
        chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
        val update = rec.next(Notifications.FILE_UPDATED, since)
        assertEquals(hello.toString(), update.path)
        assertTrue(Regex("(?m)^-print\\('hello'\\)$").containsMatchIn(update.diff ?: ""), update.diff)
        assertNull(update.oldContent, "the event stays small: the chat keeps the contents")
        assertEquals(FileContents(update.path, "print('hello')\n", "print('hello, world')\n"), chat.fileContents[update.seq])
        assertEquals(TurnOutcome.SUCCESS, rec.next(Notifications.TURN_ENDED, since).outcome)
        assertEquals("print('hello, world')\n", hello.readText())
        assertTrue(chat.permissionRequests.isEmpty())
    }

    @Test fun `a denied edit leaves the file as it was and the model gets the message`() = test {
        val rec = open()
        val since = rec.mark()
        rec.chat.send("greet the world")
        val ask = rec.next(Notifications.PERMISSION_REQUEST, since)
        rec.chat.respondPermission(ask.requestId, PermissionDecision.DENY, "keep it short")
        rec.next(Notifications.TURN_ENDED, since)
        assertEquals("print('hello')\n", hello.readText())
        assertTrue(rec.notifications(Notifications.FILE_UPDATED, since).isEmpty())
        val edit = rec.entries(since).filterIsInstance<ToolEntry>().last()
        assertEquals(ToolStatus.DENIED, edit.status)
        assertTrue("keep it short" in edit.result?.text.orEmpty(), "the deny message reached the conversation: ${edit.result}")
        assertTrue(rec.chat.permissionRequests.isEmpty())
    }

    @Test fun `an interrupt mid-stream ends the turn as interrupted and the next turn works`() = test {
        val rec = open()
        val since = rec.mark()
        rec.chat.send("tell me something long")
        rec.next(Notifications.DELTA, since) { it.kind == DeltaKind.TEXT }
        rec.chat.interrupt()
        assertEquals(TurnOutcome.INTERRUPTED, rec.next(Notifications.TURN_ENDED, since).outcome)
        assertEquals(TurnOutcome.SUCCESS, rec.turn("hello again").outcome)
    }

    @Test fun `a fork is a new chat with the whole conversation on its own session`() = test {
        val rec = open()
        rec.turn("hello there")
        val forked = record { client.forkChat(rec.chat, listener = it) }
        val fork = forked.chat
        assertNotEquals(rec.chat.sessionId, fork.sessionId)
        assertNotEquals(rec.chat.id, fork.id)
        assertEquals(listOf("hello there"), fork.prompts.map { it.text }, "the fork shows the history it copied")
        assertEquals(
            listOf("Bound", "Transcript"),
            forked.events().filter {
                it !is ChatEvent.Notification
            }.take(2).map { it.javaClass.simpleName },
            "the channel, then its conversation",
        )
        assertEquals(TurnOutcome.SUCCESS, forked.turn("hello from the fork").outcome)
        assertTrue(fork in client.chats.value)
    }

    @Test fun `a fork at a message keeps the conversation up to that exchange only`() = test {
        val rec = open()
        rec.turn("hello one")
        rec.turn("hello two")
        val forked = record { client.forkChat(rec.chat, rec.chat.prompts.first().messageId, it) }
        assertEquals(listOf("hello one"), forked.chat.prompts.map { it.text })
        val entries = forked.events().filterIsInstance<ChatEvent.Transcript>().single().transcript.entries
        assertEquals(1, entries.count { it is TurnEntry }, "the source was between turns: its footer came along")
        assertEquals(TurnOutcome.SUCCESS, forked.turn("hello three").outcome)
    }

    @Test fun `rewinding to a message restores the files after a dry run shows them`() = test {
        val rec = open()
        val since = rec.mark()
        val messageId = rec.chat.send("greet the world")
        val ask = rec.next(Notifications.PERMISSION_REQUEST, since)
        rec.chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
        rec.next(Notifications.TURN_ENDED, since)
        val dry = rec.chat.rewind(messageId, dryRun = true)
        assertTrue(dry.canRewind)
        assertEquals(listOf(hello.toString()), dry.filesChanged)
        assertEquals("print('hello, world')\n", hello.readText(), "a dry run changes nothing")
        val mark = rec.mark()
        rec.chat.rewind(messageId, dryRun = false)
        assertEquals("print('hello')\n", hello.readText())
        assertEquals(hello.toString(), rec.next(Notifications.FILE_UPDATED, mark) { it.toolName == "rewindFiles" }.path)
    }

    @Test fun `a stored session is resumed with its history, cost and context meter and goes on where it stopped`() = test {
        val first = open()
        first.turn("hello there")
        val second = first.turn("hello again")
        assertTrue(second.costUsd > 0 && second.context != null, "the turns cost something and fill the context")
        val sessionId = first.chat.sessionId!!
        first.chat.close()
        val sessions = client.listSessions(box.cwd)
        assertTrue(sessions.any { it.sessionId == sessionId }, "the session is listed")
        val rec = record { client.resumeChat(box.cwd, sessionId, listener = it) }
        val resumed = rec.chat
        val transcript = rec.events().filterIsInstance<ChatEvent.Transcript>().single().transcript
        val stored = transcript.entries.filterIsInstance<PromptEntry>().map { it.text }
        assertEquals(listOf("hello there", "hello again"), stored, "the stored conversation")
        assertEquals(sessionId, resumed.sessionId)
        assertEquals(listOf("hello there", "hello again"), resumed.prompts.map { it.text })
        // The cost and the meter as the live chat had them, before any turn of its own.
        assertEquals(second.totalCostUsd, resumed.totalCostUsd, 1e-9)
        assertEquals(second.context, resumed.context)
        val third = rec.turn("hello once more")
        assertEquals(TurnOutcome.SUCCESS, third.outcome)
        assertEquals(second.totalCostUsd + third.costUsd, resumed.totalCostUsd, 1e-9, "the total goes on")
        assertEquals(third.context, resumed.context)
        assertEquals(sessionId, resumed.sessionId)
    }

    @Test fun `a live channel's transcript holds the entries its notifications carried`() = test {
        val rec = open()
        rec.turn("hello there")
        val mark = rec.mark()
        rec.chat.reloadTranscript()
        val transcript = (rec.awaitEvent(mark) { it is ChatEvent.Transcript } as ChatEvent.Transcript).transcript
        assertEquals(rec.chat.channelId, transcript.channelId)
        assertEquals(rec.entries(), transcript.entries)
        val seqs = rec.notifications(Notifications.ENTRY).map { it.seq }
        assertTrue(transcript.seq >= seqs.max(), "current as of seq ${transcript.seq}, entries up to ${seqs.max()}")
    }

    @Test fun `the model's editor-tool call is answered by the client's handler`() = test {
        client.close()
        val calls = mutableListOf<Pair<JsonObject, String?>>()
        client = box.client(
            editorTools = listOf(
                EditorToolBinding(EditorTool(name = "getSelection", description = "The selected text.")) { args, chat ->
                    synchronized(calls) { calls += args to chat?.id }
                    mapOf("text" to "const x = 1;")
                },
            ),
        )
        val rec = open()
        val since = rec.mark()
        assertEquals(TurnOutcome.SUCCESS, rec.turn("look at my selection").outcome)
        assertEquals(listOf(JsonObject() to rec.chat.id), calls)
        val call = rec.entries(since).filterIsInstance<ToolEntry>().last { it.name == "mcp__editor__getSelection" }
        assertTrue("const x = 1;" in call.result?.text.orEmpty(), "the model got the handler's answer: ${call.result}")
    }

    @Test fun `when the daemon dies a new one takes over the chat on the same session`() = test {
        val rec = open()
        rec.turn("hello there")
        val sessionId = rec.chat.sessionId
        val old = client.daemon()
        val mark = rec.mark()
        ProcessHandle.of(old.pid).get().destroyForcibly()
        rec.awaitEvent(mark) { it is ChatEvent.Notice && "Resumed" in it.text }
        assertTrue(rec.events().drop(mark).any { it is ChatEvent.Bound })
        assertEquals(sessionId, rec.chat.sessionId)
        assertNotEquals(old.pid, client.daemon().pid)
        assertEquals(DaemonState.RUNNING, client.state.value)
        assertEquals(TurnOutcome.SUCCESS, rec.turn("hello after the crash").outcome)
        assertEquals(sessionId, rec.chat.sessionId, "the conversation went on in its session")
    }

    @Test fun `a daemon command that does not exist fails with an error naming the setting`() = test {
        client.close()
        val missing = box.root.resolve("no-such-daemon").toString()
        client = box.client(command = listOf(missing, "--stdio"))
        val e = assertThrows<SidecarException> { runBlocking { client.openChat(NewChannelParams(cwd = box.cwd)) } }
        assertEquals("daemonCommand", e.where)
        assertTrue("no-such-daemon" in e.message!! && "daemonCommand" in e.message!!, e.message)
        assertEquals(DaemonState.FAILED, client.state.value)
    }

    @Test fun `bad params come back as the daemon's invalidParams naming the field`() = test {
        val e = assertThrows<SidecarException> { runBlocking { client.openChat(NewChannelParams(cwd = "relative/path")) } }
        assertEquals("invalidParams", e.errorName)
        assertEquals(-32602, e.code)
        assertEquals("cwd", e.field)
        assertTrue("cwd" in e.message!!, e.message)
        client.runningDaemon?.let { synchronized(pids) { pids += it.pid } }
    }
}
