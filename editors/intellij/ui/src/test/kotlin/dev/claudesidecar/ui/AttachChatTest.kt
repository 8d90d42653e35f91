package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ChatListener
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Recorder
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SharedDaemon
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.TurnEntry
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import javax.swing.JButton
import javax.swing.JComponent

/**
 * The standalone app's "Attach to running chat…" on the shared daemon (a `serve` of the test's
 * own, reached through `connect`): another client's running chat is listed with its folder,
 * state, model and editor, and opens in a tab with its history, then streams on; a permission
 * another editor answered leaves the panel's cards. Under Xvfb; screenshots in target/screenshots.
 */
class AttachChatTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private var daemon: SharedDaemon? = null
    private val clients = mutableListOf<SidecarClient>()
    private val pids = mutableSetOf<Long>()
    private var app: App? = null

    @BeforeEach fun setUp() {
        model = Model.start("/shared-scenario.json")
        box = Sandbox(model)
    }

    @AfterEach fun tearDown() {
        try {
            onEdt { app?.close() }
            app?.panels?.mapNotNull { it.chat?.pid?.toLong() }?.let { synchronized(pids) { pids += it } }
            clients.forEach { it.close() }
            daemon?.close()
            assertAllGone(synchronized(pids) { pids.toList() })
        } finally {
            box.close()
            model.close()
        }
    }

    private fun client(mode: DaemonMode, name: String) = when (mode) {
        DaemonMode.SHARED -> box.client(command = daemon!!.connect, mode = mode, clientName = name)
        DaemonMode.PRIVATE -> box.client()
    }.also { clients += it }

    private fun openApp(client: SidecarClient): App = onEdt {
        FlatLightLaf.setup()
        App(client, box.cwd).also {
            it.frame.setSize(1000, 700)
            it.show(firstChat = false)
        }
    }.also { app = it }

    private fun click(root: JComponent, text: String) = onEdt {
        find<JButton>(root).first { it.text == text }.doClick()
    }

    /** The rows of the dialog's list as its renderer draws them. EDT. */
    private fun renderedRows(app: App): List<String> {
        val list = find<RunningChatList>(app.attachDialog!!.contentPane).single().list
        return (0 until list.model.size).map { i ->
            visibleText(list.cellRenderer.getListCellRendererComponent(list, list.model.getElementAt(i), i, false, false))
                .replace("\n", " | ")
        }
    }

    /** What the dialog shows besides its list's rows. EDT. */
    private fun dialogText(app: App) = app.attachDialog?.let { visibleText(it.contentPane) } ?: "no dialog"

    @Test
    fun `attach to running chat lists another editor's chat and opens it with its history, then live`() {
        daemon = SharedDaemon(box)
        val other = client(DaemonMode.SHARED, "editor-a")
        val rec = runBlocking {
            Recorder(other, pids).start { l: ChatListener -> other.openChat(NewChannelParams(cwd = box.cwd), l) }.also {
                it.turn("hello there")
                it.chat.send("long")
                it.awaitTexts(listOf(GREETING, HELD))
            }
        }
        val app = openApp(client(DaemonMode.SHARED, "claude-sidecar-app"))
        click(app.frame.rootPane, "Attach to running chat…")
        waitFor("the running chat listed", describe = { dialogText(app) }) {
            app.attachDialog?.let { d ->
                find<RunningChatList>(d.contentPane).single().list.model.size ==
                    1
            } ==
                true
        }
        val listed = onEdt { renderedRows(app).single() }
        val model = runBlocking { other.runningChats().single().model }
        assertTrue(" · running | " in listed, listed)
        assertTrue("${rec.chat.channelId} · $model · 1 editor: editor-a" in listed, listed)
        onEdt { app.attachDialog!!.rootPane.let { it.setSize(it.preferredSize) } }
        screenshot(app.attachDialog!!.rootPane, "attach-1-running-chats")

        click(app.attachDialog!!.rootPane, "Attach")
        waitFor("the dialog to close") { app.attachDialog == null }
        val panel = onEdt { app.selectedPanel!! }
        waitFor("the chat's history and answer so far", describe = { visibleText(panel) }) {
            panel.chat != null && visibleText(panel).let { "hello there" in it && GREETING in it && HELD in it }
        }
        assertEquals(rec.chat.channelId, onEdt { panel.chat!!.channelId })

        runBlocking { Recorder(other, pids).start { l: ChatListener -> other.openChat(NewChannelParams(cwd = box.cwd), l) }.turn("go on") }
        waitFor("the rest of the answer, live", describe = { visibleText(panel) }) {
            visibleText(panel).let { REST in it } && panel.transcript.entries.count { it is TurnEntry } >= 2
        }
        settle() // the views around the end: made a few per task after it
        val shown = visibleText(panel)
        assertEquals(1, Regex(HELD).findAll(shown).count(), "the answer so far shown once: $shown")
        assertEquals(1, Regex(REST).findAll(shown).count(), shown)
        // Said of the running turn, not of its answer: before its prompt, the answer whole after it.
        val attached = shown.indexOf("Attached: the chat goes on from here.")
        assertTrue(attached in shown.indexOf(GREETING)..shown.indexOf(HELD), "the notice before the running turn: $shown")
        screenshot(app.frame.rootPane, "attach-2-attached-chat")
    }

    @Test
    fun `a permission answered in another editor removes its card and says so`() {
        daemon = SharedDaemon(box)
        box.workspace.resolve("hello.py").toFile().writeText("print('hello')\n")
        val app = openApp(client(DaemonMode.SHARED, "claude-sidecar-app"))
        onEdt { app.openChat("Chat 1") }
        val panel = onEdt { app.selectedPanel!! }
        waitFor("the chat to open") { panel.chat != null }
        runBlocking { panel.chat!!.send("greet the world") }
        waitFor("the permission card", describe = { visibleText(panel) }) { panel.dock.isVisible && panel.chatState.pending.size == 1 }

        val other = client(DaemonMode.SHARED, "editor-b")
        runBlocking {
            val rec = Recorder(other, pids).start { l: ChatListener -> other.attachChat(other.runningChats().single(), l) }
            rec.chat.respondPermission(rec.chat.permissionRequests.keys.single(), PermissionDecision.ALLOW)
        }
        waitFor("the card gone, the answer said", describe = { visibleText(panel) }) {
            !panel.dock.isVisible && "Edit: answered in another editor." in visibleText(panel)
        }
        waitFor("the turn to end", describe = { visibleText(panel) }) { panel.transcript.entries.any { it is TurnEntry } }
        assertEquals("print('hello, world')\n", box.workspace.resolve("hello.py").toFile().readText())
        screenshot(app.frame.rootPane, "attach-4-answered-in-another-editor")
    }

    @Test
    fun `a dropped connection marks the chat's tab and header until it is made again`() {
        daemon = SharedDaemon(box)
        // The client's command reads this file: "sleep 600" keeps the connection down until the test restores it.
        val command = box.root.resolve("daemon-command")
        command.toFile().writeText(daemon!!.connect.joinToString(" "))
        val client = box.client(command = listOf("sh", "-c", "exec \$(cat '$command')"), mode = DaemonMode.SHARED, clientName = "app")
        clients += client
        val app = openApp(client)
        onEdt { app.openChat("Chat 1") }
        val panel = onEdt { app.selectedPanel!! }
        waitFor("the chat to open") { panel.chat != null }
        runBlocking { panel.chat!!.send("hello there") }
        waitFor("the answer", describe = { visibleText(panel) }) { panel.transcript.entries.any { it is TurnEntry } }
        val title = { onEdt { app.tabs.getTitleAt(app.tabs.indexOfComponent(panel)) } }
        assertEquals("Chat 1", title())
        assertTrue(!onEdt { panel.header.reconnectingLabel.isVisible })
        val listed = runBlocking { client.runningChats().single() }

        command.toFile().writeText("sleep 600")
        ProcessHandle.of(client.runningDaemon!!.pid).get().destroyForcibly()
        waitFor("the reconnecting mark", describe = { title() + "\n" + visibleText(panel) }) {
            app.tabs.getTitleAt(app.tabs.indexOfComponent(panel)) == "Chat 1 (reconnecting…)" && panel.header.reconnectingLabel.isShowing
        }
        val sleeper = sleeper()
        assertTrue("Reconnecting to the shared daemon" in onEdt { panel.status.text }, onEdt { panel.status.text })
        assertTrue(onEdt { panel.header.reconnectingLabel.text == "Reconnecting…" })
        assertEquals(emptyList<String>(), onEdt { lowContrast(panel) }, "the mark reads")
        screenshot(app.frame.rootPane, "attach-5-reconnecting")
        onEdt { app.attach(listed) } // as the attach dialog does: the chat being reconnected is the one open here
        assertEquals(1, onEdt { app.tabs.tabCount }, "no second tab on the chat")
        assertTrue(onEdt { app.selectedPanel === panel })

        command.toFile().writeText(daemon!!.connect.joinToString(" "))
        sleeper.destroyForcibly()
        waitFor("the mark cleared", describe = { title() + "\n" + visibleText(panel) }) {
            app.tabs.getTitleAt(app.tabs.indexOfComponent(panel)) == "Chat 1" && !panel.header.reconnectingLabel.isVisible
        }
        assertTrue("Connected again" in onEdt { visibleText(panel) })
        assertTrue("Reconnecting" !in onEdt { panel.status.text }, onEdt { panel.status.text })
        screenshot(app.frame.rootPane, "attach-6-reconnected")
    }

    /** The `sleep 600` the client runs instead of its bridge, once it runs (the reconnect's pause is the client's). */
    private fun sleeper(): ProcessHandle {
        var found: ProcessHandle? = null
        waitFor("the client to run its command again") {
            found = ProcessHandle.current().descendants().filter { p ->
                p.info().command().orElse("").endsWith("/sleep") && p.info().arguments().orElse(emptyArray()).contentEquals(arrayOf("600"))
            }.findFirst().orElse(null)
            found != null
        }
        return found!!
    }

    @Test
    fun `with a private daemon attach says that it needs the shared one`() {
        val client = client(DaemonMode.PRIVATE, "app")
        val app = openApp(client)
        // The window's session list starts the private daemon; the dialog must start none of its own.
        waitFor("the session list's daemon") { client.runningDaemon != null }
        val started = client.runningDaemon
        click(app.frame.rootPane, "Attach to running chat…")
        waitFor("the message", describe = { dialogText(app) }) { "needs the shared daemon" in dialogText(app) }
        assertTrue(onEdt { find<RunningChatList>(app.attachDialog!!.contentPane).single().list.model.size == 0 })
        assertSame(started, client.runningDaemon, "no daemon started for nothing")
        onEdt { app.attachDialog!!.rootPane.let { it.setSize(it.preferredSize) } }
        screenshot(app.attachDialog!!.rootPane, "attach-3-private-daemon")
    }

    companion object {
        const val GREETING = "Hello from the stand-in model."
        val HELD = "x".repeat(80)
        val REST = "z".repeat(80)
    }
}
