package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.Notifications
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import kotlin.io.path.writeText
import kotlin.time.Duration.Companion.seconds

/**
 * The list of every chat of the daemon ([SidecarClient.watchChannels]), against the real
 * daemon and CLI: it starts with the chats open, follows a chat that starts waiting for a
 * permission (first in the list then) and drops a chat that closed. Skipped against a daemon
 * without `watchChannels` (the last release's, in tests/cross-release.sh).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("the list of the daemon's chats")
class WatchChannelsTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient
    private val pids = mutableSetOf<Long>()

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @BeforeEach fun setUp() {
        box = Sandbox(model)
        box.workspace.resolve("hello.py").writeText("print('hello')\n")
        client = box.client()
    }

    @AfterEach fun tearDown() {
        client.close()
        assertAllGone(synchronized(pids) { pids.toList() })
        box.close()
    }

    private fun test(body: suspend () -> Unit) = runBlocking {
        withTimeout(90.seconds) {
            assumeFeature(client, SidecarClient.WATCH_CHANNELS)
            body()
        }
    }

    private suspend fun open(): Recorder = Recorder(client, pids).start { client.openChat(NewChannelParams(cwd = box.cwd), it) }

    /** The list once it is as [test] wants (fails naming the last list seen). */
    private suspend fun StateFlow<List<ChannelSummary>>.await(what: String, test: (List<ChannelSummary>) -> Boolean) =
        withTimeoutOrNull(60.seconds) { first(test) }
            ?: error("the list never showed $what; last: ${value.map { it.channelId to it.state }}")

    @Test fun `the list starts with the chats open, idle ones by their age`() = test {
        val first = open()
        val second = open()
        first.awaitState(ChannelState.IDLE)
        second.awaitState(ChannelState.IDLE)

        val list = client.watchChannels().await("two idle chats") { it.size == 2 && it.all { c -> c.state == ChannelState.IDLE } }

        assertEquals(listOf(first.chat.channelId, second.chat.channelId), list.map { it.channelId })
        assertEquals(box.cwd, list.first().cwd)
    }

    @Test fun `a chat that starts waiting for a permission comes first, with its request`() = test {
        val first = open()
        val second = open()
        val channels = client.watchChannels()
        channels.await("both chats") { it.size == 2 }
        val since = second.mark()

        second.chat.send("greet the world")
        val ask = second.next(Notifications.PERMISSION_REQUEST, since)
        val list = channels.await("the second chat waiting") { it.firstOrNull()?.state == ChannelState.AWAITING_PERMISSION }

        assertEquals(listOf(second.chat.channelId, first.chat.channelId), list.map { it.channelId })
        assertEquals(listOf(ask.requestId), list.first().pendingPermissions.orEmpty().map { it.requestId })
        assertEquals("greet the world", list.first().lastPrompt)
        assertEquals(1, list.count(ChannelRoster::waiting))
    }

    @Test fun `a chat closed leaves the list`() = test {
        val first = open()
        val second = open()
        val channels = client.watchChannels()
        channels.await("both chats") { it.size == 2 }

        first.chat.close()
        val list = channels.await("one chat") { it.size == 1 }

        assertEquals(listOf(second.chat.channelId), list.map { it.channelId })
    }
}
