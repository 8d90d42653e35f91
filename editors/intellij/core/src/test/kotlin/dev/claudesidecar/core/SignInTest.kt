package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.TurnErrorKind
import dev.claudesidecar.core.protocol.TurnOutcome
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import kotlin.time.Duration.Companion.seconds

/**
 * A chat whose CLI has no credentials, against the real daemon and CLI (an own HOME, no key):
 * its turn's `authRequired` error becomes one [SignInNeeded] with the fix and the command.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("signing in")
class SignInTest {
    private lateinit var model: Model

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @Test fun `a chat without credentials asks once to sign in, naming the command`() = runBlocking {
        withTimeout(90.seconds) {
            Sandbox(model, credentials = false).use { box ->
                val pids = mutableSetOf<Long>()
                box.client().use { client ->
                    val rec = Recorder(client, pids).start { client.openChat(NewChannelParams(cwd = box.cwd), it) }

                    val ended = rec.turn("hello")

                    assertEquals(TurnOutcome.ERROR, ended.outcome)
                    assertEquals(TurnErrorKind.AUTH_REQUIRED, ended.error?.kind)
                    val asked = rec.events().mapNotNull { SignInNeeded.of(it) }
                    assertEquals(1, asked.size, "one sign-in per turn: $asked")
                    val signIn = asked.single()
                    assertFalse(signIn.refused)
                    assertTrue(signIn.message.startsWith("Claude Code has no credentials; sign in"), signIn.message)
                    assertFalse("Please run /login" in signIn.text, signIn.text)
                    val command = signIn.command ?: error("no command in ${ended.error}")
                    assertTrue(command.endsWith(" login"), command)
                    assertTrue("`$command`" in signIn.message, "the command is the one the message names")
                    assertTrue(signIn.text.endsWith("Sign in from a terminal: $command"), signIn.text)
                    assertEquals("$command --api-key", signIn.apiKeyCommand)
                }
                assertAllGone(synchronized(pids) { pids.toList() })
            }
        }
    }
}
