package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.ListChannelsParams
import dev.claudesidecar.core.protocol.ListSessionsParams
import dev.claudesidecar.core.protocol.Methods
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import kotlin.time.Duration.Companion.seconds

/**
 * Listing a folder with a long stored session (the daemon's feature `partialListing`), against
 * the real daemon: the listing answers at once with the long session `partial` (no count), the
 * daemon reads it whole in the background and says so (`claude/sessionsChanged`, which
 * [SidecarClient.sessionsChanged] carries), and the listing after that is exact. The session
 * is [COPIES] copies of a short real one (tests/repeated_session.py), ~6 MB: more than the
 * 4 MiB one listing reads. No CLI runs. Skipped against a daemon without the feature (the last
 * release's, in tests/cross-release.sh).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("listing a folder with a long session")
class PartialListingTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @BeforeEach fun setUp() {
        box = Sandbox(model)
        client = box.client()
    }

    @AfterEach fun tearDown() {
        client.close()
        box.close()
    }

    private fun test(body: suspend CoroutineScope.() -> Unit) = runBlocking {
        withTimeout(120.seconds) {
            assumeFeature(client, PARTIAL_LISTING)
            body()
        }
    }

    @Test fun `a long session is listed partial at once, sessionsChanged names it, and the listing after it is exact`() = test {
        val longId = box.storeLongSession(COPIES)
        // Listening before the listing: the notification may come before its answer is read.
        val changed = async(start = CoroutineStart.UNDISPATCHED) { client.sessionsChanged.first { it.cwd == box.cwd } }

        val first = client.listSessions(box.cwd).single()
        val notification = changed.await()
        val again = client.listSessions(box.cwd).single()
        val whole = client.request(Methods.LIST_SESSIONS, ListSessionsParams(cwd = box.cwd)).sessions.single()

        assertEquals(longId, first.sessionId)
        assertEquals(true, first.partial, "not read whole yet")
        assertEquals(0, first.messageCount, "no count rather than a wrong one")
        assertEquals(listOf(longId), notification.sessionIds)
        assertEquals(whole, again, "exact now: as a listing that reads every file whole")
        assertNull(again.partial)
        assertTrue(again.messageCount > 0)
        assertEquals(first.copy(partial = null, messageCount = again.messageCount), again, "the rest as the partial listing said")
    }

    @Test fun `a folder of short sessions is listed exact and sends no sessionsChanged`() = test {
        val shortId = box.storeLongSession(SHORT_COPIES)
        val changed = async(start = CoroutineStart.UNDISPATCHED) { client.sessionsChanged.first() }

        val listed = client.listSessions(box.cwd).single()
        // A request answered after the listing: a notification sent with it would have come before.
        client.request(Methods.LIST_CHANNELS, ListChannelsParams())

        assertEquals(shortId, listed.sessionId)
        assertNull(listed.partial)
        assertTrue(listed.messageCount > 0)
        assertTrue(changed.isActive, "no sessionsChanged")
        changed.cancel()
    }

    private companion object {
        const val PARTIAL_LISTING = "partialListing"
        const val COPIES = 500
        const val SHORT_COPIES = 2
    }
}
