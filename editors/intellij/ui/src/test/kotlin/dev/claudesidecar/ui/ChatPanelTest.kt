package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatDarkLaf
import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.protocol.AskState
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.TurnEntry
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import java.awt.event.KeyEvent
import java.util.Locale
import javax.swing.JFrame
import javax.swing.JToggleButton
import javax.swing.SwingUtilities
import kotlin.io.path.readText
import kotlin.io.path.writeText
import kotlin.math.roundToInt

/**
 * The chat panel through real turns: the real daemon and CLI against the stand-in model
 * (ui-scenario.json), driven as a user would (typing, Enter, clicks), under Xvfb. Each step
 * writes a screenshot to target/screenshots and checks what it shows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class ChatPanelTest {
    private lateinit var model: Model
    private lateinit var sandbox: Sandbox
    private lateinit var client: SidecarClient
    private lateinit var frame: JFrame
    private lateinit var panel: ChatPanel
    private var panelChat: dev.claudesidecar.core.Chat? = null

    /** Records, at each [ChatPanelHost.beforeAgentActs], how many prompts the transcript had then. */
    private val host = object : ChatPanelHost {
        val calls = mutableListOf<Int>()

        override fun beforeAgentActs() {
            calls += panel.transcript.entries.count { it is PromptEntry }
        }
    }

    @BeforeAll
    fun open() {
        model = Model.start("/ui-scenario.json")
        sandbox = Sandbox(model)
        sandbox.workspace.resolve("hello.py").writeText("print('hello')\n")
        client = sandbox.client()
        onEdt {
            FlatLightLaf.setup()
            panel = ChatPanel(host)
            frame = JFrame("chat").apply {
                contentPane = panel
                setSize(640, 900)
                isVisible = true
            }
        }
        val chat = runBlocking { client.openChat(NewChannelParams(sandbox.cwd), panel.listener) }
        panelChat = chat
        onEdt { panel.attach(chat) }
    }

    @AfterAll
    fun close() {
        if (::client.isInitialized) {
            // The daemon and the chat's CLI must be gone with the client.
            val pids = listOfNotNull(client.runningDaemon?.pid, panelChat?.pid?.toLong())
            client.close()
            assertAllGone(pids)
        }
        if (::frame.isInitialized) {
            onEdt {
                panel.dispose()
                frame.dispose()
            }
        }
        if (::sandbox.isInitialized) sandbox.close()
        if (::model.isInitialized) model.close()
    }

    private fun text() = visibleText(panel)

    private fun turns() = panel.transcript.entries.count { it is TurnEntry }

    /** Types [prompt] into the prompt area and presses Enter, as a user does. */
    private fun type(prompt: String) = onEdt {
        val area = panel.prompt.text
        area.requestFocusInWindow()
        area.text = prompt
        area.dispatchEvent(KeyEvent(area, KeyEvent.KEY_PRESSED, System.currentTimeMillis(), 0, KeyEvent.VK_ENTER, '\n'))
    }

    private fun awaitTurn(count: Int) {
        waitFor("turn $count to end", describe = ::text) { turns() >= count }
        waitFor("the streamed text to be drawn") { !panel.drawPending }
        settle()
    }

    private fun tool(name: String) = onEdt { panel.transcript.entries.filterIsInstance<ToolEntry>().last { it.name == name } }

    @Test
    @Order(1)
    fun `a prompt sent with Enter streams its markdown answer, with thinking and a footer`() {
        type("Please explain hello.py")
        assertEquals("", onEdt { panel.prompt.text.text }, "Enter sent the prompt and emptied the area")
        waitFor("the answer to stream", describe = ::text) { text().contains("prints a greeting") }
        awaitTurn(1)
        val shown = text()
        assertTrue(shown.contains("Please explain hello.py"), shown)
        assertTrue(shown.contains("Thought"), "the thinking is collapsed to one line: $shown")
        assertTrue(shown.contains("print('hello')") && shown.contains("Run python3 hello.py"), "markdown rendered: $shown")
        assertTrue(!shown.contains("**") && !shown.contains("```"), "no markdown syntax left: $shown")
        assertTrue(Regex("""\d+\.\d s""").containsMatchIn(shown), "the footer shows the duration: $shown")
        assertEquals(listOf(0), onEdt { host.calls.toList() }, "the host saved its documents before the prompt went out")
        screenshot(panel, "1-answer")
    }

    @Test
    @Order(2)
    fun `an Edit asks with its diff, Allow runs it and the file changes`() {
        type("greet the world")
        waitFor("the permission card", describe = ::text) { find<ToolPermissionCard>(panel.dock).isNotEmpty() }
        val card = onEdt { find<ToolPermissionCard>(panel.dock).single() }
        val cardText = onEdt { visibleText(card) }
        assertTrue(cardText.contains("Allow Edit?") && cardText.contains("hello.py"), cardText)
        assertTrue(cardText.contains("-print('hello')") && cardText.contains("+print('hello, world')"), "the diff lines: $cardText")
        assertTrue(cardText.contains("Allow all edits for this session"), "allow always from the suggestions: $cardText")
        // The card comes with the permission request, the status line with the channel's state: two notifications.
        waitFor("the status line to say it waits", describe = ::text) { text().contains("Waiting for your answer") }
        screenshot(panel, "2-permission")

        onEdt { find<javax.swing.JButton>(card).first { it.text == "Allow" }.doClick() }
        assertEquals(listOf(0, 1, 2), onEdt { host.calls.toList() }, "and before the prompt and the answer of this turn")
        awaitTurn(2)
        assertEquals("print('hello, world')\n", sandbox.workspace.resolve("hello.py").readText())
        val edit = tool("Edit")
        assertEquals(ToolStatus.DONE, edit.status)
        waitFor("the card to go") { find<ToolPermissionCard>(panel.dock).isEmpty() }
        assertTrue(text().contains("Greeting changed."))
        assertTrue(text().contains("+1 −1"), "the row sums the edit up: ${text()}")
        screenshot(panel, "3-allowed")
    }

    @Test
    @Order(3)
    fun `a question is answered by clicking an option`() {
        type("Which colour?")
        waitFor("the question card", describe = ::text) { find<QuestionCard>(panel.dock).isNotEmpty() }
        val card = onEdt { find<QuestionCard>(panel.dock).single() }
        val cardText = onEdt { visibleText(card) }
        assertTrue(
            cardText.contains("Which colour should the button be?") && cardText.contains("Red") && cardText.contains("Blue"),
            cardText,
        )
        screenshot(panel, "4-question")

        onEdt { find<JToggleButton>(card).first { it.actionCommand == "Blue" }.doClick() }
        awaitTurn(3)
        val ask = tool("AskUserQuestion")
        assertEquals(AskState.ALLOWED, ask.permission?.decision)
        assertTrue(ask.result!!.text.contains("\"Which colour should the button be?\"=\"Blue\""), ask.result!!.text)
        assertTrue(text().contains("Blue it is."))
    }

    @Test
    @Order(4)
    fun `Deny with a reason leaves the file and tells Claude why`() {
        type("shout it")
        waitFor("the permission card", describe = ::text) { find<ToolPermissionCard>(panel.dock).isNotEmpty() }
        val first = onEdt { find<ToolPermissionCard>(panel.dock).single() }
        onEdt {
            find<javax.swing.JTextField>(first).single().text = "Keep it lower case."
            // The IDE's theme changes while the user writes: the card is made again, the reason kept.
            SwingUtilities.updateComponentTreeUI(frame)
        }
        waitFor("the card to be made again") { find<ToolPermissionCard>(panel.dock).singleOrNull().let { it != null && it !== first } }
        val card = onEdt { find<ToolPermissionCard>(panel.dock).single() }
        assertEquals("Keep it lower case.", onEdt { find<javax.swing.JTextField>(card).single().text })
        onEdt { find<javax.swing.JButton>(card).first { it.text == "Deny" }.doClick() }
        awaitTurn(4)
        assertEquals("print('hello, world')\n", sandbox.workspace.resolve("hello.py").readText())
        val edit = tool("Edit")
        assertEquals(ToolStatus.DENIED, edit.status)
        assertEquals("Keep it lower case.", edit.result?.text)
        assertTrue(text().contains("Understood, I left it as it is."))
        assertTrue(text().contains("Denied: Keep it lower case."), "the row says why: ${text()}")
        waitFor("the context meter") { text().contains("% context") }
        screenshot(panel, "5-denied")
    }

    @Test
    @Order(5)
    fun `Stop interrupts a streaming answer, and its footer says Interrupted once`() {
        type("ramble on")
        waitFor("the answer to stream", describe = ::text) { text().contains("word word") }
        onEdt { panel.prompt.stopButton.doClick() }
        awaitTurn(5)
        val shown = text()
        screenshot(panel, "5-interrupted")
        assertEquals(1, Regex("Interrupted").findAll(shown).count(), shown)
        assertTrue(shown.lines().single { it.contains("Interrupted") }.startsWith("Interrupted  ·  "), "the footer says it: $shown")
    }

    @Test
    @Order(6)
    fun `every text reads well in the light theme, and again after a switch to the dark one`() {
        // Every answer drawn first: a view the transcript made anew (its window moved with the
        // last turn) paints nothing until its markdown, parsed on another thread, is in (ci55
        // read "Blue it is." at 1.00:1: its area blank).
        settle()
        assertEquals(emptyList<String>(), onEdt { lowContrast(panel) }, "texts below 4.5:1 in the light theme")
        onEdt {
            FlatDarkLaf.setup()
            SwingUtilities.updateComponentTreeUI(frame)
        }
        waitFor("the chat to redraw in the dark theme", describe = { lowContrast(panel).joinToString("\n") }) {
            lowContrast(panel).isEmpty() && Theme.dark
        }
        assertEquals(Theme.accent.rgb, onEdt { panel.prompt.sendButton.background.rgb }, "Send keeps the accent colour")
        screenshot(panel, "6-dark")
    }

    @Test
    @Order(7)
    fun `the conversation resumed in a new panel shows its prompts, tools, decisions, +N -M and results again`() {
        val resumedPanel = onEdt { ChatPanel() }
        val resumedFrame = onEdt {
            JFrame("resumed").apply {
                contentPane = resumedPanel
                setSize(640, 900)
                isVisible = true
            }
        }
        try {
            val chat = runBlocking { client.resumeChat(sandbox.cwd, panelChat!!.sessionId!!, listener = resumedPanel.listener) }
            onEdt { resumedPanel.attach(chat) }
            waitFor("the history", describe = {
                visibleText(resumedPanel)
            }) { visibleText(resumedPanel).contains("Understood, I left it as it is.") }
            settle() // the views of the entries above the last: made in the tasks after it
            val shown = onEdt { visibleText(resumedPanel) }
            for (said in listOf("Please explain hello.py", "Greeting changed.", "+1 −1", "Blue it is.", "Denied: Keep it lower case.")) {
                assertTrue(shown.contains(said), "$said in: $shown")
            }
            assertEquals(1, Regex("Interrupted").findAll(shown).count(), "the interrupted answer says so once: $shown")
            val tools = onEdt { resumedPanel.transcript.entries.filterIsInstance<ToolEntry>() }
            assertEquals(listOf(ToolStatus.DONE, ToolStatus.DONE, ToolStatus.DENIED), tools.map { it.status })
            assertEquals(AskState.ALLOWED, tools.first { it.name == "AskUserQuestion" }.permission?.decision)
            // The header as the live panel's: the context meter and the cost so far.
            val live = panelChat!!
            assertEquals(live.totalCostUsd, chat.totalCostUsd, 1e-9)
            val context = live.context ?: error("the live chat has no context meter")
            assertEquals(context, chat.context)
            assertTrue(shown.contains("${context.percentage.roundToInt()}% context"), shown)
            assertTrue(shown.contains(String.format(Locale.ROOT, "$%.2f", live.totalCostUsd)), shown)
            screenshot(resumedPanel, "6-resumed")
        } finally {
            onEdt {
                resumedPanel.dispose()
                resumedFrame.dispose()
            }
        }
    }

    @Test
    @Order(8)
    fun `the session list shows this conversation and Enter opens it`() {
        val opened = mutableListOf<String>()
        val list = onEdt { SessionList(client, sandbox.cwd) { opened += it.sessionId }.also { it.load() } }
        waitFor("the session to be listed", describe = { visibleText(list) }) { list.list.model.size > 0 }
        val session = onEdt { list.list.model.getElementAt(0) }
        assertEquals(panelChat?.sessionId, session.sessionId)
        assertEquals("Please explain hello.py", session.firstPrompt)
        onEdt {
            list.list.selectedIndex = 0
            list.list.actionMap.get(ChoiceList.CHOOSE).actionPerformed(null)
            list.dispose()
        }
        assertEquals(listOf(session.sessionId), opened)
    }
}
