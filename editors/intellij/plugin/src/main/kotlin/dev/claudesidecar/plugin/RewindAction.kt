package dev.claudesidecar.plugin

import com.intellij.openapi.application.EDT
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.DialogWrapper
import com.intellij.openapi.ui.popup.JBPopupFactory
import com.intellij.ui.SimpleListCellRenderer
import com.intellij.ui.components.JBScrollPane
import com.intellij.util.ui.JBUI
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.Prompt
import dev.claudesidecar.core.protocol.RewindFilesResult
import dev.claudesidecar.ui.ChatPanel
import dev.claudesidecar.ui.DiffView
import dev.claudesidecar.ui.ScrollableColumn
import dev.claudesidecar.ui.mutedLabel
import dev.claudesidecar.ui.relativePath
import dev.claudesidecar.ui.wrappingText
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.nio.file.Path
import javax.swing.JComponent
import javax.swing.JLabel

/**
 * Restores the files to how they were before one of the user's prompts: pick the prompt, see
 * the dry run (each file's diff), confirm.
 */
class RewindAction : ChatAction() {
    override fun enabled(panel: ChatPanel, chat: Chat): Boolean = chat.prompts.isNotEmpty()

    override fun perform(project: Project, panel: ChatPanel, chat: Chat) {
        val prompts = chat.prompts.reversed()
        JBPopupFactory.getInstance().createPopupChooserBuilder(prompts)
            .setTitle("Rewind Files to Before…")
            .setRenderer(
                SimpleListCellRenderer.create<Prompt>("") { prompt ->
                    prompt.text.lineSequence().firstOrNull { it.isNotBlank() }?.take(90) ?: "(image)"
                },
            )
            .setItemChosenCallback { prompt -> rewind(project, chat, prompt) }
            .createPopup()
            .showCenteredInCurrentWindow(project)
    }

    private fun rewind(project: Project, chat: Chat, prompt: Prompt) = request(project, "Cannot rewind the files") {
        val dryRun = chat.rewind(prompt.messageId, dryRun = true)
        if (!dryRun.canRewind || dryRun.filesChanged.isEmpty()) {
            Notify.info(
                project,
                if (dryRun.canRewind) "No file changed since that message." else "These files cannot be rewound (no checkpoint).",
            )
            return@request
        }
        val confirmed = withContext(Dispatchers.EDT) { RewindDialog(project, dryRun, chat.cwd).showAndGet() }
        if (!confirmed) return@request
        val done = chat.rewind(prompt.messageId, dryRun = false)
        // The daemon's claude/fileUpdated refreshes each file too; this covers every one at once.
        done.filesChanged.forEach { DiffViews.refresh(Path.of(it)) }
        Notify.info(project, "Restored ${done.filesChanged.size} file(s) to before “${prompt.text.lineSequence().first().take(60)}”.")
    }
}

/** The dry run of a rewind: what each file would get back, as a diff; OK rewinds. */
private class RewindDialog(
    project: Project,
    private val result: RewindFilesResult,
    private val cwd: String,
) : DialogWrapper(project) {
    init {
        title = "Rewind Files"
        setOKButtonText("Rewind")
        init()
    }

    override fun createCenterPanel(): JComponent {
        val column = ScrollableColumn(8)
        column.add(
            JLabel("Restore ${result.filesChanged.size} file(s) to before that message? (+${result.insertions} −${result.deletions})"),
        )
        for (file in result.diffs) {
            column.add(mutedLabel(relativePath(file.path, cwd)))
            when {
                file.diff != null -> column.add(DiffView(file.diff!!, maxVisibleLines = 12))
                file.note != null -> column.add(wrappingText(file.note!!))
            }
        }
        return JBScrollPane(column).apply {
            border = JBUI.Borders.empty()
            preferredSize = JBUI.size(640, 420)
        }
    }
}
