package dev.claudesidecar.plugin

import com.intellij.diff.DiffContentFactory
import com.intellij.diff.DiffManager
import com.intellij.diff.contents.DiffContent
import com.intellij.diff.requests.SimpleDiffRequest
import com.intellij.openapi.application.EDT
import com.intellij.openapi.fileEditor.FileDocumentManager
import com.intellij.openapi.fileEditor.OpenFileDescriptor
import com.intellij.openapi.fileTypes.FileType
import com.intellij.openapi.fileTypes.FileTypeManager
import com.intellij.openapi.project.Project
import com.intellij.openapi.util.text.StringUtil
import com.intellij.openapi.vfs.LocalFileSystem
import com.intellij.openapi.vfs.VfsUtil
import com.intellij.openapi.vfs.VfsUtilCore
import com.intellij.openapi.vfs.VirtualFile
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.ProposedEdit
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.ui.ChatPanelHost
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.nio.file.Path

/** What the IDE adds to a chat panel: its diff viewer for pending edits and for file updates. */
class IdeChatHost(private val project: Project) : ChatPanelHost {
    override val reviewsEdits: Boolean get() = true

    override fun reviewEdit(chat: Chat, request: PermissionRequestNotification) = DiffViews.reviewEdit(project, request)

    override val opensFileUpdates: Boolean get() = true

    override fun openFileUpdate(chat: Chat, seq: Int) = DiffViews.openFileUpdate(project, chat, seq)

    // EDT, in a user's key or click event (write-intent): the CLI then reads what the editors
    // show, and its writes do not meet unsaved changes (the IDE's file-cache conflict dialog).
    override fun beforeAgentActs() = FileDocumentManager.getInstance().saveAllDocuments()
}

/**
 * The IDE's own diff viewer (DiffManager) for the agent's changes: a pending edit (the file now
 * against the file as the edit would leave it, computed by core's [ProposedEdit]) and a file
 * update (before / after, from [Chat.fileContents]); and the VFS refresh that makes open
 * editors reload a file Claude changed.
 */
object DiffViews {
    /** Shows a pending edit; the permission card stays where the user allows or denies it. EDT. */
    fun reviewEdit(project: Project, request: PermissionRequestNotification) {
        val path = ProposedEdit.editedPath(request.toolName, request.input) ?: return
        val name = fileName(path)
        // The edit applies to the file on disk: an open editor's unsaved changes are saved first
        // (as they are when the permission is answered), so that they are not shown as Claude's.
        val documents = FileDocumentManager.getInstance()
        LocalFileSystem.getInstance().findFileByNioFile(Path.of(path))?.let {
            documents.getCachedDocument(it)
        }?.let(documents::saveDocument)
        ClaudeService.getInstance(project).scope.launch(ClaudeService.UI) {
            try {
                val (file, current, proposed) = withContext(Dispatchers.IO) {
                    val file = LocalFileSystem.getInstance().refreshAndFindFileByNioFile(Path.of(path))?.takeIf { !it.isDirectory }
                    // The text on disk, as the edit tool reads it.
                    val current = file?.let { VfsUtilCore.loadText(it) }
                    Triple(file, current, ProposedEdit.proposedContent(request.toolName, request.input, current))
                }
                val factory = DiffContentFactory.getInstance()
                val type = file?.fileType ?: fileType(name)
                // Both sides from the same text: the left is that text, not the live document (which
                // the user may change while the diff is open).
                val left: DiffContent =
                    if (current != null) factory.create(project, StringUtil.convertLineSeparators(current), type) else factory.createEmpty()
                val right = factory.create(project, StringUtil.convertLineSeparators(proposed), type)
                val request = SimpleDiffRequest(
                    "$name (proposed by Claude: allow or deny in the chat)",
                    left,
                    right,
                    if (current != null) "Now (saved)" else "(no file yet)",
                    "Proposed by Claude",
                )
                DiffManager.getInstance().showDiff(project, request)
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                // IllegalArgumentException: the edit cannot apply (the tool would fail too).
                Notify.warn(project, "Cannot show the proposed change of $name: ${e.message}")
            }
        }
    }

    /** Shows the file update [seq] of [chat] before and after; the file itself when its contents were not sent. EDT. */
    fun openFileUpdate(project: Project, chat: Chat, seq: Int) {
        val update = chat.fileContents[seq]
        if (update == null) {
            Notify.info(project, "That change is no longer kept: open the file instead.")
            return
        }
        val name = fileName(update.path)
        if (update.oldContent == null && update.newContent == null) {
            openFile(project, Path.of(update.path))
            return
        }
        val factory = DiffContentFactory.getInstance()
        val type = fileType(name)
        fun side(text: String?): DiffContent =
            if (text == null) factory.createEmpty() else factory.create(project, StringUtil.convertLineSeparators(text), type)
        val request = SimpleDiffRequest("$name (Claude's change)", side(update.oldContent), side(update.newContent), "Before", "After")
        DiffManager.getInstance().showDiff(project, request)
    }

    /**
     * For each `claude/fileUpdated` of a chat: refreshes the file in the VFS, so editors
     * without unsaved changes reload it. Called on core's event thread: the work goes elsewhere.
     */
    fun refreshChangedFile(project: Project, event: ChatEvent) {
        val update = (event as? ChatEvent.Notification)?.params as? FileUpdatedNotification ?: return
        ClaudeService.getInstance(project).scope.launch(Dispatchers.IO) { refresh(Path.of(update.path)) }
    }

    /** Off the EDT, without a read action (a synchronous refresh may happen). */
    fun refresh(path: Path) {
        val fileSystem = LocalFileSystem.getInstance()
        val known = fileSystem.findFileByNioFile(path)
        if (known != null) {
            VfsUtil.markDirtyAndRefresh(true, false, false, known) // changed or deleted
        } else {
            fileSystem.refreshAndFindFileByNioFile(path) // created
        }
    }

    private fun openFile(project: Project, path: Path) {
        // Non-modal (Dispatchers.EDT's default): it opens an editor, which waits for any dialog to close.
        ClaudeService.getInstance(project).scope.launch(Dispatchers.EDT) {
            val file: VirtualFile? = withContext(Dispatchers.IO) { LocalFileSystem.getInstance().refreshAndFindFileByNioFile(path) }
            if (file == null) Notify.info(project, "$path no longer exists.") else OpenFileDescriptor(project, file).navigate(true)
        }
    }

    private fun fileName(path: String): String = path.substringAfterLast('/').substringAfterLast('\\')

    private fun fileType(name: String): FileType = FileTypeManager.getInstance().getFileTypeByFileName(name)
}
