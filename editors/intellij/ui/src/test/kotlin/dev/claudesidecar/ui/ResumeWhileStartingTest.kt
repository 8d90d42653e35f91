package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.assumeFeature
import dev.claudesidecar.core.protocol.GetHistoryParams
import dev.claudesidecar.core.protocol.ListChannelsParams
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.TranscriptParams
import dev.claudesidecar.core.transcript.ChatState
import dev.claudesidecar.core.transcript.id
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.awt.Component
import java.awt.Dialog
import java.awt.Window
import java.nio.file.Path
import javax.swing.JTextArea
import kotlin.io.path.createFile

/**
 * A stored session picked in the app shows its end at once, while its CLI starts (seconds for
 * a long session): the session's last page as stored, the status saying the chat starts, the
 * prompt usable. Once the chat opens, its channel's page (the same entries) draws nothing
 * again. The real daemon and CLI against the stand-in model, the CLI held on `--resume`
 * (tests/fixtures/held-cli.sh) until the test creates [go]: what is checked before happens
 * while the chat has not opened, however slow the machine; the test ends the held CLI to make
 * the resume fail (the tab then keeps what it showed). A stored session of [COPIES]
 * copies of a short real one (84 entries), pages of [PAGE]; under Xvfb.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ResumeWhileStartingTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient
    private lateinit var app: App
    private lateinit var go: Path

    private val panel: ChatPanel get() = onEdt { app.selectedPanel!! }
    private val view: TranscriptView get() = panel.transcriptView

    @BeforeAll fun startModel() {
        model = Model.start()
    }

    @AfterAll fun stopModel() = model.close()

    @BeforeEach fun openApp() {
        box = Sandbox(model)
        go = box.root.resolve("go")
        client = box.client(env = box.heldResumeEnv(go), pageEntries = PAGE)
        runBlocking { assumeFeature(client, SidecarClient.TRANSCRIPT_PAGING) }
        app = onEdt {
            FlatLightLaf.setup()
            App(client, box.cwd).apply {
                frame.setSize(760, 700)
                show(firstChat = false)
            }
        }
    }

    @AfterEach fun closeApp() {
        val pids = listOfNotNull(client.runningDaemon?.pid) + onEdt { app.panels.mapNotNull { it.chat?.pid?.toLong() } }
        onEdt { app.close() }
        client.close()
        assertAllGone(pids)
        box.close()
    }

    /**
     * Picks the long stored session, as a double-click in the session list does; waits until
     * its end is on screen. Returns the session's id.
     */
    private fun resumeHeld(): String {
        val sessionId = box.storeLongSession(COPIES)
        onEdt { app.openChat("Resumed", resume = sessionId) }
        waitFor("the stored end on screen", timeoutMs = 30_000, describe = { visibleText(panel) }) {
            val keys = panel.transcript.keys
            keys.isNotEmpty() && view.inSight(keys.last())
        }
        settle()
        return sessionId
    }

    /** The daemon's chats. */
    private fun channels() = runBlocking { client.request(Methods.LIST_CHANNELS, ListChannelsParams()) }.channels

    /**
     * Ends the held resume's CLI before it started: the daemon's `claude/newChannel` for it
     * fails (as a CLI that cannot resume the session does); waits until [resumed] has heard
     * (it says it could not open, or its tab went).
     */
    private fun failResume(resumed: ChatPanel) {
        ProcessHandle.of(channels().single().pid.toLong()).get().destroy()
        waitFor("the resume to fail", describe = { visibleText(resumed) }) {
            resumed.chatState.status.openFailure != null || resumed !in app.panels
        }
        settle()
    }

    /** Writes [text] in the prompt and sends it, as a user does. */
    private fun sendInPrompt(text: String) = onEdt {
        panel.prompt.text.text = text
        panel.prompt.sendButton.doClick()
    }

    /** The windows showing other than the app's own (a message box would be one). */
    private fun otherWindowsShowing(): List<String> =
        onEdt { Window.getWindows().filter { it.isShowing && it !== app.frame }.map { (it as? Dialog)?.title ?: it.name } }

    /** Lets the resume's CLI start; waits until the chat is open and its channel's page applied. */
    private fun release() {
        go.createFile()
        waitFor("the chat to open", describe = { visibleText(panel) }) { panel.chat != null && !panel.chatState.previewing }
        settle()
    }

    /** The entry views in the transcript's column, top to bottom. */
    private fun entryViews(): List<Component> = onEdt { allComponents(view.scrollPane.viewport.view).filter { EntryView.of(it) != null } }

    @Test fun `a picked session's end is on screen before its chat opens, the status saying it starts`() {
        resumeHeld()
        onEdt {
            assertNull(panel.chat, "the chat has not opened")
            assertEquals(PAGE, panel.transcript.keys.size, "the last page")
            assertTrue(panel.transcript.hasOlder, "older entries to read")
            assertEquals("Starting…", panel.status.text)
            assertTrue(panel.prompt.sendButton.isEnabled, "the prompt can be sent")
        }
    }

    @Test fun `once the chat opens nothing is drawn again and the view stays where it was`() {
        resumeHeld()
        val views = entryViews()
        val (drawn, position) = onEdt { view.entriesDrawn to view.scrollPane.viewport.viewPosition }
        release()
        onEdt {
            assertEquals(drawn, view.entriesDrawn, "no entry drawn again")
            assertEquals(position, view.scrollPane.viewport.viewPosition, "the view did not move")
            assertTrue(view.inSight(panel.transcript.keys.last()), "the end in sight")
        }
        assertTrue(views.zip(entryViews()).all { (before, after) -> before === after } && views.size == entryViews().size, "the same views")
    }

    @Test fun `a prompt sent while the chat starts is sent once it opens`() {
        resumeHeld()
        sendInPrompt(WAITING_PROMPT)
        onEdt {
            assertEquals("", panel.prompt.text.text, "taken from the prompt")
            assertTrue(panel.status.text.contains("your message is sent once it has"), panel.status.text)
        }
        settle()
        val shown = visibleText(panel)
        assertTrue("$WAITING_PROMPT\n${UserView.WAITING}" in shown, "shown under the conversation, waiting: $shown")
        screenshot(panel, "resume-prompt-waiting")
        release()
        waitFor("the answer after the prompt", describe = { visibleText(panel) }) {
            val entries = panel.transcript.entries
            val prompt = entries.indexOfLast { it is PromptEntry && it.text == WAITING_PROMPT }
            prompt >= 0 && entries.drop(prompt).any { it is TextEntry && it.text == "Hello from the stand-in model." }
        }
        assertEquals(1, onEdt { panel.transcript.entries.count { it is PromptEntry && it.text == WAITING_PROMPT } }, "sent once")
        waitFor("the prompt no longer said to wait", describe = { visibleText(panel) }) { UserView.WAITING !in visibleText(panel) }
    }

    @Test fun `scrolling up while the chat starts reads the page before once it opens, each entry once, the view held`() {
        resumeHeld()
        repeat(20) {
            if (onEdt { view.scrollPane.viewport.viewPosition.y } > 0) wheelUp(view.scrollPane, 50)
            settle()
        }
        waitFor("the view to ask for the page before") { view.loadingOlder }
        val (top, offset) = onEdt {
            val viewport = view.scrollPane.viewport
            val c = entryViews().first { it.y + it.height > viewport.viewPosition.y }
            c to c.y - viewport.viewPosition.y
        }
        release()
        waitFor("the page before", describe = { visibleText(panel) }) { panel.transcript.keys.size == 2 * PAGE && !view.loadingOlder }
        settle()
        val chat = onEdt { panel.chat!! }
        val all = runBlocking { client.request(Methods.GET_TRANSCRIPT, TranscriptParams(chat.channelId!!)).entries.map { it.id() } }
        assertEquals(all.takeLast(2 * PAGE), onEdt { panel.transcript.entries.map { it.id() } }, "each entry once, in order")
        onEdt { assertEquals(offset, top.y - view.scrollPane.viewport.viewPosition.y, "what was at the top stays there") }
    }

    @Test fun `a prompt sent while the chat starts stays in its tab, not sent and saying why, when the chat cannot open`() {
        val sessionId = resumeHeld()
        val resumed = panel
        sendInPrompt(WAITING_PROMPT)
        settle()
        failResume(resumed)
        onEdt {
            assertEquals(listOf(resumed), app.panels, "the tab stays")
            assertEquals("Resumed ${ChatPanel.NOT_OPEN_MARK}", app.tabs.getTitleAt(0))
            assertFalse(resumed.prompt.sendButton.isEnabled, "nothing more is sent from it")
            assertEquals(StatusLine.NOT_OPEN, resumed.status.text)
            assertEquals(PAGE + 2, resumed.transcript.keys.size, "the stored page, then the reason and the prompt")
        }
        val reason = onEdt { resumed.chatState.status.openFailure!! }
        assertTrue(reason.isNotBlank(), "a reason")
        val shown = visibleText(resumed)
        val reasonThenPrompt = "${ChatState.OPEN_FAILED_PREFIX}$reason\n$WAITING_PROMPT\n${UserView.NOT_SENT}$reason"
        assertTrue(reasonThenPrompt in shown, "the reason, then the prompt not sent: $shown")
        assertFalse(UserView.WAITING in shown, "no longer said to wait: $shown")
        onEdt {
            val text = find<JTextArea>(view.scrollPane.viewport.view).single { it.text == WAITING_PROMPT }
            text.selectAll()
            assertEquals(WAITING_PROMPT, text.selectedText, "the prompt's text can be selected and copied")
        }
        sendInPrompt("written after")
        onEdt { assertEquals("written after", resumed.prompt.text.text, "Send does nothing: the text stays") }
        assertEquals(emptyList<String>(), otherWindowsShowing(), "the tab says why: no message box")
        screenshot(resumed, "resume-failed-prompt-not-sent")
        // Nothing went to the daemon: no chat there, the session holds no such prompt.
        waitFor("the daemon to drop the chat that could not start") { channels().isEmpty() }
        val history = runBlocking { client.request(Methods.GET_HISTORY, GetHistoryParams(box.cwd, sessionId)) }
        assertTrue(history.entries.none { it is PromptEntry && it.text == WAITING_PROMPT }, "not in the session")
    }

    @Test fun `a picked session whose chat cannot open keeps its stored end in its tab and says why`() {
        resumeHeld()
        val resumed = panel
        failResume(resumed)
        onEdt {
            assertEquals(listOf(resumed), app.panels, "the tab stays")
            assertEquals(PAGE + 1, resumed.transcript.keys.size, "the stored page, then the reason")
            val notice = resumed.transcript.entries.last() as NoticeEntry
            assertEquals("${ChatState.OPEN_FAILED_PREFIX}${resumed.chatState.status.openFailure}", notice.text)
            assertFalse(resumed.prompt.sendButton.isEnabled, "nothing is sent from it")
        }
        assertEquals(emptyList<String>(), otherWindowsShowing(), "the tab says why: no message box")
    }

    @Test fun `a chat that cannot open reads its earlier messages from the stored session as the user scrolls up, each once`() {
        val sessionId = resumeHeld()
        val resumed = panel
        failResume(resumed)
        // A turn of the wheel at a time, each once the page asked for before it (if any) came.
        for (turn in 1..200) {
            waitFor("the page asked for", describe = { visibleText(resumed) }) { onEdt { !view.loadingOlder } }
            if (onEdt { !resumed.transcript.hasOlder }) break
            wheelUp(view.scrollPane, 50)
            settle()
        }
        waitFor("the stored session's first entry", describe = { visibleText(resumed) }) {
            onEdt { !resumed.transcript.hasOlder && !view.loadingOlder }
        }
        val stored = runBlocking { client.request(Methods.GET_HISTORY, GetHistoryParams(box.cwd, sessionId)) }.entries.map { it.id() }
        assertTrue(stored.size > 2 * PAGE, "a session of more than two pages: ${stored.size} entries")
        val shown = onEdt { resumed.transcript.entries.filter { it !is NoticeEntry }.map { it.id() } }
        assertEquals(stored, shown, "each entry once, in order")
        assertTrue(onEdt { resumed.transcript.entries.last() } is NoticeEntry, "the reason still last")
    }

    @Test fun `closing the app while a chat starts shows no message box`() {
        resumeHeld()
        val held = ProcessHandle.of(channels().single().pid.toLong()).get()
        onEdt { app.close() }
        // The resume fails now, the CLI gone before it started: an app still at work would say so.
        held.destroy()
        waitFor("the daemon to drop the chat that could not start") { channels().isEmpty() }
        // The failed resume was answered before that list (one connection, in order); what it
        // queued on the EDT has run after two more turns.
        repeat(2) { onEdt { } }
        assertEquals(emptyList<String>(), onEdt { Window.getWindows().filter { it.isShowing }.map { (it as? Dialog)?.title ?: it.name } })
    }

    private companion object {
        /** Taller than two screens: the view asks for no older page by itself. */
        const val PAGE = 40
        const val COPIES = 12
        const val WAITING_PROMPT = "hello, written while the chat started"
    }
}
