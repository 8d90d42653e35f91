package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.TurnEndedNotification
import dev.claudesidecar.core.protocol.TurnError
import dev.claudesidecar.core.protocol.TurnErrorKind
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.protocol.TurnUsage
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import javax.swing.JButton
import javax.swing.JFrame

/**
 * The chat panel when its CLI cannot authenticate: the daemon's error with the fix over the
 * prompt, with a button that copies the sign-in command; gone once a turn gets through.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SignInBannerTest {
    private val message = "Claude Code has no credentials; sign in with a Claude account: run `claude-sidecar login` " +
        "in a terminal; or use an API key: set ANTHROPIC_API_KEY in the environment the daemon starts in and restart it " +
        "(`claude-sidecar login --api-key` says where); then send the message again"

    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    private fun turnEnded(seq: Int, error: TurnError?) = ChatEvent.Notification(
        Notifications.TURN_ENDED.name,
        TurnEndedNotification(
            channelId = "ch-1",
            costUsd = 0.0,
            durationMs = 80,
            outcome = if (error == null) TurnOutcome.SUCCESS else TurnOutcome.ERROR,
            permissionWaitMs = 0,
            seq = seq,
            totalCostUsd = 0.0,
            usage = TurnUsage(0, 0, 0, 0),
            error = error,
        ),
    )

    @Test
    fun `a turn that needs sign-in shows the fix and the command over the prompt until a turn gets through`() {
        val data = JsonObject().apply {
            addProperty("name", "authRequired")
            addProperty("reason", "noCredentials")
            addProperty("how", "claude-sidecar login")
        }
        val (panel, frame) = onEdt {
            val panel = ChatPanel()
            panel to JFrame("chat").apply {
                contentPane = panel
                setSize(640, 700)
                isVisible = true
            }
        }
        try {
            panel.listener.onEvent(turnEnded(1, TurnError(TurnErrorKind.AUTH_REQUIRED, message, -32015, data)))
            waitFor("the sign-in banner", describe = { visibleText(panel) }) { onEdt { panel.signIn.isShowing } }
            settle()
            val shown = onEdt { visibleText(panel) }
            assertTrue(message.replace("`", "") in shown, shown)
            assertFalse('`' in shown, "Markdown's code marks are not shown as backticks: $shown")
            assertTrue("Sign in from a terminal: claude-sidecar login" in shown, shown)
            assertTrue(onEdt { find<JButton>(panel.signIn).any { it.isShowing && it.text == "Copy Command" } })
            screenshot(panel, "sign-in-banner")

            panel.listener.onEvent(turnEnded(2, null))
            waitFor("the banner to go") { onEdt { !panel.signIn.isShowing } }
            assertFalse(message.replace("`", "") in onEdt { visibleText(panel) })
        } finally {
            onEdt {
                panel.dispose()
                frame.dispose()
            }
        }
    }
}
