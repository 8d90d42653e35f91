package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Recorder
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.assumeFeature
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.WorktreeOptions
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.awt.Window
import javax.swing.JButton
import javax.swing.JDialog
import javax.swing.JFrame
import javax.swing.SwingUtilities
import kotlin.io.path.writeText

/**
 * The chat list ("who needs you") against the real daemon and CLI, in a git repository:
 * a chat waiting for a permission comes first and is counted in the heading; a worktree chat
 * shows its branch and what it changed; Review lists its files with the selected file's diff
 * (Merge… and Discard…: WorktreeDialogsTest). In the app: New chat in worktree… names the worktree after the task's first words and sends the
 * task; All chats counts the chats waiting, and one no tab shows raises a notice once per
 * wait. Under Xvfb; screenshots in target/screenshots.
 */
class ChatRosterTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private lateinit var client: SidecarClient
    private val pids = mutableSetOf<Long>()
    private var frame: JFrame? = null
    private var panel: ChatRosterPanel? = null
    private val opened = mutableListOf<String>()

    @BeforeEach fun setUp() {
        model = Model.start("/ui-scenario.json")
        box = Sandbox(model)
        box.workspace.resolve("hello.py").writeText("print('hello')\n")
        for (args in listOf(
            listOf("init", "-q", "-b", "main"),
            listOf("config", "user.email", "test@example.com"),
            listOf("config", "user.name", "Test"),
            listOf("add", "."),
            listOf("commit", "-q", "-m", "start"),
        )) {
            val git = ProcessBuilder(listOf("git") + args).directory(box.workspace.toFile()).redirectErrorStream(true).start()
            check(git.waitFor() == 0) { "git $args: ${git.inputStream.bufferedReader().readText()}" }
        }
        client = box.client()
    }

    @AfterEach fun tearDown() {
        try {
            onEdt {
                panel?.dispose()
                frame?.dispose()
            }
            client.close()
            assertAllGone(synchronized(pids) { pids.toList() })
        } finally {
            box.close()
            model.close()
        }
    }

    private fun test(body: suspend () -> Unit) = runBlocking {
        assumeFeature(client, SidecarClient.WATCH_CHANNELS)
        assumeFeature(client, SidecarClient.WORKTREES)
        body()
    }

    private fun showPanel(): ChatRosterPanel = onEdt {
        FlatLightLaf.setup()
        val p = ChatRosterPanel(client) { opened += it.channelId }
        frame = JFrame("Chats").apply {
            contentPane = p
            setSize(980, 300)
            isVisible = true
        }
        p.start()
        p
    }.also { panel = it }

    private suspend fun open(worktree: WorktreeOptions? = null): Recorder =
        Recorder(client, pids).start { client.openChat(NewChannelParams(cwd = box.cwd, worktree = worktree), it) }

    private fun rows(p: ChatRosterPanel): List<List<String>> =
        onEdt { (0 until p.table.rowCount).map { r -> (0 until p.table.columnCount).map { p.table.getValueAt(r, it).toString() } } }

    @Test fun `a chat waiting for a permission comes first, counted in the heading, with its branch and prompt`() = test {
        val plain = open()
        val agent = open(WorktreeOptions(name = "greeting"))
        val p = showPanel()
        waitFor("two chats listed") { p.table.rowCount == 2 }
        val since = agent.mark()

        agent.chat.send("greet the world")
        agent.next(Notifications.PERMISSION_REQUEST, since)
        waitFor("the waiting chat first", describe = { rows(p).toString() }) { p.heading.text == "Chats · 1 waiting for you" }

        val shown = rows(p)
        assertEquals(listOf("waiting for you", "⎇ worktree-greeting"), shown[0].take(2), "$shown")
        assertEquals("greet the world", shown[0][4])
        assertEquals("idle", shown[1][0])
        assertTrue(shown[1][1].endsWith("/workspace"), "the plain chat's folder: ${shown[1][1]}")
        assertTrue(shown[0][3].endsWith(" s ago"), shown[0][3])
        assertEquals(plain.chat.channelId, onEdt { p.selected?.channelId }, "the selection follows the chat, not the row")
        onEdt { p.table.setRowSelectionInterval(0, 0) }
        assertTrue(onEdt { p.mergeButton.isVisible && p.reviewButton.isEnabled }, "worktree actions offered for the worktree chat")
        screenshot(p, "chat-list-waiting")
        onEdt { p.table.setRowSelectionInterval(1, 1) }
        assertFalse(onEdt { p.mergeButton.isEnabled }, "no merge for a chat in the folder itself")
        onEdt { p.openButton.doClick() }
        assertEquals(listOf(plain.chat.channelId), opened)
    }

    @Test fun `in the app, All chats lists a worktree chat opened there, and Open selects its tab`() = test {
        withApp { app ->
            onEdt { app.openChat("Plain") }
            onEdt { app.openChat("⎇ search", worktree = WorktreeOptions(name = "search")) }
            waitFor("both chats open") { app.panels.size == 2 && app.panels.all { it.chat != null } }
            assertTrue(onEdt { app.worktreeButton.isVisible }, "New chat in worktree… offered: the daemon serves worktrees")
            onEdt { app.tabs.selectedIndex = 0 }

            onEdt { app.chatsButton.doClick() }
            val list = onEdt { find<ChatRosterPanel>(app.chatList!!.contentPane).single() }
            waitFor("both chats listed", describe = { rows(list).toString() }) { list.table.rowCount == 2 }
            val worktreeRow = rows(list).indexOfFirst { it[1] == "⎇ worktree-search" }
            assertEquals("no changes", rows(list)[worktreeRow][2])
            onEdt {
                list.table.setRowSelectionInterval(worktreeRow, worktreeRow)
                list.openButton.doClick()
            }

            assertEquals(1, onEdt { app.tabs.selectedIndex }, "the worktree chat's own tab, not a second copy")
            assertEquals(2, onEdt { app.panels.size })
        }
    }

    /** The app on the test's folder, without a chat; [body] runs with it, then its chats' pids are kept and it closes. */
    private suspend fun withApp(body: suspend (App) -> Unit) {
        val app = onEdt {
            FlatLightLaf.setup()
            App(client, box.cwd).also {
                it.frame.setSize(1000, 700)
                it.show(firstChat = false)
            }
        }
        try {
            body(app)
        } finally {
            onEdt {
                app.panels.forEach { p -> p.chat?.pid?.let { synchronized(pids) { pids += it.toLong() } } }
                app.close()
            }
        }
    }

    @Test fun `New chat in worktree names the worktree after the task's first words and sends the task first`() = test {
        withApp { app ->
            waitFor("New chat in worktree… offered") { app.worktreeButton.isVisible }
            SwingUtilities.invokeLater { app.worktreeButton.doClick() } // its dialog is modal: the test goes on meanwhile
            var shown: JDialog? = null
            waitFor("the dialog") {
                shown =
                    Window.getWindows().filterIsInstance<JDialog>().firstOrNull { it.isShowing && it.title == App.WORKTREE_DIALOG_TITLE }
                shown != null
            }
            val dialog = shown!!
            val form = onEdt { find<WorktreeChatForm>(dialog.contentPane).single() }
            onEdt { form.task.text = "Greet the world, kindly please" }
            val suggested = onEdt { form.name.text }
            screenshot(dialog.rootPane, "new-chat-in-worktree")
            onEdt { find<JButton>(dialog.contentPane).single { it.text == "OK" }.doClick() }

            waitFor("the chat open") { app.panels.size == 1 && app.panels[0].chat != null }
            val panel = onEdt { app.panels.single() }
            val chat = panel.chat!!
            waitFor("the task's permission request", describe = { visibleText(panel) }) { chat.permissionRequests.isNotEmpty() }

            assertEquals("greet-the-world-kindly", suggested)
            assertEquals("worktree-greet-the-world-kindly", chat.info?.worktree?.branch)
            assertTrue("Greet the world, kindly please" in onEdt { visibleText(panel) }, "the task shown as the chat's first prompt")
        }
    }

    @Test fun `a chat waiting in a tab of the app is counted on All chats but raises no notice`() = test {
        withApp { app ->
            onEdt { app.openChat("Greeting", firstPrompt = "greet the world") }
            waitFor("the chat open") { app.panels.singleOrNull()?.chat != null }
            val chat = onEdt { app.panels.single().chat!! }
            waitFor("the permission request") { chat.permissionRequests.isNotEmpty() }

            waitFor("the count", describe = { app.chatsButton.text }) { app.chatsButton.text == "All chats · 1 waiting" }
            assertEquals(0, onEdt { app.waitNotices.raised }, "the chat's own tab shows its request")
        }
    }

    @Test fun `a chat no tab shows raises one notice while it waits, gone once answered`() = test {
        withApp { app ->
            val agent = open(WorktreeOptions(name = "greeting"))
            val since = agent.mark()
            agent.chat.send("greet the world")
            val ask = agent.next(Notifications.PERMISSION_REQUEST, since)

            waitFor("the notice", describe = { app.waitNotices.texts.toString() }) { app.waitNotices.texts.isNotEmpty() }
            assertEquals(
                listOf("Claude in ⎇ worktree-greeting waits for your answer: ${ask.displayName ?: ask.toolName}"),
                onEdt {
                    app.waitNotices.texts
                },
            )
            waitFor("the count", describe = { app.chatsButton.text }) { app.chatsButton.text == "All chats · 1 waiting" }
            // Painted in the window (the notice has no background of its own).
            val faint = onEdt { lowContrast(app.frame.rootPane) }.filter { it.startsWith("\"Claude in") || it.startsWith("\"All chats") }
            assertEquals(emptyList<String>(), faint, "the count and the notice read")
            screenshot(app.frame.rootPane, "app-chat-waiting-notice")
            agent.chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
            agent.next(Notifications.TURN_ENDED, since)

            waitFor("the notice gone", describe = { app.waitNotices.texts.toString() }) {
                app.waitNotices.texts.isEmpty() && app.chatsButton.text == "All chats"
            }
            assertEquals(1, onEdt { app.waitNotices.raised }, "told once in the whole wait")
        }
    }

    /** Runs "greet" in a worktree chat and allows its Edit: hello.py changed in the chat's worktree, not committed. */
    private suspend fun notesChat(p: ChatRosterPanel): Pair<Recorder, ChannelSummary> {
        val agent = open(WorktreeOptions(name = "greet"))
        val since = agent.mark()
        agent.chat.send("greet the world")
        val ask = agent.next(Notifications.PERMISSION_REQUEST, since)
        agent.chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
        agent.next(Notifications.TURN_ENDED, since)
        waitFor("the change counted", describe = { rows(p).toString() }) { rows(p).firstOrNull()?.get(2) == "+1 −1 · 1 file" }
        return agent to onEdt { p.selected!! }
    }

    @Test fun `review lists the worktree's changed files and shows the selected file's diff`() = test {
        val p = showPanel()
        val (_, channel) = notesChat(p)

        onEdt { p.reviewButton.doClick() }
        waitFor("the review") { reviewOpen() }
        val review = onEdt { find<WorktreeReview>(reviewDialog()!!.contentPane).single() }

        val files = onEdt { (0 until review.files.model.size).map { WorktreeReview.label(review.files.model.getElementAt(it)) } }
        assertEquals(listOf("M  hello.py  +1 −1  (uncommitted)"), files)
        val diff = onEdt { review.diff!!.area.text }
        assertTrue("-print('hello')\n+print('hello, world')" in diff, diff)
        assertTrue(diff.startsWith("@@ -1 +1 @@"), "git's header lines left out, the file list names the file: $diff")
        assertEquals("⎇ worktree-greet", ChatRows.place(channel))
        screenshot(reviewDialog()!!.rootPane, "worktree-review")
    }

    private fun reviewDialog() = onEdt {
        java.awt.Window.getWindows().filterIsInstance<javax.swing.JDialog>().firstOrNull {
            it.isShowing &&
                it.title.startsWith("Review ")
        }
    }

    private fun reviewOpen() = reviewDialog() != null
}
