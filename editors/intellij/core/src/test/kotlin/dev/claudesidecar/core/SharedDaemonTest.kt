package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.CancelReason
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.io.path.readText
import kotlin.io.path.writeText
import kotlin.time.Duration.Companion.seconds

/**
 * The client on the shared daemon (`claude-sidecar serve` on a socket of its own per test,
 * reached through `claude-sidecar connect`), against the real CLI and the stand-in model: a
 * chat another client started is attached with its history, a dropped connection is made
 * again and the chat gets exactly what it missed, a permission answered elsewhere leaves.
 *
 * The answer to "long" streams [HELD], then waits until a prompt "go on" reaches the model
 * (from another chat: [release]), then streams [REST]: the test decides when it goes on.
 */
@DisplayName("the client on the shared daemon")
class SharedDaemonTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var daemon: SharedDaemon
    private val clients = mutableListOf<SidecarClient>()
    private val pids = mutableSetOf<Long>()

    @BeforeEach fun setUp() {
        // One per test: a "go on" of an earlier test would release this one's held answer.
        model = Model.start("/shared-scenario.json")
        box = Sandbox(model)
        box.workspace.resolve("hello.py").writeText("print('hello')\n")
        pids.clear()
        clients.clear()
    }

    @AfterEach fun tearDown() {
        try {
            clients.forEach { it.close() }
            if (::daemon.isInitialized) daemon.close()
            assertAllGone(synchronized(pids) { pids.toList() })
        } finally {
            box.close()
            model.close()
        }
    }

    private fun test(body: suspend () -> Unit) = runBlocking { withTimeout(120.seconds) { body() } }

    private fun serve(vararg args: String) = SharedDaemon(box, *args).also { daemon = it }

    /** A client of the shared daemon named [name] (the name other clients see in `clients`). */
    private fun shared(name: String, command: List<String> = daemon.connect) =
        box.client(command = command, mode = DaemonMode.SHARED, clientName = name).also { clients += it }

    private suspend fun record(client: SidecarClient, open: suspend (ChatListener) -> Chat) = Recorder(client, pids).start(open)

    private suspend fun newChat(client: SidecarClient) = record(client) { client.openChat(NewChannelParams(cwd = box.cwd), it) }

    /** Lets the held answer go on: "go on" reaches the model from a new chat of [client]. */
    private suspend fun release(client: SidecarClient) {
        newChat(client).turn("go on")
    }

    /** Sends "long" and waits until its first part streamed. */
    private suspend fun streamHeld(rec: Recorder, before: List<String> = emptyList()) {
        rec.chat.send("long")
        rec.awaitTexts(before + HELD)
    }

    @Test fun `attaching shows a chat another client started, with its history, then its stream`() = test {
        serve()
        val editor = shared("editor-a")
        val first = newChat(editor)
        first.turn("hello there")
        val since = first.mark()
        streamHeld(first, listOf(GREETING))

        val other = shared("editor-b")
        val running = other.runningChats()
        val listed = running.single()
        assertEquals(first.chat.channelId, listed.channelId)
        assertEquals(ChannelState.RUNNING, listed.state)
        assertEquals(listOf("editor-a"), listed.clients?.map { it.clientName })
        val second = record(other) { other.attachChat(listed, it) }

        val snapshot = second.events().filterIsInstance<ChatEvent.Transcript>().single().transcript
        assertEquals(listOf("hello there", "long"), snapshot.entries.filterIsInstance<PromptEntry>().map { it.text }, "the history")
        assertEquals(listOf(GREETING, HELD), second.texts(), "the answer so far")
        assertEquals(ChannelState.RUNNING, second.view { it.status.state })
        assertEquals(
            listOf("Bound", "Transcript", "Notice"),
            second.events().filter {
                it !is ChatEvent.Notification
            }.map { it.javaClass.simpleName },
        )
        assertEquals(listOf("Attached: the chat goes on from here."), second.notices())
        assertEquals(listed.sessionId, second.chat.sessionId)

        release(other)
        second.next(Notifications.TURN_ENDED, 0)
        first.next(Notifications.TURN_ENDED, since)
        second.awaitTexts(listOf(GREETING, HELD, REST))
        assertEquals(first.texts(), second.texts(), "the rest streamed into both alike")
        second.awaitState(ChannelState.IDLE)
        assertEquals(listOf("editor-a", "editor-b"), other.runningChats().first().clients?.mapNotNull { it.clientName }?.sorted())
        assertEquals(TurnOutcome.SUCCESS, second.turn("hello from the second editor").outcome, "either editor may send")
        first.awaitTexts(listOf(GREETING, HELD, REST, GREETING))
    }

    @Test fun `a dropped connection is made again and the chat gets exactly what it missed`() = test {
        serve()
        val (rec, watcher) = dropUntilTheTurnEnded()
        assertEquals(TurnOutcome.SUCCESS, rec.next(Notifications.TURN_ENDED, 0).outcome, "replayed")
        assertEquals(listOf(HELD, REST), rec.texts(), "nothing lost, nothing twice")
        assertEquals(watcher.texts(), rec.texts())
        val deltas = rec.notifications(Notifications.DELTA).filter { it.kind == DeltaKind.TEXT }
        assertEquals(HELD + REST, deltas.joinToString("") { it.text }, "every delta once")
        val seqs = rec.events().filterIsInstance<ChatEvent.Notification>().map { seqOf(it) }
        assertEquals(seqs.sorted().distinct(), seqs, "in order, none twice")
        val notices = rec.notices()
        assertEquals(1, notices.count { "dropped" in it }, "said once: $notices")
        assertTrue(notices.any { Regex("Connected again; caught up with [1-9]\\d* missed updates").matches(it.trimEnd('.')) }, "$notices")
        assertTrue(notices.none { "afresh" in it }, "replayed, not shown afresh: $notices")
        rec.awaitState(ChannelState.IDLE)
    }

    @Test fun `a chat whose missed updates left the replay window is shown afresh`() = test {
        serve("--replay-window", "0.0001") // about 100 bytes: less than one turn
        val (rec, watcher) = dropUntilTheTurnEnded()
        assertEquals(listOf(HELD, REST), rec.texts())
        assertEquals(watcher.texts(), rec.texts())
        assertTrue(rec.notices().any { "shown afresh" in it }, "${rec.notices()}")
        rec.awaitState(ChannelState.IDLE) // its state asked again
    }

    /**
     * Kills the bridge of a client whose chat streams the held answer and keeps its connection
     * down (the next command it runs never answers `initialize`) until a watcher attached to the
     * chat saw the answer end; then lets it connect again and waits until its chat caught up.
     * A request made meanwhile waits for the chat to be attached again.
     */
    private suspend fun dropUntilTheTurnEnded(): Pair<Recorder, Recorder> = coroutineScope {
        val command = box.root.resolve("daemon-command")
        command.writeText(daemon.connect.joinToString(" "))
        val editor = shared("editor", listOf("sh", "-c", "exec \$(cat '$command')"))
        val rec = newChat(editor)
        streamHeld(rec)
        val watcherClient = shared("watcher")
        val watcher = record(watcherClient) { watcherClient.attachChat(watcherClient.runningChats().single(), it) }
        watcher.awaitTexts(listOf(HELD))

        command.writeText("sleep 600")
        val bridge = editor.runningDaemon!!.pid
        val mark = rec.mark()
        ProcessHandle.of(bridge).get().destroyForcibly()
        rec.awaitEvent(mark) { it is ChatEvent.Notice && "dropped" in it.text }
        val standIn = awaitSleeper()
        assertEquals(DaemonState.RECONNECTING, editor.state.value)
        assertTrue(rec.view { it.status.reconnecting }, "the chat's status says it is reconnecting")
        val waiting = async { rec.chat.reloadTranscript() }
        release(watcherClient)
        watcher.next(Notifications.TURN_ENDED, 0)
        assertTrue(!waiting.isCompleted, "the request waits for the connection")

        command.writeText(daemon.connect.joinToString(" "))
        standIn.destroyForcibly()
        rec.awaitEvent(mark) { it is ChatEvent.Notice && it.text.startsWith("Connected again") }
        rec.awaitEvent(mark) { it == ChatEvent.Connection(reconnecting = false) }
        assertFalse(rec.view { it.status.reconnecting }, "and no more once attached again")
        waiting.await()
        assertEquals(DaemonState.RUNNING, editor.state.value)
        assertEquals(watcher.chat.channelId, rec.chat.channelId, "the same chat, not a new one")
        rec to watcher
    }

    @Test fun `a chat being attached again is found by its channel, and attaching to it gives that chat`() = test {
        serve()
        val command = box.root.resolve("daemon-command")
        command.writeText(daemon.connect.joinToString(" "))
        val editor = shared("editor", listOf("sh", "-c", "exec \$(cat '$command')"))
        val rec = newChat(editor)
        rec.turn("hello there")
        val channelId = rec.chat.channelId!!
        val listed = editor.runningChats().single()

        command.writeText("sleep 600") // the connection stays down until the test restores the command
        val mark = rec.mark()
        ProcessHandle.of(editor.runningDaemon!!.pid).get().destroyForcibly()
        rec.awaitEvent(mark) { it is ChatEvent.Notice && "dropped" in it.text }
        val standIn = awaitSleeper()
        assertSame(rec.chat, editor.chatOf(channelId), "found while it is being attached again")
        coroutineScope {
            val attaching = async(start = CoroutineStart.UNDISPATCHED) { editor.attachChat(listed) }
            assertFalse(attaching.isCompleted, "attaching waits for the connection")
            command.writeText(daemon.connect.joinToString(" "))
            standIn.destroyForcibly()
            assertSame(rec.chat, attaching.await(), "the chat being attached again, not a second copy of it")
        }
        assertEquals(listOf(rec.chat), editor.chats.value)
        assertFalse(rec.view { it.status.reconnecting })
        assertEquals(TurnOutcome.SUCCESS, rec.turn("hello again").outcome)
        assertEquals(listOf(GREETING, GREETING), rec.texts())
    }

    /** The `sleep 600` the client runs instead of its bridge, once it runs. */
    private suspend fun awaitSleeper(): ProcessHandle {
        while (true) {
            ProcessHandle.current().descendants().filter { p ->
                p.info().command().orElse("").endsWith("/sleep") && p.info().arguments().orElse(emptyArray()).contentEquals(arrayOf("600"))
            }.findFirst().orElse(null)?.let { return it }
            // Polls: the client spawns it on its own schedule (the reconnect's pause).
            delay(20)
        }
    }

    private fun seqOf(event: ChatEvent.Notification): Int = event.params.javaClass.getMethod("getSeq").invoke(event.params) as Int

    @Test fun `a restarted client opening the session of a running chat attaches to it`() = test {
        serve()
        val before = shared("before")
        val first = newChat(before)
        first.turn("hello there")
        streamHeld(first, listOf(GREETING))
        val sessionId = first.chat.sessionId!!
        val channelId = first.chat.channelId
        val cliPid = first.chat.pid
        before.close() // the connection ends; the chat runs on in the daemon

        val after = shared("after")
        val rec = record(after) { after.resumeChat(box.cwd, sessionId, listener = it) }
        assertEquals(channelId, rec.chat.channelId, "the running chat, not a second CLI")
        assertEquals(cliPid, rec.chat.pid)
        assertEquals(listOf(GREETING, HELD), rec.texts())
        assertTrue("This session was still running in the daemon: attached to it." in rec.notices(), "${rec.notices()}")
        release(after)
        rec.next(Notifications.TURN_ENDED, 0)
        rec.awaitTexts(listOf(GREETING, HELD, REST))
        rec.awaitState(ChannelState.IDLE)
    }

    @Test fun `a permission answered in another client leaves this one's pending requests`() = test {
        serve()
        val editor = shared("editor-a")
        val first = newChat(editor)
        first.chat.send("greet the world")
        val ask = first.next(Notifications.PERMISSION_REQUEST, 0)
        val other = shared("editor-b")
        val second = record(other) { other.attachChat(other.runningChats().single(), it) }
        assertEquals(setOf(ask.requestId), second.chat.permissionRequests.keys, "the pending request, from the attach answer")
        assertEquals(setOf(ask.requestId), second.view { it.pending.keys })

        second.chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
        val cancelled = first.next(Notifications.PERMISSION_CANCELLED, 0)
        assertEquals(CancelReason.ANSWERED_ELSEWHERE, cancelled.reason)
        first.awaitEvent(0) { it is ChatEvent.Notice && it.text == "Edit: answered in another editor." }
        assertTrue(first.chat.permissionRequests.isEmpty())
        assertTrue(first.view { it.pending.isEmpty() }, "the card is gone")
        first.next(Notifications.TURN_ENDED, 0)
        second.next(Notifications.TURN_ENDED, 0)
        assertEquals("print('hello, world')\n", box.workspace.resolve("hello.py").readText())
        assertTrue(second.notices().none { "another editor" in it }, "the client that answered says nothing: ${second.notices()}")
        val late = assertThrows<SidecarException> { runBlocking { first.chat.respondPermission(ask.requestId, PermissionDecision.DENY) } }
        assertEquals("permissionRequestNotFound", late.errorName)
    }

    @Test fun `a detached chat runs on in the daemon and can be attached again`() = test {
        serve()
        val editor = shared("editor")
        val first = newChat(editor)
        first.turn("hello there")
        val channelId = first.chat.channelId!!
        first.chat.detach()
        assertTrue(first.chat.closed)
        val listed = editor.runningChats().single()
        assertEquals(channelId, listed.channelId)
        assertEquals(emptyList<String>(), listed.clients.orEmpty().map { it.clientName }, "nobody attached")
        val again = record(editor) { editor.attachChat(listed, it) }
        assertEquals(listOf(GREETING), again.texts())
        assertEquals(TurnOutcome.SUCCESS, again.turn("hello again").outcome)
    }

    @Test fun `a chat of a killed daemon is opened again from its session`() = test {
        serve()
        val editor = shared("editor")
        val rec = newChat(editor)
        rec.turn("hello there")
        val sessionId = rec.chat.sessionId
        val mark = rec.mark()
        ProcessHandle.of(daemon.serving()!!.pid()).get().destroyForcibly() // its CLI goes with it; `connect` starts a new daemon
        rec.awaitEvent(mark) {
            it is ChatEvent.Notice && it.text == "The chat was not running in the daemon any more: reopened its session."
        }
        assertEquals(TurnOutcome.SUCCESS, rec.turn("hello again").outcome)
        assertFalse(rec.view { it.status.reconnecting }, "reconnected")
        assertEquals(sessionId, rec.chat.sessionId, "the conversation went on in its session")
        assertEquals(1, rec.notices().count { "dropped" in it }, "${rec.notices()}")
        assertEquals(listOf(GREETING, GREETING), rec.texts())
    }

    @Test fun `a private daemon refuses attaching clearly`() = test {
        val client = box.client().also { clients += it }
        val listing = assertThrows<SidecarException> { runBlocking { client.runningChats() } }
        assertEquals("notShared", listing.errorName)
        assertTrue("needs the shared daemon" in listing.message!!, listing.message)
        assertNull(client.runningDaemon, "no daemon started for nothing")

        newChat(client)
        val channel = ChannelSummary(channelId = "ch-9", cwd = box.cwd, pid = 1, sessionId = "s", state = ChannelState.IDLE)
        val attaching = assertThrows<SidecarException> { runBlocking { client.attachChat(channel) } }
        assertEquals("notShared", attaching.errorName, "the daemon's answer")
        assertEquals(-32012, attaching.code)
        assertTrue("needs the shared daemon" in attaching.message!! && "--stdio" in attaching.message!!, attaching.message)
    }

    companion object {
        const val GREETING = "Hello from the stand-in model."
        val HELD = "x".repeat(80)
        val REST = "z".repeat(80)
    }
}
