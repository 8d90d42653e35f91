package dev.claudesidecar.ui

import com.google.gson.JsonObject
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.ChannelParams
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.ErrorName
import dev.claudesidecar.core.protocol.MergeWorktreeParams
import dev.claudesidecar.core.protocol.MergeWorktreeResult
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.RemoveWorktreeParams
import dev.claudesidecar.core.protocol.RemoveWorktreeResult
import dev.claudesidecar.core.protocol.Strategy
import dev.claudesidecar.core.protocol.WorktreeChangesResult
import dev.claudesidecar.core.protocol.WorktreeFile
import dev.claudesidecar.core.protocol.WorktreeFileStatus
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.launch
import java.awt.BorderLayout
import java.awt.Component
import java.awt.Dimension
import javax.swing.DefaultListCellRenderer
import javax.swing.JComboBox
import javax.swing.JComponent
import javax.swing.JDialog
import javax.swing.JLabel
import javax.swing.JList
import javax.swing.JOptionPane
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.JSplitPane
import javax.swing.JTextField
import javax.swing.ListSelectionModel
import javax.swing.SwingUtilities

/**
 * Review, merge and discard a worktree chat's branch (`claude/worktreeChanges`,
 * `claude/mergeWorktree`, `claude/removeWorktree`), as dialogs over [owner]. A refusal names
 * what it is about: the conflicting files, the user's files with uncommitted changes, the
 * chat still in a turn, the work a discard would lose (then offered again with force).
 */
class WorktreeDialogs(
    private val client: SidecarClient,
    private val owner: Component,
    private val scope: CoroutineScope,
) {
    /** The review dialog shown last (tests read it). */
    var reviewDialog: JDialog? = null
        private set

    /** The chats whose merge or discard is under way (by channel id): not offered again until it ends. */
    private val busy = mutableSetOf<String>()

    /** Told (on the UI thread) when a chat's merge or discard starts or ends: the chat list enables its buttons. */
    var onBusyChanged: () -> Unit = {}

    /** Whether a merge or discard of [channel]'s worktree is under way. */
    fun isBusy(channel: ChannelSummary): Boolean = channel.channelId in busy

    /** Shows the changed files of [channel]'s worktree and the diff of the selected one. */
    fun review(channel: ChannelSummary) {
        scope.launch {
            val changes = try {
                client.request(Methods.WORKTREE_CHANGES, ChannelParams(channel.channelId))
            } catch (e: SidecarException) {
                return@launch tell("Cannot review the worktree", e.message.orEmpty(), JOptionPane.ERROR_MESSAGE)
            }
            reviewDialog?.dispose()
            val dialog = JDialog(SwingUtilities.getWindowAncestor(owner), "Review ${changes.worktree.branch}")
            dialog.contentPane = WorktreeReview(changes)
            dialog.defaultCloseOperation = JDialog.DISPOSE_ON_CLOSE
            dialog.size = Dimension(980, 620)
            dialog.setLocationRelativeTo(owner)
            reviewDialog = dialog
            dialog.isVisible = true
        }
    }

    /** Asks for the strategy (and the message of the agent's uncommitted work), then merges. */
    fun merge(channel: ChannelSummary) {
        val worktree = channel.worktree ?: return
        val strategies = JComboBox(Strategy.entries.map { it.wire }.toTypedArray()).apply {
            // git's word, and what it makes of the branch: the words alone do not say.
            renderer = object : DefaultListCellRenderer() {
                override fun getListCellRendererComponent(l: JList<*>, value: Any?, i: Int, sel: Boolean, focus: Boolean): Component =
                    super.getListCellRendererComponent(l, value?.let { "$it — ${STRATEGIES[it]}" }, i, sel, focus)
            }
        }
        val message = JTextField(channel.lastPrompt.orEmpty(), 40)
        val form = Column(6).apply {
            add(JLabel("Merge ${worktree.branch} into ${worktree.baseBranch ?: worktree.baseRef} (in ${worktree.root})"))
            add(row(JLabel("Strategy:"), strategies))
            add(JLabel("Commit message (for what the agent did not commit yet, or the squash):"))
            add(message)
        }
        // The message is what a user types here: the caret starts in it, and Enter merges.
        if (ask(MERGE_TITLE, form, JOptionPane.PLAIN_MESSAGE, listOf(MERGE, CANCEL), MERGE, focus = message) != MERGE) return
        if (isBusy(channel)) return
        val strategy = Strategy.of(strategies.selectedItem as String) ?: Strategy.MERGE
        launchBusy(channel) {
            val text = try {
                merged(mergeWorktree(channel, strategy, message.text.ifBlank { null }))
            } catch (e: SidecarException) {
                return@launchBusy { tell(NOT_MERGED_TITLE, refusal(e), JOptionPane.WARNING_MESSAGE) }
            }
            return@launchBusy { tell(MERGED_TITLE, text, JOptionPane.INFORMATION_MESSAGE) }
        }
    }

    /** Asks to confirm, removes the worktree; when that would lose work, names it and offers force. */
    fun discard(channel: ChannelSummary) {
        val worktree = channel.worktree ?: return
        val sure = ask(
            DISCARD_TITLE,
            messageBody(
                "End the chat and remove its worktree ${worktree.path} and branch ${worktree.branch}?\n" +
                    "Its session stays on disk (resumable). Work that was never merged is not lost without asking again.",
            ),
            JOptionPane.WARNING_MESSAGE,
            listOf(DISCARD, CANCEL),
            DISCARD,
        )
        if (sure != DISCARD || isBusy(channel)) return
        launchBusy(channel) {
            val removed = try {
                removeWorktree(channel, force = false)
            } catch (e: SidecarException) {
                if (e.error != ErrorName.UNMERGED_WORK) {
                    return@launchBusy { tell(NOT_DISCARDED_TITLE, refusal(e), JOptionPane.ERROR_MESSAGE) }
                }
                return@launchBusy { discardUnmerged(channel, e) }
            }
            return@launchBusy { tell(DISCARDED_TITLE, discarded(removed), JOptionPane.INFORMATION_MESSAGE) }
        }
    }

    /** Names the work removing [channel]'s worktree would lose ([refused]) and, if the user says so, discards it all the same. */
    private fun discardUnmerged(channel: ChannelSummary, refused: SidecarException) {
        // This one loses work: Enter (or a hasty click on the default) keeps it.
        val force = ask(
            DISCARD_UNMERGED_TITLE,
            messageBody(refusal(refused) + "\n\nDiscard anyway? This work is lost."),
            JOptionPane.WARNING_MESSAGE,
            listOf(DISCARD_ANYWAY, CANCEL),
            CANCEL,
        )
        if (force != DISCARD_ANYWAY || isBusy(channel)) return
        launchBusy(channel) {
            val removed = try {
                removeWorktree(channel, force = true)
            } catch (again: SidecarException) {
                return@launchBusy { tell(NOT_DISCARDED_TITLE, refusal(again), JOptionPane.ERROR_MESSAGE) }
            }
            return@launchBusy { tell(DISCARDED_TITLE, discarded(removed), JOptionPane.INFORMATION_MESSAGE) }
        }
    }

    /**
     * Runs [request] (a merge or discard of [channel]'s worktree) with the chat marked busy from
     * now until it answers; then what it returns (the answer shown to the user, a modal dialog)
     * runs, the chat no longer busy.
     */
    private fun launchBusy(channel: ChannelSummary, request: suspend () -> () -> Unit) {
        busy += channel.channelId
        onBusyChanged()
        scope.launch {
            val answer = try {
                request()
            } finally {
                busy -= channel.channelId
                onBusyChanged()
            }
            answer()
        }
    }

    /** `claude/mergeWorktree`. */
    suspend fun mergeWorktree(channel: ChannelSummary, strategy: Strategy, message: String?): MergeWorktreeResult =
        client.request(Methods.MERGE_WORKTREE, MergeWorktreeParams(channel.channelId, strategy, message))

    /** `claude/removeWorktree`. */
    suspend fun removeWorktree(channel: ChannelSummary, force: Boolean): RemoveWorktreeResult =
        client.request(Methods.REMOVE_WORKTREE, RemoveWorktreeParams(channel.channelId, if (force) true else null))

    private fun tell(title: String, text: String, kind: Int) = JOptionPane.showMessageDialog(owner, messageBody(text), title, kind)

    /**
     * A modal question over [owner] with [options] as its buttons, [initial] the default one
     * (Enter); [focus], if any, has the caret. The option chosen, or null when closed.
     */
    private fun ask(title: String, body: Any, kind: Int, options: List<String>, initial: String, focus: JComponent? = null): String? {
        val pane = object : JOptionPane(body, kind, DEFAULT_OPTION, null, options.toTypedArray(), initial) {
            override fun selectInitialValue() {
                super.selectInitialValue() // makes [initial] the default button
                focus?.requestFocusInWindow()
            }
        }
        val dialog = pane.createDialog(owner, title)
        dialog.isVisible = true
        dialog.dispose()
        return pane.value as? String
    }

    companion object {
        const val MERGE_TITLE = "Merge worktree"
        const val MERGED_TITLE = "Merged"
        const val NOT_MERGED_TITLE = "Not merged"
        const val DISCARD_TITLE = "Discard worktree"
        const val DISCARD_UNMERGED_TITLE = "Discard unmerged work"
        const val NOT_DISCARDED_TITLE = "Not discarded"
        const val DISCARDED_TITLE = "Discarded"
        const val MERGE = "Merge"
        const val DISCARD = "Discard"
        const val DISCARD_ANYWAY = "Discard anyway"
        const val CANCEL = "Cancel"

        /** What each strategy makes of the worktree's branch, as the merge form says it. */
        val STRATEGIES = mapOf(
            Strategy.MERGE.wire to "the agent's commits kept, joined by a merge commit when needed",
            Strategy.SQUASH.wire to "one commit with the message below",
            Strategy.REBASE.wire to "the agent's commits replayed on top, no merge commit",
        )

        /** Lines a message shows before it scrolls: a long file list keeps the dialog (and its buttons) on screen. */
        const val MAX_LINES = 16

        /**
         * [text] as a dialog shows it: wrapped, selectable (a file name or the command that
         * sets git's identity can be copied), scrolled past [MAX_LINES] lines.
         */
        fun messageBody(text: String): JComponent {
            val area = wrappingText(text).apply { columns = 60 }
            // Laid out at its width once, the wrapped text knows its height.
            area.size = Dimension(area.preferredSize.width, Short.MAX_VALUE.toInt())
            val wanted = area.preferredSize
            val most = area.getFontMetrics(area.font).height * MAX_LINES
            if (wanted.height <= most) return area
            return JScrollPane(area).apply {
                border = null
                isOpaque = false
                viewport.isOpaque = false
                horizontalScrollBarPolicy = JScrollPane.HORIZONTAL_SCROLLBAR_NEVER
                preferredSize = Dimension(wanted.width + verticalScrollBar.preferredSize.width, most)
            }
        }

        /** [count] and [noun], the noun in the plural unless the count is one: "1 file", "2 files". */
        fun counted(count: Int, noun: String): String = "$count $noun" + if (count == 1) "" else "s"

        /** What a merge did: "Merged into main (squash): 2 files changed; main is now at 1a2b3c4." */
        fun merged(result: MergeWorktreeResult): String =
            "Merged into ${result.target} (${result.strategy.wire}): ${counted(result.files.size, "file")} " +
                "changed; ${result.target} is now at ${result.commit.take(7)}." +
                (result.committed?.let { "\nThe agent's uncommitted work was committed first (${it.take(7)})." } ?: "")

        /**
         * What a discard did: "Removed worktree-x and its worktree /repo/.claude/worktrees/x; the
         * chat ended, its session stays on disk (resumable)." and, when work was thrown away, what.
         */
        fun discarded(result: RemoveWorktreeResult): String {
            val lost = listOfNotNull(
                result.discardedCommits.size.takeIf { it > 0 }?.let { counted(it, "commit") },
                result.discardedFiles.size.takeIf { it > 0 }?.let { counted(it, "uncommitted file") },
            )
            return "Removed ${result.branch} and its worktree ${result.path}; the chat ended, its session stays on disk (resumable)." +
                if (lost.isEmpty()) "" else "\nNever merged, now gone: ${lost.joinToString(" and ")}."
        }

        /** Why the daemon refused, with the files or commits it named, one a line. */
        fun refusal(e: SidecarException): String {
            val data = e.data as? JsonObject
            fun list(key: String): List<String> = data?.getAsJsonArray(key)?.map { it.asString }.orEmpty()
            fun lines(head: String, items: List<String>) = if (items.isEmpty()) "" else "\n\n$head\n" + items.joinToString("\n") { "  $it" }
            return when (e.error) {
                ErrorName.MERGE_CONFLICT ->
                    "Merging conflicts; nothing was changed." + lines("Conflicting files:", list("files")) +
                        "\n\nResolve them in the worktree (e.g. ask the chat to merge ${data?.get(
                            "target",
                        )?.asString ?: "the target"}) and merge again."
                ErrorName.UNCOMMITTED_CHANGES ->
                    "Your checkout has uncommitted changes in files the merge would change; nothing was changed." +
                        lines("Commit or stash these first:", list("files"))
                ErrorName.CHAT_BUSY -> "The chat is in a turn (${data?.get(
                    "state",
                )?.asString ?: "running"}): wait for it to end, or stop it, then merge."
                ErrorName.UNMERGED_WORK ->
                    "Removing ${data?.get("branch")?.asString ?: "the branch"} would lose work that was never merged." +
                        lines("Commits:", list("commits")) + lines("Uncommitted files:", list("uncommittedFiles"))
                ErrorName.GIT_IDENTITY_MISSING ->
                    "git has no name and email to commit the chat's work with; nothing was changed." +
                        lines("Set them in a terminal, then merge again:", listOfNotNull(data?.get("fix")?.asString))
                else -> e.message.orEmpty()
            }
        }
    }
}

/** A worktree's changes: the changed files on the left, the selected file's unified diff on the right. */
class WorktreeReview(val changes: WorktreeChangesResult) : JPanel(BorderLayout()) {
    val files = JList(changes.files.toTypedArray()).apply {
        selectionMode = ListSelectionModel.SINGLE_SELECTION
        cellRenderer = object : DefaultListCellRenderer() {
            override fun getListCellRendererComponent(l: JList<*>, value: Any?, i: Int, sel: Boolean, focus: Boolean): Component =
                super.getListCellRendererComponent(l, label(value as WorktreeFile), i, sel, focus)
        }
    }
    private val right = JPanel(BorderLayout())

    /** The diff shown now (null: none yet, or a file without one). */
    var diff: DiffView? = null
        private set

    init {
        val head = "${changes.worktree.branch} against ${changes.worktree.baseCommit.take(7)}: " +
            "${WorktreeDialogs.counted(changes.files.size, "file")}, +${changes.added} −${changes.deleted}" +
            (if (changes.commits.isEmpty()) "" else ", ${WorktreeDialogs.counted(changes.commits.size, "commit")}")
        add(JLabel(head).apply { border = padding(6, 8, 6, 8) }, BorderLayout.NORTH)
        val split = JSplitPane(JSplitPane.HORIZONTAL_SPLIT, JScrollPane(files), right).apply { dividerLocation = 300 }
        add(split, BorderLayout.CENTER)
        files.addListSelectionListener { if (!it.valueIsAdjusting) show(files.selectedValue) }
        if (changes.files.isNotEmpty()) files.selectedIndex = 0 else right.add(JLabel("  Nothing changed."), BorderLayout.NORTH)
    }

    private fun show(file: WorktreeFile?) {
        right.removeAll()
        diff = null
        when {
            file == null -> {}
            file.diff != null && hunks(file.diff!!).isNotEmpty() -> DiffView(hunks(file.diff!!), maxVisibleLines = 60).also {
                diff = it
                right.add(it, BorderLayout.CENTER)
            }
            else -> right.add(JLabel("  " + omitted(file)), BorderLayout.NORTH)
        }
        right.revalidate()
        right.repaint()
    }

    companion object {
        /** "A  src/new.ts  +12 −0", "R  old → new", "(uncommitted)" marked. */
        fun label(file: WorktreeFile): String {
            val mark = when (file.status) {
                WorktreeFileStatus.ADDED -> "A"
                WorktreeFileStatus.DELETED -> "D"
                WorktreeFileStatus.MODIFIED -> "M"
                WorktreeFileStatus.RENAMED -> "R"
            }
            val name = file.oldPath?.let { "$it → ${file.path}" } ?: file.path
            val counts = if (file.binary) "binary" else "+${file.added ?: 0} −${file.deleted ?: 0}"
            return "$mark  $name  $counts" + if (file.uncommitted) "  (uncommitted)" else ""
        }

        /** The diff from its first hunk on: git's header lines (`diff --git`, `index`, modes) say what the file list says. */
        fun hunks(diff: String): String = diff.lines().dropWhile { !it.startsWith("@@") }.joinToString("\n")

        private fun omitted(file: WorktreeFile): String = when {
            file.status == WorktreeFileStatus.RENAMED && file.diff != null -> "Renamed from ${file.oldPath}; the content is the same."
            file.binary -> "A binary file (${file.size} bytes): no diff."
            file.omitted != null -> "The diff is not sent whole (${file.omitted!!.wire}): ${file.size} bytes."
            else -> "No diff."
        }
    }
}
