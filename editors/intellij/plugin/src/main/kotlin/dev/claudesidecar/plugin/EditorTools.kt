package dev.claudesidecar.plugin

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.intellij.codeInsight.daemon.impl.DaemonCodeAnalyzerEx
import com.intellij.lang.annotation.HighlightSeverity
import com.intellij.openapi.application.EDT
import com.intellij.openapi.application.ModalityState
import com.intellij.openapi.application.asContextElement
import com.intellij.openapi.application.readAction
import com.intellij.openapi.application.runReadAction
import com.intellij.openapi.editor.Document
import com.intellij.openapi.fileEditor.FileDocumentManager
import com.intellij.openapi.fileEditor.FileEditorManager
import com.intellij.openapi.fileEditor.OpenFileDescriptor
import com.intellij.openapi.project.Project
import com.intellij.openapi.roots.ProjectRootManager
import com.intellij.openapi.vfs.LocalFileSystem
import com.intellij.openapi.vfs.VirtualFile
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.EditorToolBinding
import dev.claudesidecar.core.protocol.EditorTool
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.nio.file.Path

/**
 * The tools the IDE offers the model (as `mcp__editor__<name>`): what only the IDE knows
 * (problems, open editors, the selection) or can do (show a file), answered from IntelliJ APIs
 * when the daemon sends `claude/callEditorTool`. The same tools as the VS Code client's.
 *
 * Handlers run on core's threads: IDE state is read in a read action or on the EDT, files are
 * looked up on the IO dispatcher. Throwing answers the model with the error's message.
 */
class EditorTools(private val project: Project) {
    val bindings: List<EditorToolBinding> = listOf(
        EditorToolBinding(
            EditorTool(
                name = "getDiagnostics",
                description = "Errors and warnings the IDE shows (its inspections and language support) for one file, or for every file " +
                    "open in an editor when uri is left out (the IDE analyses open files only). Returns file, line, column, severity " +
                    "and message of each.",
                inputSchema = schema(
                    """{"type":"object","properties":{"uri":{"type":"string","description":"file:// URI or absolute path of the file"}}}""",
                ),
            ),
        ) { args, _ -> diagnostics(args) },
        EditorToolBinding(
            EditorTool(
                name = "getOpenEditors",
                description = "The files open in IDE editor tabs: path, whether it is the active one, whether it has unsaved changes.",
            ),
        ) { _, _ -> openEditors() },
        EditorToolBinding(
            EditorTool(
                name = "getSelection",
                description = "The active editor's file, the selected range (1-based lines) and the selected text (empty: just the caret).",
            ),
        ) { _, _ -> selection() },
        EditorToolBinding(
            EditorTool(
                name = "openFile",
                description = "Open a file in the IDE to show it to the user, optionally at a 1-based line.",
                inputSchema = schema(
                    """{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer","minimum":1}},"required":["path"]}""",
                ),
            ),
        ) { args, chat -> openFile(args, chat) },
        EditorToolBinding(
            EditorTool(name = "getWorkspaceFolders", description = "The absolute paths of the project's content roots in the IDE."),
        ) { _, _ -> workspaceFolders() },
    )

    private suspend fun diagnostics(args: JsonObject): Any {
        val uri = args.get("uri")
        require(uri == null || (uri.isJsonPrimitive && uri.asJsonPrimitive.isString)) { "uri must be a string" }
        val files: List<VirtualFile> = if (uri != null) {
            listOf(findFile(toPath(uri.asString)) ?: throw IllegalArgumentException("no such file: ${uri.asString}"))
        } else {
            onEdt { FileEditorManager.getInstance(project).openFiles.toList() }
        }
        val diagnostics = readAction {
            files.flatMap { file -> FileDocumentManager.getInstance().getCachedDocument(file)?.let { problems(file, it) } ?: emptyList() }
        }
        return mapOf("diagnostics" to diagnostics)
    }

    /** In a read action: the highlights of severity WARNING and up that the IDE's analysis left on the file's document. */
    private fun problems(file: VirtualFile, document: Document): List<Map<String, Any?>> {
        val found = mutableListOf<Map<String, Any?>>()
        DaemonCodeAnalyzerEx.processHighlights(document, project, HighlightSeverity.WARNING, 0, document.textLength) { info ->
            val message = info.description
            if (!message.isNullOrBlank()) {
                val offset = info.startOffset.coerceIn(0, document.textLength)
                val line = document.getLineNumber(offset)
                found += mapOf(
                    "file" to osPath(file),
                    "line" to line + 1,
                    "column" to offset - document.getLineStartOffset(line) + 1,
                    "severity" to if (info.severity >= HighlightSeverity.ERROR) "error" else "warning",
                    "message" to message,
                )
            }
            true
        }
        return found
    }

    private suspend fun openEditors(): Any = onEdt {
        val manager = FileEditorManager.getInstance(project)
        val documents = FileDocumentManager.getInstance()
        val active = manager.selectedTextEditor?.let { documents.getFile(it.document) }
        val editors = manager.openFiles.map {
            mapOf("path" to osPath(it), "active" to (it == active), "unsaved" to documents.isFileModified(it))
        }
        mapOf("editors" to editors)
    }

    /** The selected text editor: the one last used, also while the chat has the focus. */
    private suspend fun selection(): Any = onEdt {
        val editor = FileEditorManager.getInstance(project).selectedTextEditor
        if (editor == null) {
            mapOf("file" to null, "text" to "", "start" to null, "end" to null)
        } else {
            runReadAction {
                val document = editor.document
                val selection = editor.selectionModel
                fun position(offset: Int): Map<String, Int> {
                    val line = document.getLineNumber(offset)
                    return mapOf("line" to line + 1, "column" to offset - document.getLineStartOffset(line) + 1)
                }
                mapOf(
                    "file" to FileDocumentManager.getInstance().getFile(document)?.let { osPath(it) },
                    "text" to (selection.selectedText ?: ""),
                    "start" to position(selection.selectionStart),
                    "end" to position(selection.selectionEnd),
                )
            }
        }
    }

    private suspend fun openFile(args: JsonObject, chat: Chat?): Any {
        val given = args.get("path")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isString }?.asString
        require(!given.isNullOrEmpty()) { "path is required: the file to open" }
        val base = chat?.cwd ?: ClaudeService.getInstance(project).cwd
        val path = Path.of(base).resolve(given).normalize()
        val line = args.get("line")?.takeIf { it.isJsonPrimitive && it.asJsonPrimitive.isNumber }?.asInt?.takeIf { it >= 1 }
        val file = findFile(path) ?: throw IllegalArgumentException("no such file: $path")
        // Shown when no modal dialog is open; the focus stays where the user is (the chat).
        withContext(Dispatchers.EDT + ModalityState.nonModal().asContextElement()) {
            OpenFileDescriptor(project, file, (line ?: 1) - 1, 0).navigate(false)
        }
        return "opened $path" + (line?.let { " at line $it" } ?: "")
    }

    private suspend fun workspaceFolders(): Any =
        mapOf("folders" to readAction { ProjectRootManager.getInstance(project).contentRoots.map { osPath(it) } })

    /** Runs [block] on the EDT whatever dialog is open (it only reads). */
    private suspend fun <T> onEdt(block: () -> T): T = withContext(Dispatchers.EDT + ModalityState.any().asContextElement()) { block() }

    private suspend fun findFile(path: Path): VirtualFile? =
        withContext(Dispatchers.IO) { LocalFileSystem.getInstance().refreshAndFindFileByNioFile(path) }

    private fun toPath(value: String): Path = if (value.startsWith("file:")) Path.of(java.net.URI(value)) else Path.of(value)

    private fun osPath(file: VirtualFile): String = if (file.isInLocalFileSystem) file.toNioPath().toString() else file.path

    private fun schema(json: String): JsonObject = JsonParser.parseString(json).asJsonObject
}
