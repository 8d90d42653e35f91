package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.transcript.ChatStatus
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance

/** The line over the prompt says what the chat does now; a dropped shared-daemon connection comes first. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatusLineTest {
    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    @Test
    fun `a chat whose connection is being made again says so, in the warning colour, even mid-turn`() = onEdt {
        val line = StatusLine()
        line.show(ChatStatus(state = ChannelState.RUNNING, reconnecting = true))
        assertTrue(line.text.startsWith("Reconnecting to the shared daemon"), line.text)
        assertEquals(Theme.warning, line.foreground)
        line.show(ChatStatus(state = ChannelState.RUNNING, reconnecting = false))
        assertTrue(line.text.startsWith("Claude is working"), line.text)
    }
}
