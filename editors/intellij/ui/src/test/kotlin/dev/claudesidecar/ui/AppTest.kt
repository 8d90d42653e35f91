package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.WarmPoolOptions
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import java.awt.Rectangle
import java.awt.event.KeyEvent
import java.nio.file.Files
import java.util.function.BiConsumer
import javax.swing.JButton
import javax.swing.JComboBox
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JTabbedPane
import javax.swing.JTextArea
import javax.swing.SwingUtilities
import kotlin.io.path.readText
import kotlin.io.path.writeText

/**
 * The standalone app as a person uses it, in a narrow (760 px) window: keys and focus (Tab to
 * a card's buttons and their focus ring, Escape and Stop, where the focus goes after), the
 * layout (a diff's start, the transcript following a new turn, the whole context meter), the
 * session list, tabs and the theme switch. The real daemon and CLI against the stand-in model
 * (app-scenario.json), under Xvfb; the app's client is made from its own command line.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class AppTest {
    private lateinit var model: Model
    private lateinit var sandbox: Sandbox
    private lateinit var client: SidecarClient
    private lateinit var initializationOptions: InitializationOptions
    private lateinit var app: App
    private val pids = mutableSetOf<Long>()

    private val panel: ChatPanel get() = onEdt { app.tabs.selectedComponent as ChatPanel }

    @BeforeAll
    fun open() {
        model = Model.start("/app-scenario.json")
        sandbox = Sandbox(model)
        sandbox.workspace.resolve("hello.py").writeText("print('hello')\n")
        sandbox.workspace.resolve("wide.py").writeText("x = 1  # ${"a long comment that runs far past the right edge ".repeat(6)}\n")
        // The sandbox's environment through the app's own options: the chat runs only if it reaches the daemon.
        val envFile = sandbox.root.resolve("daemon.env")
        envFile.writeText(sandbox.env.entries.joinToString("\n") { (k, v) -> if (v == null) "-$k" else "$k=$v" })
        val options = App.parse(
            arrayOf(
                "--daemon",
                "${Harness.sidecarBin} --stdio",
                "--cwd",
                sandbox.cwd,
                "--env-file",
                envFile.toString(),
                "--env",
                "APP_TEST=1",
            ),
        ) ?: error("the options were refused")
        val daemon = options.daemonOptions(Harness.logger).let {
            it.copy(cwd = sandbox.workspace, initializationOptions = it.initializationOptions.copy(warmPool = WarmPoolOptions(size = 0)))
        }
        initializationOptions = daemon.initializationOptions
        client = SidecarClient(ClientOptions(daemon = daemon))
        app = onEdt {
            FlatLightLaf.setup()
            App(client, options.cwd).apply {
                frame.setSize(760, 900)
                show()
                frame.toFront()
            }
        }
        waitFor("the first chat") { (app.tabs.selectedComponent as? ChatPanel)?.chat != null }
        pids += onEdt { client.runningDaemon!!.pid }
    }

    @AfterAll
    fun close() {
        if (::client.isInitialized) {
            onEdt {
                (0 until app.tabs.tabCount).forEach { i ->
                    (app.tabs.getComponentAt(i) as ChatPanel).chat?.pid?.let {
                        pids +=
                            it.toLong()
                    }
                }
            }
            if (::app.isInitialized) onEdt { app.close() }
            client.close()
            assertAllGone(pids.toList())
        }
        if (::sandbox.isInitialized) sandbox.close()
        if (::model.isInitialized) model.close()
    }

    private fun text() = visibleText(panel)

    private fun turns() = onEdt { panel.transcript.entries.count { it is TurnEntry } }

    private fun awaitTurn(count: Int) {
        waitFor("turn $count to end", describe = ::text) { turns() >= count }
        settle()
    }

    /** Presses [key] in [target] as the keyboard does: the focus manager routes it to the focus owner. */
    private fun press(target: JComponent, key: Int, modifiers: Int = 0) = onEdt {
        target.dispatchEvent(KeyEvent(target, KeyEvent.KEY_PRESSED, System.currentTimeMillis(), modifiers, key, KeyEvent.CHAR_UNDEFINED))
    }

    /** Types [prompt] into the focused prompt and presses Enter. */
    private fun type(prompt: String) {
        val area = onEdt { panel.prompt.text }
        waitFor("the prompt to have the focus") { area.isFocusOwner }
        onEdt { area.text = prompt }
        press(area, KeyEvent.VK_ENTER)
    }

    /** The vertical scroll bar of the selected chat's transcript. */
    private fun transcriptBar() = onEdt {
        find<javax.swing.JScrollPane>(panel).first {
            it.viewport.view is ScrollableColumn && it.viewport.view !is PermissionDock
        }.verticalScrollBar
    }

    private fun focusOwner(): String = onEdt {
        val owner = java.awt.KeyboardFocusManager.getCurrentKeyboardFocusManager().focusOwner
        "focus on ${owner?.javaClass?.simpleName} ${(owner as? JButton)?.text ?: ""}"
    }

    @Test
    @Order(1)
    fun `an empty chat says what to do and has the focus in its prompt`() {
        waitFor("the prompt to have the focus", describe = ::focusOwner) { panel.prompt.text.isFocusOwner }
        assertTrue(text().contains(TranscriptView.EMPTY_HINT), text())
        screenshot(panel, "app-1-empty")
    }

    @Test
    @Order(2)
    fun `the session list reloads after a turn and wraps a long title`() {
        val prompt = "Please explain hello.py and everything a new reader of this small project should know before changing it"
        type(prompt)
        awaitTurn(1)
        assertTrue(!text().contains(TranscriptView.EMPTY_HINT), "the hint goes with the first entry")
        // Nobody asked the list to reload: the turn's end did.
        val sessionId = onEdt { panel.chat!!.sessionId }
        waitFor("the session in the list", describe = { visibleText(app.sessions) }) {
            (0 until app.sessions.list.model.size).any { app.sessions.list.model.getElementAt(it).sessionId == sessionId }
        }
        val (height, lineHeight, shown) = onEdt {
            val list = app.sessions.list
            val cell = list.cellRenderer.getListCellRendererComponent(list, list.model.getElementAt(0), 0, false, false)
            val title = find<JTextArea>(cell).first()
            Triple(title.preferredSize.height, title.getFontMetrics(title.font).height, title.text)
        }
        assertTrue(height >= 2 * lineHeight, "the title wraps onto a second line ($height px, lines of $lineHeight px): $shown")
        assertTrue(shown.length > 40 && !shown.endsWith("…"), "the title is whole: $shown")
        assertEquals(emptyList<String>(), onEdt { lowContrast(app.sessions) }, "the session list's texts below 4.5:1")
        screenshot(app.frame.rootPane, "app-2-sessions")
    }

    @Test
    @Order(3)
    fun `Tab goes from the prompt to the card's Allow, which shows a focus ring, and the diff opens at its start`() {
        type("widen wide.py")
        waitFor("the permission card", describe = ::text) { find<ToolPermissionCard>(panel.dock).isNotEmpty() }
        val card = onEdt { find<ToolPermissionCard>(panel.dock).single() }
        val diff = onEdt { find<DiffView>(card).single() }
        waitFor("the diff to be laid out") { diff.viewport.width > 0 && diff.area.width > diff.viewport.width }
        onEdt {
            assertEquals(0, diff.viewport.viewPosition.x, "the diff is scrolled to its left edge")
            val firstLine = diff.area.text.lineSequence().first()
            assertTrue(firstLine.startsWith("@@"), firstLine)
            val header = diff.area.modelToView2D(0).bounds
            assertTrue(diff.viewport.viewRect.contains(Rectangle(header.x, header.y, 1, header.height)), "the @@ header is in sight")
        }
        val allow = onEdt { find<JButton>(card).first { it.text == "Allow" } }
        val unfocused = onEdt { painted(allow) }
        press(onEdt { panel.prompt.text }, KeyEvent.VK_TAB)
        waitFor("Allow to have the focus", describe = ::focusOwner) { allow.isFocusOwner }
        assertEquals("", onEdt { panel.prompt.text.text }, "Tab inserted nothing")
        val focused = onEdt { painted(allow) }
        val changed = (0 until focused.height).sumOf { y ->
            (0 until focused.width).count { x ->
                focused.getRGB(x, y) !=
                    unfocused.getRGB(x, y)
            }
        }
        assertTrue(changed > focused.width, "the focused Allow paints a ring ($changed pixels differ)")
        screenshot(panel, "app-3-tab-to-allow")
        // Tab again goes on along the card's buttons.
        press(allow, KeyEvent.VK_TAB)
        waitFor("the next button to have the focus", describe = ::focusOwner) {
            !allow.isFocusOwner &&
                find<JButton>(card).any { it.isFocusOwner }
        }
        onEdt { find<JButton>(card).first { it.text == "Allow" }.doClick() }
        awaitTurn(2)
        waitFor("the focus back in the prompt after the card went", describe = ::focusOwner) { panel.prompt.text.isFocusOwner }
        assertTrue(sandbox.workspace.resolve("wide.py").readText().startsWith("x = 2"))
    }

    @Test
    @Order(4)
    fun `Stop ends a streaming turn, the focus returns to the prompt, and Interrupted is said once`() {
        type("ramble on")
        waitFor("the answer to stream", describe = ::text) { text().contains("word word") }
        onEdt {
            // A click gives the button the focus before it acts; the button then hides.
            panel.prompt.stopButton.requestFocusInWindow()
        }
        waitFor("Stop to have the focus", describe = ::focusOwner) { panel.prompt.stopButton.isFocusOwner }
        onEdt { panel.prompt.stopButton.doClick() }
        awaitTurn(3)
        waitFor("the focus in the prompt", describe = ::focusOwner) { panel.prompt.text.isFocusOwner }
        val shown = text()
        assertEquals(1, Regex("(?i)interrupted").findAll(shown).count(), shown)
    }

    @Test
    @Order(5)
    fun `Escape in the prompt stops a turn waiting for permission, and Interrupted is said once more`() {
        type("wait for me")
        waitFor("the permission card", describe = ::text) { find<ToolPermissionCard>(panel.dock).isNotEmpty() }
        waitFor("the Stop button") { panel.prompt.stopButton.isVisible }
        press(onEdt { panel.prompt.text }, KeyEvent.VK_ESCAPE)
        awaitTurn(4)
        waitFor("the card to go") { find<ToolPermissionCard>(panel.dock).isEmpty() }
        val shown = text()
        screenshot(panel, "app-5-escape")
        assertEquals(2, Regex("(?i)interrupted").findAll(shown).count(), "once per interrupted turn: $shown")
        assertEquals("print('hello')\n", sandbox.workspace.resolve("hello.py").readText())
        assertTrue(onEdt { panel.prompt.text.isFocusOwner }, focusOwner())
        val edit = onEdt { find<JLabel>(panel).first { it.text == "Edit" && it.isShowing } }
        assertTrue(onEdt { find<JLabel>(edit.parent).any { it.text == "▸" } }, "the tool row shows its chevron")
    }

    @Test
    @Order(6)
    fun `the transcript follows a new turn though the user scrolled up, and the context meter shows whole`() {
        val bar = transcriptBar()
        type("tell me a story")
        awaitTurn(5)
        waitFor("the end of the story in sight", describe = { "bar ${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            text().contains("The end.") && bar.value + bar.visibleAmount >= bar.maximum
        }
        // The user turns the wheel up (through the event queue, as the mouse does): the view leaves the end.
        val pane = onEdt { SwingUtilities.getAncestorOfClass(javax.swing.JScrollPane::class.java, bar) as javax.swing.JScrollPane }
        wheelUp(pane, 100)
        waitFor("the view to leave the end", describe = { "bar ${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            bar.value + bar.visibleAmount < bar.maximum - 100
        }
        type("tell me the story again")
        awaitTurn(6)
        waitFor("the end of the second story in sight", describe = { "bar ${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            bar.value + bar.visibleAmount >= bar.maximum
        }
        waitFor("the context meter", describe = { visibleText(panel.header) }) { visibleText(panel.header).contains("% context") }
        onEdt {
            val header = panel.header
            val meter = find<JLabel>(header).single { it.text.endsWith("% context") }
            val meterBox = SwingUtilities.convertRectangle(meter.parent, meter.bounds, header)
            assertTrue(
                meter.width >= meter.preferredSize.width,
                "the meter's text is not cut (${meter.width} < ${meter.preferredSize.width})",
            )
            assertTrue(Rectangle(0, 0, header.width, header.height).contains(meterBox), "the meter lies inside the header: $meterBox")
            for (picker in find<JComboBox<*>>(header)) {
                val box = SwingUtilities.convertRectangle(picker.parent, picker.bounds, header)
                assertTrue(!box.intersects(meterBox), "a picker ($box) lies over the meter ($meterBox)")
            }
        }
        screenshot(panel, "app-6-narrow")
        screenshot(app.frame.rootPane, "app-6-window")
    }

    @Test
    @Order(7)
    fun `a session already open in a tab is shown there, not opened twice`() {
        val first = panel
        val sessionId = onEdt { first.chat!!.sessionId }
        onEdt { find<JButton>(app.frame.rootPane).first { it.text == "New chat" }.doClick() }
        waitFor("the second chat") { app.tabs.tabCount == 2 && panel !== first && panel.chat != null }
        app.sessions.load()
        waitFor("the session in the list") {
            (0 until app.sessions.list.model.size).any {
                app.sessions.list.model.getElementAt(it).sessionId ==
                    sessionId
            }
        }
        onEdt {
            val list = app.sessions.list
            list.selectedIndex = (0 until list.model.size).first { list.model.getElementAt(it).sessionId == sessionId }
            list.actionMap.get(ChoiceList.CHOOSE).actionPerformed(null)
        }
        assertEquals(2, onEdt { app.tabs.tabCount }, "no second tab on the same session")
        assertSame(first, panel, "the session's tab is selected")
    }

    @Test
    @Order(8)
    fun `tabs close with their button and with Ctrl+W, and their chats with them`() {
        val second = onEdt { app.tabs.getComponentAt(1) as ChatPanel }
        val secondChat: Chat = onEdt { second.chat!! }
        pids += secondChat.pid!!.toLong()
        @Suppress("UNCHECKED_CAST")
        val closeButton = onEdt { app.tabs.getClientProperty("JTabbedPane.tabCloseCallback") as BiConsumer<JTabbedPane, Int> }
        onEdt { closeButton.accept(app.tabs, 1) }
        assertEquals(1, onEdt { app.tabs.tabCount })
        waitFor("the closed tab's chat to close") { secondChat.closed }
        val first = panel
        val firstChat = onEdt { first.chat!! }
        press(onEdt { first.prompt.text }, KeyEvent.VK_W, java.awt.Toolkit.getDefaultToolkit().menuShortcutKeyMaskEx)
        waitFor("Ctrl+W to close the tab") { app.tabs.tabCount == 0 }
        waitFor("its chat to close") { firstChat.closed }
        onEdt { app.openChat("Again", resume = firstChat.sessionId) }
        waitFor("the session resumed", describe = { if (app.tabs.tabCount > 0) text() else "" }) {
            app.tabs.tabCount == 1 && text().contains("The end.")
        }
        val bar = transcriptBar()
        waitFor("the resumed conversation's end in sight", describe = { "bar ${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            bar.maximum > bar.visibleAmount && bar.value + bar.visibleAmount >= bar.maximum
        }
    }

    @Test
    @Order(9)
    fun `the theme switch redraws the whole app dark, every text still readable`() {
        assertTrue(!onEdt { Theme.dark })
        onEdt { app.themeSwitch.doClick() }
        waitFor("the chat to redraw in the dark theme", describe = { lowContrast(panel).joinToString("\n") }) {
            Theme.dark && lowContrast(panel).isEmpty()
        }
        assertNotEquals(java.awt.Color.WHITE, onEdt { app.sessions.background })
        val bar = transcriptBar()
        waitFor("the end still in sight", describe = { "bar ${bar.value}+${bar.visibleAmount} of ${bar.maximum}" }) {
            bar.value + bar.visibleAmount >= bar.maximum
        }
        screenshot(app.frame.rootPane, "app-9-dark")
        onEdt { app.setTheme(dark = false) }
    }

    @Test
    @Order(10)
    fun `the command line sets the daemon's environment, theme and quoted command`() {
        val options = App.parse(arrayOf("--daemon", "run 'a b' --stdio", "--env", "A=1", "--env", "-B", "--theme", "dark"))!!
        assertEquals(listOf("run", "a b", "--stdio"), options.command)
        assertEquals(mapOf("A" to "1", "B" to null), options.env)
        assertTrue(options.dark)
        assertEquals(null, App.parse(arrayOf("--theme", "blue")))
        assertEquals(null, App.parse(arrayOf("--env")))
        // As the plugin asks (PanelDaemon): the daemon coalesces deltas for the panel.
        assertEquals(PanelDaemon.COALESCE_DELTAS_MS, initializationOptions.coalesceDeltasMs)
        assertEquals(16, initializationOptions.coalesceDeltasMs)
        val environ = Files.readAllBytes(java.nio.file.Path.of("/proc/${onEdt { client.runningDaemon!!.pid }}/environ"))
        assertTrue(String(environ).split('\u0000').contains("APP_TEST=1"), "--env reached the daemon")
    }
}
