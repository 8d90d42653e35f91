package dev.claudesidecar.core

import com.google.gson.JsonParser
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.ClientName
import dev.claudesidecar.core.protocol.ClientProtocol
import dev.claudesidecar.core.protocol.DAEMON_VERSION
import dev.claudesidecar.core.protocol.FEATURE_NAMES
import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.ListSessionsParams
import dev.claudesidecar.core.protocol.Method
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.PROTOCOL_VERSION
import dev.claudesidecar.core.protocol.WarmPoolOptions
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Nested
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.nio.file.Path
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/**
 * The version handshake: the protocol the client states in `initialize`, the one error of a
 * daemon it does not fit (which side to upgrade, and the fix), the daemon's optional features
 * (one left out is not offered, and says so when used all the same) and the options it
 * ignored. First against a stand-in daemon that answers `initialize` as each test says, then
 * against the real daemon.
 */
@DisplayName("the version handshake")
class HandshakeTest {
    /** Where the stand-in daemons write what they got; removed after each test. */
    @TempDir lateinit var records: Path

    private fun test(body: suspend () -> Unit) = runBlocking { withTimeout(60.seconds) { body() } }

    /** A client of [daemon] (a stand-in), in [mode], logging to [logger]. */
    private fun client(daemon: FakeDaemon, mode: DaemonMode = DaemonMode.PRIVATE, logger: SidecarLogger = Harness.logger) =
        SidecarClient(ClientOptions(daemon = DaemonOptions(command = daemon.command, mode = mode, logger = logger)))

    /** The error a client of a stand-in daemon that answers `initialize` with [error] gets. */
    private fun rejected(error: String): SidecarException {
        val client = client(FakeDaemon("""{"error": $error}""", records))
        return client.use { assertThrows<SidecarException> { runBlocking { it.daemon() } } }
    }

    @Nested
    @DisplayName("against a stand-in daemon")
    inner class StandIn {
        @Test fun `initialize carries the protocol the client speaks, the oldest daemon protocol it needs, its name and version`() = test {
            val fake = FakeDaemon(FakeDaemon.answer(FEATURE_NAMES), records)
            val daemon = DaemonConnection.start(
                DaemonOptions(
                    command = fake.command,
                    initializationOptions = InitializationOptions(coalesceDeltasMs = 16),
                    protocolClient = "swing-app",
                ),
                NO_HANDLERS,
            )
            daemon.shutdown()
            val options = fake.received().first { it.get("method")?.asString == "initialize" }
                .getAsJsonObject("params").getAsJsonObject("initializationOptions")
            assertEquals(16, options.get("coalesceDeltasMs").asInt)
            assertEquals(
                JsonParser.parseString(
                    """{"version": $PROTOCOL_VERSION, "oldest": $PROTOCOL_VERSION, "client": {"name": "swing-app", "version": "$DAEMON_VERSION"}}""",
                ),
                options.get("protocol"),
            )
        }

        @Test fun `a request the daemon answers with no result fails with the method named, not a crash`() = test {
            val daemon = DaemonConnection.start(
                DaemonOptions(command = FakeDaemon(FakeDaemon.answer(FEATURE_NAMES), records).command),
                NO_HANDLERS,
            )
            try {
                val e =
                    assertThrows<SidecarException> {
                        runBlocking { daemon.request(Methods.LIST_SESSIONS, ListSessionsParams(cwd = "/tmp")) }
                    }
                assertEquals("the daemon answered claude/listSessions with no result", e.message)
                assertEquals("claude/listSessions", e.where)
            } finally {
                daemon.shutdown()
            }
        }

        @Test fun `a daemon killed while it writes to stderr ends the reader of its stderr quietly`() = test {
            val chatty = FakeDaemon(FakeDaemon.answer(FEATURE_NAMES), records, chattyStderr = true)
            val daemon = DaemonConnection.start(DaemonOptions(command = chatty.command, logger = SidecarLogger.NONE), NO_HANDLERS)
            val reader = Thread.getAllStackTraces().keys.single { it.name == "claude-sidecar-stderr-${daemon.pid}" }
            val died = Collections.synchronizedList(mutableListOf<Throwable>())
            val before = reader.uncaughtExceptionHandler
            // Process.destroyForcibly() closes the pipe while the reader still has lines to read
            // ("Stream closed" on its next read).
            reader.uncaughtExceptionHandler = Thread.UncaughtExceptionHandler { _, e -> died.add(e) }
            try {
                daemon.kill()
                reader.join(10_000)
                assertFalse(reader.isAlive, "the stderr reader still runs after the kill")
                assertEquals(emptyList<Throwable>(), died.toList())
            } finally {
                reader.uncaughtExceptionHandler = before
            }
        }

        @Test fun `a daemon too new for the client is one error saying to upgrade the client, with nothing to copy`() {
            val fix = "update the claude-sidecar plugin (Settings > Plugins, or install the newer plugin jar), then restart the IDE"
            val e = rejected(FakeDaemon.mismatch("client", fix))

            val mismatch = checkNotNull(e.mismatch) { e.toString() }
            assertEquals(ProtocolMismatch.Upgrade.CLIENT, mismatch.upgrade)
            assertEquals(fix, mismatch.fix)
            assertEquals("9.9.9", mismatch.daemonVersion)
            assertNull(mismatch.command, "the fix is no command")
            assertTrue(
                e.message!!.startsWith("This claude-sidecar daemon (9.9.9, protocol 7) no longer serves clients of protocol"),
                e.message,
            )
            assertTrue(e.message!!.endsWith("upgrade intellij: $fix"), e.message)
            assertEquals("protocolMismatch", e.errorName)
        }

        @Test fun `a daemon too old for the client is one error saying to upgrade the daemon, with the command to copy`() {
            val e = rejected(FakeDaemon.mismatch("daemon", "pipx upgrade claude-sidecar"))

            val mismatch = e.mismatch!!
            assertEquals(ProtocolMismatch.Upgrade.DAEMON, mismatch.upgrade)
            assertEquals("pipx upgrade claude-sidecar", mismatch.command)
            assertTrue(e.message!!.endsWith("upgrade claude-sidecar: pipx upgrade claude-sidecar"), e.message)
        }

        @Test fun `a daemon from before the handshake refusing the protocol option means the same - upgrade the daemon, uv or pipx`() {
            val e = rejected(
                """{"code": -32602, "message": "invalid params: `initializationOptions.protocol` is not a known parameter; remove it or check its spelling; see initialize in docs/protocol.md",
                   "data": {"name": "invalidParams", "field": "initializationOptions.protocol"}}""",
            )

            val mismatch = e.mismatch!!
            assertEquals(ProtocolMismatch.Upgrade.DAEMON, mismatch.upgrade)
            assertEquals(Handshake.UPGRADE_DAEMON, mismatch.command)
            assertNull(mismatch.daemonVersion)
            assertTrue("older than this client needs" in e.message!!, e.message)
            assertTrue("uv tool upgrade claude-sidecar (or pipx upgrade claude-sidecar)" in e.message!!, e.message)
            assertFalse("not a known parameter" in e.message!!, e.message)
            assertEquals("protocolMismatch", e.errorName)
        }

        @Test fun `any other invalidParams of initialize stays what it is`() {
            val e = rejected(
                """{"code": -32602, "message": "invalid params: `initializationOptions.coalesceDeltasMs` must be <= 1000",
                   "data": {"name": "invalidParams", "field": "initializationOptions.coalesceDeltasMs"}}""",
            )

            assertNull(e.mismatch)
            assertEquals("invalidParams", e.errorName)
        }

        @Test fun `a feature the daemon does not list is not offered - attaching says so without asking the daemon`() = test {
            val fake = FakeDaemon(FakeDaemon.answer(listOf("editorTools", "fork", "rewind")), records)
            client(fake, DaemonMode.SHARED).use { client ->
                assertNull(client.features.value, "unknown before a daemon answered")
                client.daemon()
                assertEquals(setOf("editorTools", "fork", "rewind"), client.features.value)
                val channel = ChannelSummary(channelId = "ch-1", cwd = "/tmp", pid = 1, sessionId = "s-1", state = ChannelState.IDLE)
                val e = assertThrows<SidecarException> { runBlocking { client.attachChat(channel) } }
                assertTrue("needs a claude-sidecar daemon that serves \"attach\"; this one (9.9.9) does not" in e.message!!, e.message)
                assertFalse("claude/attach" in fake.methods(), "claude/attach was never sent")
            }
        }

        @Test fun `initializationOptions the daemon ignored are logged once, at warning, by name`() = test {
            val lines = Collections.synchronizedList(mutableListOf<Pair<SidecarLogger.Level, String>>())
            val fake = FakeDaemon(FakeDaemon.answer(FEATURE_NAMES, ignored = listOf("initializationOptions.newerThing")), records)
            client(fake, logger = { level, message -> lines += level to message }).use { it.daemon() }
            val warnings = lines.filter { (level, m) -> level == SidecarLogger.Level.WARN && "initializationOptions.newerThing" in m }
            assertEquals(1, warnings.size, lines.toString())
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    @DisplayName("against the real daemon")
    inner class Real {
        private lateinit var model: Model

        @BeforeAll fun startModel() {
            model = Model.start()
        }

        @AfterAll fun stopModel() = model.close()

        @Test fun `the daemon takes the protocol and answers its own, with the features of a private daemon`() = test {
            Sandbox(model).use { box ->
                box.client().use { client ->
                    val handshake = client.daemon().initializeResult.capabilities.experimental.claudeSidecar
                    assertEquals(PROTOCOL_VERSION, handshake.protocolVersion)
                    assertEquals(emptyList<String>(), handshake.ignoredOptions, "protocol is an option the daemon knows")
                    val features = client.features.value!!
                    assertTrue("fork" in features && "rewind" in features, features.toString())
                    assertFalse("attach" in features, "a private daemon serves no attach")
                }
            }
        }

        @Test fun `the shared daemon lists attach`() = test {
            Sandbox(model).use { box ->
                SharedDaemon(box).use { shared ->
                    box.client(command = shared.connect, mode = DaemonMode.SHARED).use { client ->
                        client.daemon()
                        assertTrue("attach" in client.features.value!!, client.features.value.toString())
                    }
                }
            }
        }

        @Test fun `a client older than the daemon serves gets one protocolMismatch - upgrade the client, nothing to copy`() {
            Sandbox(model).use { box ->
                val options = InitializationOptions(
                    warmPool = WarmPoolOptions(size = 0),
                    protocol = ClientProtocol(version = 0, client = ClientName("intellij", "0.0.1")),
                )
                box.client(initializationOptions = options).use { client ->
                    val e = assertThrows<SidecarException> { runBlocking { client.daemon() } }
                    val mismatch = checkNotNull(e.mismatch) { e.toString() }
                    assertEquals(ProtocolMismatch.Upgrade.CLIENT, mismatch.upgrade)
                    assertTrue("plugin" in mismatch.fix, mismatch.fix)
                    assertNull(mismatch.command)
                    assertTrue(e.message!!.endsWith("upgrade intellij: ${mismatch.fix}"), e.message)
                }
            }
        }

        @Test fun `a client needing a newer daemon than this one gets one protocolMismatch - upgrade the daemon, with the command`() {
            Sandbox(model).use { box ->
                val newer = PROTOCOL_VERSION + 1
                val options = InitializationOptions(
                    warmPool = WarmPoolOptions(size = 0),
                    protocol = ClientProtocol(version = newer, client = ClientName("intellij", "99.0.0"), oldest = newer),
                )
                box.client(initializationOptions = options).use { client ->
                    val e = assertThrows<SidecarException> { runBlocking { client.daemon() } }
                    val mismatch = checkNotNull(e.mismatch) { e.toString() }
                    assertEquals(ProtocolMismatch.Upgrade.DAEMON, mismatch.upgrade)
                    // The command of the way this daemon was installed (a checkout here: git pull and bootstrap.py).
                    assertEquals(mismatch.fix, mismatch.command)
                    assertTrue("upgrade claude-sidecar: ${mismatch.fix}" in e.message!!, e.message)
                    assertEquals(DaemonState.FAILED, client.state.value)
                }
            }
        }
    }

    private companion object {
        val NO_HANDLERS = object : DaemonHandlers {
            override fun onNotification(type: NotificationType<*>, params: Any) = Unit

            override suspend fun onClientRequest(method: Method<*, *>, params: Any): Any? = null

            override fun onExit(exit: DaemonExit) = Unit
        }
    }
}
