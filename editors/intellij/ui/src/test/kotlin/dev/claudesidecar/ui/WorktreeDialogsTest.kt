package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Recorder
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.assertAllGone
import dev.claudesidecar.core.assumeFeature
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.WorktreeOptions
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import java.nio.file.Path
import javax.swing.JComboBox
import javax.swing.JDialog
import javax.swing.JFrame
import javax.swing.JLabel
import javax.swing.JList
import javax.swing.JOptionPane
import javax.swing.JScrollPane
import javax.swing.JTextField
import kotlin.io.path.exists
import kotlin.io.path.readText
import kotlin.io.path.writeText

/**
 * Merge… and Discard… of the chat list as a user goes through them, against the real daemon
 * and CLI in a git repository: the chat "greet" changed hello.py in its worktree (not
 * committed). Merge asks for the strategy and the message, then says what it did or why
 * nothing was done (the user's own uncommitted change to the file, git without a name and
 * email: with the command that sets them); Discard asks, then names the work it would lose
 * and asks again, Cancel the default. Under Xvfb; screenshots in target/screenshots.
 */
class WorktreeDialogsTest {
    private lateinit var model: Model
    private lateinit var box: Sandbox
    private var client: SidecarClient? = null
    private val pids = mutableSetOf<Long>()
    private var frame: JFrame? = null
    private var panel: ChatRosterPanel? = null

    @BeforeEach fun setUp() {
        model = Model.start("/ui-scenario.json")
        box = Sandbox(model)
        box.workspace.resolve("hello.py").writeText("print('hello')\n")
        git("init", "-q", "-b", "main")
        git("config", "user.email", "test@example.com")
        git("config", "user.name", "Test")
        git("add", ".")
        git("commit", "-q", "-m", "start")
    }

    @AfterEach fun tearDown() {
        try {
            onEdt {
                panel?.dispose()
                frame?.dispose()
            }
            client?.close()
            assertAllGone(synchronized(pids) { pids.toList() })
        } finally {
            box.close()
            model.close()
        }
    }

    /** git [args] in the checkout; its output. */
    private fun git(vararg args: String): String {
        val git = ProcessBuilder(listOf("git") + args).directory(box.workspace.toFile()).redirectErrorStream(true).start()
        val out = git.inputStream.bufferedReader().readText()
        check(git.waitFor() == 0) { "git ${args.toList()}: $out" }
        return out.trim()
    }

    /** Runs [body] with a client whose daemon runs in [env]. */
    private fun test(env: Map<String, String?> = box.env, body: suspend (SidecarClient) -> Unit) = runBlocking {
        val c = box.client(env = env).also { client = it }
        assumeFeature(c, SidecarClient.WATCH_CHANNELS)
        assumeFeature(c, SidecarClient.WORKTREES)
        body(c)
    }

    /** The chat list in a window, with a worktree chat whose "greet" turn changed hello.py (allowed), selected. */
    private suspend fun greeted(client: SidecarClient): ChatRosterPanel {
        val p = onEdt {
            FlatLightLaf.setup()
            val p = ChatRosterPanel(client) { }
            frame = JFrame("Chats").apply {
                contentPane = p
                setSize(980, 300)
                isVisible = true
            }
            p.start()
            p
        }.also { panel = it }
        val agent = Recorder(client, pids).start {
            client.openChat(NewChannelParams(cwd = box.cwd, worktree = WorktreeOptions(name = "greet")), it)
        }
        val since = agent.mark()
        agent.chat.send("greet the world")
        val ask = agent.next(Notifications.PERMISSION_REQUEST, since)
        agent.chat.respondPermission(ask.requestId, PermissionDecision.ALLOW)
        agent.next(Notifications.TURN_ENDED, since)
        waitFor("the change counted", describe = { "${p.table.rowCount} rows" }) {
            p.table.rowCount == 1 && p.table.getValueAt(0, 2) == "+1 −1 · 1 file"
        }
        onEdt { p.table.setRowSelectionInterval(0, 0) }
        return p
    }

    /** Presses Merge…, picks [strategy] and types [message] in its form, and presses Merge; the dialog that answers. */
    private fun mergeThroughDialog(p: ChatRosterPanel, strategy: String, message: String, shot: String? = null): JDialog {
        submitMergeForm(p, strategy, message, shot)
        return awaitDialog(WorktreeDialogs.MERGED_TITLE, WorktreeDialogs.NOT_MERGED_TITLE)
    }

    /** Presses Merge…, picks [strategy] and types [message] in its form, and presses Merge. */
    private fun submitMergeForm(p: ChatRosterPanel, strategy: String, message: String, shot: String? = null) {
        clickLater(p.mergeButton)
        val form = awaitDialog(WorktreeDialogs.MERGE_TITLE)
        val field = onEdt { find<JTextField>(form.contentPane).single() }
        waitFor("the default button and the caret in the message", describe = {
            "default: ${form.rootPane.defaultButton?.text}, focus: ${form.focusOwner}"
        }) { form.rootPane.defaultButton?.text == WorktreeDialogs.MERGE && field.isFocusOwner }
        assertEquals("greet the world", onEdt { field.text }, "the chat's last prompt offered as the message")
        val strategies = onEdt { find<JComboBox<*>>(form.contentPane).single() }
        val offered = onEdt {
            (0 until strategies.itemCount).map {
                (strategies.renderer.getListCellRendererComponent(JList(), strategies.getItemAt(it), it, false, false) as JLabel).text
            }
        }
        assertEquals(listOf("merge", "rebase", "squash"), offered.map { it.substringBefore(" — ") }, "$offered")
        assertTrue(offered.all { it.substringAfter(" — ", "").isNotBlank() }, "each strategy says what it does: $offered")
        onEdt {
            strategies.selectedItem = strategy
            field.text = message
        }
        shot?.let { screenshot(form.rootPane, it) }
        press(form, WorktreeDialogs.MERGE)
    }

    /**
     * Holds the next `git worktree add` of the repository (the daemon's rebase makes one) in its
     * post-checkout hook until the returned file is written; the other file appears once it is held.
     */
    private fun holdNextCheckout(): Pair<Path, Path> {
        val held = box.root.resolve("checkout-held")
        val release = box.root.resolve("checkout-released")
        val hooks = Path.of(git("rev-parse", "--path-format=absolute", "--git-common-dir"), "hooks")
        hooks.toFile().mkdirs()
        // Bounded (60 s), so that a test that fails before it releases the hook leaves nothing running.
        hooks.resolve("post-checkout").writeText(
            "#!/bin/sh\ntouch '$held'\nfor i in $(seq 1200); do [ -e '$release' ] && exit 0; sleep 0.05; done\n",
        )
        hooks.resolve("post-checkout").toFile().setExecutable(true)
        return held to release
    }

    @Test fun `Merge and Discard are off while the chat's merge runs, on again once it has answered`() = test { client ->
        val p = greeted(client)
        val (held, release) = holdNextCheckout()

        submitMergeForm(p, "rebase", "Greet the world")
        waitFor("the merge under way, held in git") { held.exists() }
        val during = onEdt { listOf(p.reviewButton, p.mergeButton, p.discardButton).map { it.isEnabled } }
        release.writeText("")
        val answer = awaitDialog(WorktreeDialogs.MERGED_TITLE, WorktreeDialogs.NOT_MERGED_TITLE)
        val after = onEdt { listOf(p.reviewButton, p.mergeButton, p.discardButton).map { it.isEnabled } }
        val said = messageOf(answer)
        press(answer, "OK")

        assertEquals(listOf(true, false, false), during, "Review stays on; Merge… and Discard… off while it runs")
        assertEquals(WorktreeDialogs.MERGED_TITLE, answer.title, said)
        assertEquals(listOf(true, true, true), after)
        assertEquals("print('hello, world')\n", box.workspace.resolve("hello.py").readText())
    }

    @Test fun `the review's heading counts one file as a file`() = test { client ->
        val p = greeted(client)

        onEdt { p.reviewButton.doClick() }
        val review = awaitDialog("Review worktree-greet")
        val heading = onEdt { find<JLabel>(review.contentPane).first { it.text.startsWith("worktree-greet against ") }.text }
        onEdt { review.dispose() }

        assertTrue(heading.endsWith(": 1 file, +1 −1"), heading)
    }

    @Test fun `Discard after a merge asks once and says what it removed`() = test { client ->
        val p = greeted(client)
        val worktree = onEdt { p.selected!!.worktree!! }
        press(mergeThroughDialog(p, "merge", "Greet the world"), "OK")

        clickLater(p.discardButton)
        press(awaitDialog(WorktreeDialogs.DISCARD_TITLE), WorktreeDialogs.DISCARD)
        val done = awaitDialog(WorktreeDialogs.DISCARDED_TITLE, WorktreeDialogs.NOT_DISCARDED_TITLE, WorktreeDialogs.DISCARD_UNMERGED_TITLE)
        val told = messageOf(done)
        screenshot(done.rootPane, "discarded")
        press(done, "OK")

        assertEquals(WorktreeDialogs.DISCARDED_TITLE, done.title, told)
        assertEquals(
            "Removed ${worktree.branch} and its worktree ${worktree.path}; the chat ended, its session stays on disk (resumable).",
            told,
        )
        assertTrue(!Path.of(worktree.path).exists())
    }

    @Test fun `Merge asks for the strategy and message, then brings the agent's change into the checkout`() = test { client ->
        val p = greeted(client)

        val answer = mergeThroughDialog(p, "squash", "Greet the whole world", shot = "merge-form")

        assertEquals(WorktreeDialogs.MERGED_TITLE, answer.title, messageOf(answer))
        val said = messageOf(answer)
        press(answer, "OK")
        assertTrue(said.startsWith("Merged into main (squash): 1 file changed; main is now at "), said)
        assertEquals("print('hello, world')\n", box.workspace.resolve("hello.py").readText())
        assertEquals("Greet the whole world", git("log", "-1", "--format=%s"))
        assertTrue(git("log", "-1", "--format=%h") in said, "the commit named: $said")
    }

    @Test fun `Merge over the user's uncommitted change to the same file names the file and changes nothing`() = test { client ->
        val p = greeted(client)
        box.workspace.resolve("hello.py").writeText("print('hi')\n")
        val head = git("rev-parse", "HEAD")

        val answer = mergeThroughDialog(p, "merge", "Greet the world")

        assertEquals(WorktreeDialogs.NOT_MERGED_TITLE, answer.title)
        val said = messageOf(answer)
        screenshot(answer.rootPane, "merge-refused-uncommitted")
        press(answer, "OK")
        assertTrue(said.startsWith("Your checkout has uncommitted changes in files the merge would change; nothing was changed."), said)
        assertTrue(said.endsWith("Commit or stash these first:\n  hello.py"), said)
        assertEquals("print('hi')\n", box.workspace.resolve("hello.py").readText())
        assertEquals(head, git("rev-parse", "HEAD"))
    }

    @Test fun `Merge with git knowing no name and email shows the command that sets them and changes nothing`() {
        // A user who never told git who they are: no global or system config, no identity in
        // the environment, and git told not to guess one from the machine's names.
        val noGlobal = box.root.resolve("no-global-config").also { it.writeText("") }
        git("config", "--unset", "user.name")
        git("config", "--unset", "user.email")
        git("config", "user.useConfigOnly", "true")
        val env = box.env + mapOf("GIT_CONFIG_GLOBAL" to noGlobal.toString(), "GIT_CONFIG_NOSYSTEM" to "1") +
            listOf("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL").associateWith { null }
        test(env) { client ->
            val p = greeted(client)
            val head = git("rev-parse", "HEAD")

            val answer = mergeThroughDialog(p, "squash", "Greet the whole world")

            assertEquals(WorktreeDialogs.NOT_MERGED_TITLE, answer.title)
            val said = messageOf(answer)
            screenshot(answer.rootPane, "merge-refused-no-git-identity")
            press(answer, "OK")
            assertTrue(said.startsWith("git has no name and email to commit the chat's work with; nothing was changed."), said)
            assertTrue("\n\nSet them in a terminal, then merge again:\n  git config --global user.name " in said, said)
            assertEquals("print('hello')\n", box.workspace.resolve("hello.py").readText())
            assertEquals(head, git("rev-parse", "HEAD"))
        }
    }

    @Test fun `Discard names the unmerged work in a second question, Cancel its default, Discard anyway removes it`() = test { client ->
        val p = greeted(client)
        val worktree = onEdt { p.selected!!.worktree!! }
        assertTrue(Path.of(worktree.path).exists())

        clickLater(p.discardButton)
        val confirm = awaitDialog(WorktreeDialogs.DISCARD_TITLE)
        assertTrue(worktree.path in messageOf(confirm) && worktree.branch in messageOf(confirm), messageOf(confirm))
        press(confirm, WorktreeDialogs.DISCARD)
        val again = awaitDialog(WorktreeDialogs.DISCARD_UNMERGED_TITLE)
        val said = messageOf(again)
        waitFor("the default button") { again.rootPane.defaultButton != null }
        assertEquals(WorktreeDialogs.CANCEL, onEdt { again.rootPane.defaultButton.text }, "Enter keeps the work")
        screenshot(again.rootPane, "discard-unmerged-work")
        press(again, WorktreeDialogs.DISCARD_ANYWAY)
        val done = awaitDialog(WorktreeDialogs.DISCARDED_TITLE, WorktreeDialogs.NOT_DISCARDED_TITLE)
        val told = messageOf(done)
        press(done, "OK")

        assertEquals(WorktreeDialogs.DISCARDED_TITLE, done.title, told)
        assertEquals(
            "Removed ${worktree.branch} and its worktree ${worktree.path}; the chat ended, its session stays on disk (resumable).\n" +
                "Never merged, now gone: 1 uncommitted file.",
            told,
        )
        waitFor("the chat gone from the list") { p.table.rowCount == 0 }
        // The list drops the chat as it ends, before its worktree is removed: the removal's
        // end shows only on disk.
        waitFor("the worktree's folder and branch removed") {
            !Path.of(worktree.path).exists() && git("branch", "--list", worktree.branch).isEmpty()
        }
        assertTrue("would lose work that was never merged" in said && "Uncommitted files:\n  hello.py" in said, said)
        assertTrue(said.endsWith("Discard anyway? This work is lost."), said)
        assertEquals("print('hello')\n", box.workspace.resolve("hello.py").readText(), "nothing of the worktree's reached the checkout")
    }

    @Test fun `a message naming many files scrolls, keeping its dialog and buttons on the screen`() {
        val text = "Merging conflicts; nothing was changed.\n\nConflicting files:\n" + (1..300).joinToString("\n") { "  src/file$it.py" }
        val dialog = onEdt {
            FlatLightLaf.setup()
            JOptionPane(WorktreeDialogs.messageBody(text), JOptionPane.WARNING_MESSAGE).createDialog(null, "Not merged")
        }
        try {
            val (height, body) = onEdt { dialog.height to find<JScrollPane>(dialog.contentPane).single() }
            assertTrue(height < 500, "the dialog is $height px high")
            assertTrue(onEdt { body.verticalScrollBar.maximum > body.viewport.height }, "the list scrolls")
            assertTrue(messageOf(dialog).endsWith("src/file300.py"), "every file in it")
        } finally {
            onEdt { dialog.dispose() }
        }
    }
}
