package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TranscriptParams
import dev.claudesidecar.core.transcript.id
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
import kotlin.time.Duration.Companion.seconds

/**
 * A long conversation read a page at a time (the daemon's feature `transcriptPaging`): a
 * stored session of [COPIES] copies of a short real one ("hello there", then "please write a
 * file": 84 entries), resumed with pages of
 * [PAGE] entries, against the real daemon, CLI and stand-in model. Skipped against a daemon
 * without paging (the last release's, in tests/cross-release.sh), which sends everything.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("paging a long conversation")
class PagingTest {
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
        client = box.client(pageEntries = PAGE)
        pids.clear()
    }

    @AfterEach fun tearDown() {
        client.close()
        assertAllGone(synchronized(pids) { pids.toList() })
        box.close()
    }

    private fun test(body: suspend () -> Unit) = runBlocking {
        withTimeout(120.seconds) {
            assumeFeature(client, SidecarClient.TRANSCRIPT_PAGING)
            body()
        }
    }

    private suspend fun resumeLong(): Recorder {
        val sessionId = box.storeLongSession(COPIES)
        return Recorder(client, pids).start { client.resumeChat(box.cwd, sessionId, listener = it) }
    }

    /** The ids of the whole conversation as the daemon has it now (one `claude/getTranscript` without `limit`). */
    private suspend fun everything(chat: Chat): List<String> =
        client.request(Methods.GET_TRANSCRIPT, TranscriptParams(chat.channelId!!)).entries.map { it.id() }

    /** The ids of the entries the chat's events brought, in order. */
    private fun shown(rec: Recorder): List<String> = rec.view { s -> s.transcript.entries.map { it.id() } }

    /** Reads older pages until none is left; returns how many were read. */
    private suspend fun loadToTheTop(chat: Chat): Int {
        var pages = 0
        while (chat.hasOlder) {
            assertTrue(chat.loadOlder(), "a page is read while older entries exist")
            pages++
            check(pages <= COPIES * 7 / PAGE + 1) { "more pages than the conversation has" }
        }
        return pages
    }

    @Test fun `a resumed long session shows its last page first and says older entries exist`() = test {
        val rec = resumeLong()
        val all = everything(rec.chat)
        assertEquals(COPIES * 7, all.size)
        val first = rec.events().filterIsInstance<ChatEvent.Transcript>().single().transcript
        assertEquals(all.takeLast(PAGE), first.entries.map { it.id() }, "the last page only")
        assertTrue(first.hasMore)
        assertEquals(all.takeLast(PAGE), shown(rec))
        assertTrue(rec.chat.hasOlder)
        assertTrue(rec.view { it.transcript.hasOlder })
    }

    @Test fun `loading older pages up to the top shows every entry exactly once, in order`() = test {
        val rec = resumeLong()
        val pages = loadToTheTop(rec.chat)
        assertEquals(4, pages, "84 entries: the last page of 20, then 20, 20, 20 and 4")
        assertEquals(everything(rec.chat), shown(rec))
        val older = rec.events().filterIsInstance<ChatEvent.OlderEntries>().map { it.page }
        assertEquals(listOf(true, true, true, false), older.map { it.hasMore }, "hasMore is false at the top only")
        assertFalse(rec.view { it.transcript.hasOlder })
        assertEquals(
            List(COPIES) { listOf("hello there", "please write a file") }.flatten(),
            rec.chat.prompts.map { it.text },
            "the user's prompts, oldest first",
        )
    }

    @Test fun `at the top no page is read`() = test {
        val rec = resumeLong()
        loadToTheTop(rec.chat)
        val mark = rec.mark()
        assertFalse(rec.chat.loadOlder(), "nothing older to read")
        assertTrue(rec.events().drop(mark).none { it is ChatEvent.OlderEntries })
    }

    @Test fun `a turn taken while older pages are read shows each entry once, its own after the stored ones`() = test {
        val rec = resumeLong()
        assertTrue(rec.chat.loadOlder())
        rec.turn("hello there")
        loadToTheTop(rec.chat)
        val all = everything(rec.chat)
        assertTrue(all.size > COPIES * 7, "the stored entries, then the turn's")
        assertEquals(all, shown(rec))
        val prompts = rec.view { s -> s.transcript.entries.count { it is PromptEntry } }
        assertEquals(COPIES * 2 + 1, prompts, "two prompts a copy, then the turn's")
    }

    @Test fun `a resume joining a long chat the daemon has open shows the last page its answer brought, then pages back`() = test {
        val sessionId = box.storeLongSession(COPIES)
        val opened = Recorder(client, pids).start { client.resumeChat(box.cwd, sessionId, listener = it) }
        val joined = Recorder(client, pids).start { client.resumeChat(box.cwd, sessionId, listener = it) }
        val all = everything(opened.chat)
        assertEquals(opened.chat.channelId, joined.chat.channelId, "attached to the open chat")
        val page = joined.events().filterIsInstance<ChatEvent.Transcript>().last().transcript
        assertEquals(all.takeLast(PAGE), page.entries.map { it.id() }, "the newChannel answer's last page")
        loadToTheTop(joined.chat)
        assertEquals(all, shown(joined).filterNot { it.startsWith("client:") }, "every entry once")
    }

    @Test fun `a long chat attached in another editor shows its last page, and older pages read to the top give every entry once`() = test {
        client.close()
        SharedDaemon(box).use { daemon ->
            val first = box.client(command = daemon.connect, mode = DaemonMode.SHARED, pageEntries = PAGE)
            val second = box.client(command = daemon.connect, mode = DaemonMode.SHARED, pageEntries = PAGE)
            client = first
            try {
                val sessionId = box.storeLongSession(COPIES)
                val opened = Recorder(first, pids).start { first.resumeChat(box.cwd, sessionId, listener = it) }
                val rec = Recorder(second, pids).start { second.attachChat(second.runningChats().single(), it) }
                val all = everything(opened.chat)
                val page = rec.events().filterIsInstance<ChatEvent.Transcript>().single().transcript
                assertEquals(all.takeLast(PAGE), page.entries.map { it.id() }, "the attach answer's last page")
                assertTrue(rec.chat.hasOlder)
                loadToTheTop(rec.chat)
                assertEquals(all, shown(rec).filterNot { it.startsWith("client:") }, "every entry once, the client's own notices aside")
            } finally {
                second.close()
                first.close()
            }
        }
    }

    private companion object {
        const val PAGE = 20
        const val COPIES = 12
    }
}
