package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.TranscriptParams
import dev.claudesidecar.core.transcript.ChatState
import dev.claudesidecar.core.transcript.id
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.nio.file.Path
import kotlin.io.path.createFile
import kotlin.time.Duration.Companion.seconds

/**
 * A resumed chat shows its session's stored end while its CLI starts (seconds for a long
 * session): `claude/getHistory`'s last page, then the channel's own, the same entries. The
 * real daemon and CLI, the CLI held on `--resume` (tests/fixtures/held-cli.sh) until the test
 * creates [go]: what is checked before happens while the channel has not opened, whatever the
 * machine's speed. A stored session of [COPIES] copies of a short real one (84 entries), pages
 * of [PAGE].
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("a resumed chat's stored end while its CLI starts")
class ResumePreviewTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient
    private lateinit var go: Path
    private val pids = mutableSetOf<Long>()

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @BeforeEach fun setUp() {
        box = Sandbox(model)
        go = box.root.resolve("go")
        client = box.client(env = box.heldResumeEnv(go), pageEntries = PAGE)
        pids.clear()
    }

    @AfterEach fun tearDown() {
        client.close()
        assertAllGone(synchronized(pids) { pids.toList() })
        box.close()
    }

    private fun test(body: suspend CoroutineScope.() -> Unit) = runBlocking {
        withTimeout(120.seconds) {
            assumeFeature(client, SidecarClient.TRANSCRIPT_PAGING)
            body()
        }
    }

    /** Resumes the long session with its CLI held; returns the recording and the resume under way. */
    private fun CoroutineScope.resumeHeld(): Pair<Recorder, Deferred<Recorder>> {
        val sessionId = box.storeLongSession(COPIES)
        val rec = Recorder(client, pids)
        return rec to async { rec.start { client.resumeChat(box.cwd, sessionId, listener = it) } }
    }

    private suspend fun Recorder.awaitPreview(): ChatEvent.Preview = awaitEvent(0, 30.seconds) {
        it is ChatEvent.Preview
    } as ChatEvent.Preview

    /** The ids of the whole conversation as the channel has it (one `claude/getTranscript` without `limit`). */
    private suspend fun everything(chat: Chat): List<String> =
        client.request(Methods.GET_TRANSCRIPT, TranscriptParams(chat.channelId!!)).entries.map { it.id() }

    @Test fun `the session's last page comes before its channel opens`() = test {
        val (rec, resuming) = resumeHeld()
        val preview = rec.awaitPreview()
        assertFalse(resuming.isCompleted, "the resume waits for its CLI")
        assertTrue(rec.events().none { it is ChatEvent.Bound }, "no channel yet")
        assertEquals(PAGE, preview.page.entries.size)
        assertTrue(preview.page.hasMore)
        assertEquals(box.cwd, preview.cwd)
        go.createFile()
        val chat = resuming.await().chat
        assertEquals(everything(chat).takeLast(PAGE), preview.page.entries.map { it.id() }, "the conversation's last page")
    }

    @Test fun `the channel's page equals the stored one shown, and a view applies it as no change`() = test {
        val (rec, resuming) = resumeHeld()
        val preview = rec.awaitPreview()
        go.createFile()
        resuming.await()
        val transcript = rec.events().filterIsInstance<ChatEvent.Transcript>().single()
        assertEquals(preview.page.entries, transcript.transcript.entries)
        val state = ChatState()
        val changes = rec.events().map { state.apply(it) }
        assertTrue(changes[rec.events().indexOf(transcript)].isEmpty, "nothing to draw again")
        assertTrue(state.transcript.hasOlder)
    }

    @Test fun `older pages are read with the channel's cursor, each entry once`() = test {
        val (rec, resuming) = resumeHeld()
        rec.awaitPreview()
        go.createFile()
        val chat = resuming.await().chat
        while (chat.hasOlder) assertTrue(chat.loadOlder())
        assertEquals(everything(chat), rec.view { s -> s.transcript.entries.map { it.id() } })
    }

    private companion object {
        const val PAGE = 20
        const val COPIES = 12
    }
}
