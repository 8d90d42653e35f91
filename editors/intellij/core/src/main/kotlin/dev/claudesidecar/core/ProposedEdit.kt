package dev.claudesidecar.core

import com.google.gson.JsonElement
import com.google.gson.JsonObject

/**
 * What a file will hold if a pending edit tool is allowed: computed from the tool's input and
 * the file as it is now, so an IDE can show the change in its own diff viewer. (The daemon's
 * `preview` is the same change as a unified diff.) The same rules as the VS Code client's
 * `editors/vscode/src/core/proposed-edit.ts`.
 */
object ProposedEdit {
    /** The edit tools whose result can be shown before they run. */
    val EDIT_TOOLS: Set<String> = setOf("Write", "Edit", "MultiEdit")

    /** The path an edit tool writes, or null for other tools (or an input without `file_path`). */
    fun editedPath(toolName: String, input: JsonObject): String? {
        if (toolName !in EDIT_TOOLS) return null
        return input.get("file_path").string()
    }

    /**
     * The file's text after the tool would run. [current] is its text now (null: it does not
     * exist). Throws [IllegalArgumentException] with a reason when the edit cannot apply (the
     * tool would fail too).
     */
    fun proposedContent(toolName: String, input: JsonObject, current: String?): String = when (toolName) {
        "Write" -> input.get("content").string() ?: throw IllegalArgumentException("Write has no content")
        "Edit" -> applyEdit(current ?: "", input.get("old_string"), input.get("new_string"), input.get("replace_all"))
        "MultiEdit" -> {
            val edits = input.get("edits")?.takeIf { it.isJsonArray }?.asJsonArray
                ?: throw IllegalArgumentException("MultiEdit has no edits")
            edits.fold(current ?: "") { text, e ->
                val edit = e.takeIf { it.isJsonObject }?.asJsonObject ?: JsonObject()
                applyEdit(text, edit.get("old_string"), edit.get("new_string"), edit.get("replace_all"))
            }
        }
        else -> throw IllegalArgumentException("$toolName is not an edit tool")
    }

    private fun applyEdit(text: String, oldString: JsonElement?, newString: JsonElement?, replaceAll: JsonElement?): String {
        val old = oldString.string()
        val new = newString.string()
        if (old == null || new == null) throw IllegalArgumentException("the edit has no old_string/new_string")
        if (old.isEmpty()) return new + text
        if (!text.contains(old)) throw IllegalArgumentException("old_string is not in the file (the tool will fail)")
        val all = replaceAll != null && replaceAll.isJsonPrimitive && replaceAll.asJsonPrimitive.isBoolean && replaceAll.asBoolean
        return if (all) text.replace(old, new) else text.replaceFirst(old, new)
    }

    private fun JsonElement?.string(): String? = if (this != null && isJsonPrimitive && asJsonPrimitive.isString) asString else null
}
