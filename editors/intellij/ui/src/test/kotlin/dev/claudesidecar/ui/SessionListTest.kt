package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.SessionSummary
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** How the session list shows a stored session's size. */
class SessionListTest {
    private val session = SessionSummary(
        createdAt = "2026-11-21T16:54:33.433Z",
        firstPrompt = "fix the tests",
        messageCount = 8,
        sessionId = "s-1",
        title = "fix the tests",
        updatedAt = "2026-11-21T16:54:37.456Z",
    )

    @Test
    fun `a session read whole shows its message count`() {
        assertEquals("8 messages", SessionList.countOf(session))
    }

    @Test
    fun `a long session the daemon has not read whole yet shows no count rather than a wrong one`() {
        assertEquals("not counted yet", SessionList.countOf(session.copy(partial = true, messageCount = 0)))
    }
}
