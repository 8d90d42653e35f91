package dev.claudesidecar.plugin

import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.actionSystem.CommonDataKeys
import com.intellij.openapi.fileEditor.FileDocumentManager
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.util.TextRange
import dev.claudesidecar.ui.relativePath

/**
 * Quotes the selected lines (or the caret's line) into the active chat's prompt, as
 * `@path:start-end` and the code in a fence, like the VS Code client; a new chat when none is
 * open. Nothing is sent: the user adds the question.
 */
class SendSelectionAction :
    AnAction(),
    DumbAware {
    override fun getActionUpdateThread() = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) {
        e.presentation.isEnabledAndVisible = e.project != null && e.getData(CommonDataKeys.EDITOR) != null
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val editor = e.getData(CommonDataKeys.EDITOR) ?: return
        val document = editor.document
        val file = FileDocumentManager.getInstance().getFile(document)
        val selection = editor.selectionModel
        val start: Int
        val end: Int
        val text: String
        if (selection.hasSelection()) {
            start = document.getLineNumber(selection.selectionStart)
            // A selection that ends at the start of a line does not take that line.
            val last = selection.selectionEnd
            val endsAtLineStart = last > selection.selectionStart && last == document.getLineStartOffset(document.getLineNumber(last))
            end = document.getLineNumber(if (endsAtLineStart) last - 1 else last)
            text = selection.selectedText ?: ""
        } else {
            start = editor.caretModel.logicalPosition.line.coerceAtMost(document.lineCount - 1).coerceAtLeast(0)
            end = start
            text = when (document.lineCount) {
                0 -> ""
                else -> document.getText(TextRange(document.getLineStartOffset(start), document.getLineEndOffset(start)))
            }
        }
        val path = file?.let { relativePath(it.path, project.basePath) } ?: "untitled"
        val where = if (start == end) "$path:${start + 1}" else "$path:${start + 1}-${end + 1}"
        val quoted = "@$where\n```${file?.extension ?: ""}\n${text.trimEnd('\n')}\n```\n"
        val panel = ClaudeChats.activePanel(project) ?: ClaudeChats.newChat(project) ?: return
        panel.insertPrompt(quoted)
        ClaudeChats.toolWindow(project)?.activate { panel.prompt.text.requestFocusInWindow() }
    }
}
