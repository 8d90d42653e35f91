package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatDarkLaf
import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.PermissionRequest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.awt.BorderLayout
import javax.swing.JButton
import javax.swing.JFrame
import javax.swing.JPanel
import javax.swing.SwingUtilities

/**
 * The notices of chats that start waiting for the user unseen, fed lists of chats as the
 * daemon tells them (the app's own use, against the real daemon, is in ChatRosterTest).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WaitNoticesTest {
    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    private fun chat(id: String, state: ChannelState, vararg tools: String, lastEventAt: String = "2026-11-29T14:00:00Z") = ChannelSummary(
        channelId = id,
        cwd = "/srv/shop",
        pid = 1,
        sessionId = "s-$id",
        state = state,
        lastEventAt = lastEventAt,
        pendingPermissions = tools.mapIndexed { i, tool -> PermissionRequest(JsonObject(), "$id-r$i", emptyList(), tool, null) },
    )

    private val unseen: (ChannelSummary) -> Boolean = { false }

    @Test
    fun `a chat is told of once per wait, however often the daemon tells of it meanwhile`() = onEdt {
        val notices = WaitNotices {}
        notices.update(listOf(chat("ch-1", ChannelState.RUNNING)), unseen)
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash")), unseen)
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash", lastEventAt = "2026-11-29T14:00:05Z")), unseen)
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash", "Edit")), unseen)

        assertEquals(1, notices.raised)
        assertEquals(listOf("Claude in shop waits for your answer: Bash"), notices.texts)
    }

    @Test
    fun `a notice goes when the wait ends, and a new wait is told again`() = onEdt {
        val notices = WaitNotices {}
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash")), unseen)
        notices.update(listOf(chat("ch-1", ChannelState.RUNNING)), unseen)
        assertEquals(emptyList<String>(), notices.texts)
        assertFalse(notices.isVisible)

        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Edit")), unseen)

        assertEquals(2, notices.raised)
        assertEquals(listOf("Claude in shop waits for your answer: Edit"), notices.texts)
    }

    @Test
    fun `a chat the user sees raises no notice, nor later in the same wait`() = onEdt {
        val notices = WaitNotices {}
        var seen = true
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash"))) { seen }
        seen = false // its tab closed, still waiting
        notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash"))) { seen }

        assertEquals(0, notices.raised)
    }

    @Test
    fun `a notice reads in the dark theme after a switch`() = onEdt {
        val notices = WaitNotices {}
        // On a panel that paints its background, as in the app (the notices have none).
        val window = JPanel(BorderLayout()).apply { add(notices, BorderLayout.NORTH) }
        val frame = JFrame("notices").apply {
            contentPane = window
            setSize(600, 120)
            isVisible = true
        }
        try {
            notices.update(listOf(chat("ch-1", ChannelState.AWAITING_PERMISSION, "Bash")), unseen)
            FlatDarkLaf.setup()
            SwingUtilities.updateComponentTreeUI(frame)
            notices.restyle()
            frame.validate()

            assertEquals(listOf("Claude in shop waits for your answer: Bash"), notices.texts)
            assertEquals(emptyList<String>(), lowContrast(window))
        } finally {
            FlatLightLaf.setup()
            frame.dispose()
        }
    }

    @Test
    fun `Open hands the chat over and takes the notice down`() = onEdt {
        val opened = mutableListOf<String>()
        val notices = WaitNotices { opened += it.channelId }
        notices.update(listOf(chat("ch-1", ChannelState.IDLE), chat("ch-2", ChannelState.AWAITING_PERMISSION, "Bash")), unseen)

        find<JButton>(notices).first { it.text == "Open the chat" }.doClick()

        assertEquals(listOf("ch-2"), opened)
        assertEquals(emptyList<String>(), notices.texts)
    }
}
