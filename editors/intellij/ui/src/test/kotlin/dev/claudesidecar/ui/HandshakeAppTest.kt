package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.FakeDaemon
import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.SidecarClient
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.awt.Window
import java.nio.file.Files
import java.nio.file.Path
import javax.swing.JButton
import javax.swing.JDialog

/**
 * The standalone app and the version handshake, against a stand-in daemon that answers
 * `initialize` as each test says: a daemon that does not fit is one banner over the chats with
 * the fix (no dialog to dismiss), and what the daemon does not serve is not offered. Under Xvfb.
 */
class HandshakeAppTest {
    private var client: SidecarClient? = null
    private var app: App? = null

    /** The app's working folder and what the stand-in daemon got; removed after each test. */
    @TempDir lateinit var folder: Path

    @AfterEach fun tearDown() {
        onEdt { app?.close() }
        client?.close()
    }

    private fun openApp(fake: FakeDaemon, firstChat: Boolean): App {
        val options = App.Options(command = fake.command, cwd = Files.createDirectories(folder.resolve("workspace")).toString())
        val client = SidecarClient(ClientOptions(daemon = options.daemonOptions(Harness.logger))).also { client = it }
        return onEdt {
            FlatLightLaf.setup()
            App(client, options.cwd).also {
                it.frame.setSize(900, 600)
                it.show(firstChat)
            }
        }.also { app = it }
    }

    @Test
    fun `a daemon too old for the app is one banner with the fix and a button that copies it, and no chat tab`() {
        val fix = "uv tool upgrade claude-sidecar"
        val fake = FakeDaemon("""{"error": ${FakeDaemon.mismatch("daemon", fix, client = App.PROTOCOL_CLIENT)}}""", folder)
        val app = openApp(fake, firstChat = true)

        waitFor("the banner", describe = { onEdt { visibleText(app.frame.rootPane) } }) { onEdt { app.mismatch.isShowing } }
        settle()
        val shown = onEdt { visibleText(app.frame.rootPane) }
        assertTrue("swing-app needs a claude-sidecar daemon of protocol" in shown, shown)
        assertTrue("upgrade claude-sidecar: $fix" in shown, shown)
        assertTrue(onEdt { find<JButton>(app.mismatch).any { it.isShowing && it.text == "Copy Command" } })
        assertEquals(fix, onEdt { app.mismatch.command })
        assertEquals(0, onEdt { app.tabs.tabCount }, "the chat that could not open left no tab")
        assertTrue(onEdt { Window.getWindows().none { it is JDialog && it.isShowing } }, "no dialog to dismiss")
        val initialize = fake.received().first { it.get("method")?.asString == "initialize" }
        val protocol = initialize.getAsJsonObject("params").getAsJsonObject("initializationOptions").getAsJsonObject("protocol")
        assertEquals("swing-app", protocol.getAsJsonObject("client").get("name").asString)
        screenshot(app.frame.rootPane, "handshake-1-daemon-too-old")
    }

    @Test
    fun `attach to running chat is hidden once the daemon says it serves no attach`() {
        val app = openApp(FakeDaemon(FakeDaemon.answer(listOf("editorTools", "fork", "rewind")), folder), firstChat = false)
        assertTrue(onEdt { app.attachButton.isShowing }, "shown while no daemon has said")

        runBlocking { client!!.daemon() }

        waitFor("the button to go") { onEdt { !app.attachButton.isShowing } }
    }

    @Test
    fun `the button stays when the daemon serves attach`() {
        val app = openApp(FakeDaemon(FakeDaemon.answer(listOf("attach", "editorTools", "fork", "rewind")), folder), firstChat = false)

        runBlocking { client!!.daemon() }

        waitFor("the daemon's features") { client!!.features.value != null }
        settle()
        assertTrue(onEdt { app.attachButton.isShowing })
    }
}
