package dev.claudesidecar.core.transcript

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.TurnOutcome

/**
 * One item of a chat's transcript. Entries are mutable and owned by their [Transcript]: read
 * them on the thread that applies its events (the EDT in the ui). [id] is stable for the
 * entry's life, a key for the view.
 */
sealed class Entry(val id: Int) {
    /** Set on a sub-agent's output: the id of the Agent/Task tool call that started it. */
    abstract val parentToolUseId: String?
}

/** A prompt of the user; [messageId] is what fork and rewind take (null when unknown). */
class UserEntry(
    id: Int,
    val messageId: String?,
    val text: String,
    val images: Int,
) : Entry(id) {
    override val parentToolUseId: String? get() = null
}

/**
 * Streamed text of the model: [text] grows by appends while [streaming], so a delta costs its
 * own length only. Text entries are markdown; thinking entries are plain text.
 */
class TextEntry(
    id: Int,
    val thinking: Boolean,
    override val parentToolUseId: String?,
) : Entry(id) {
    val text = StringBuilder()
    var streaming = true
        internal set

    /** The answer was cut short by an interrupt. */
    var aborted = false
        internal set

    /** Bumped by every change of [text], so a view re-renders only when it is newer than what it drew. */
    var version = 0
        internal set
}

enum class ToolStatus { PENDING, RUNNING, DONE, ERROR, DENIED }

/** How a tool call's permission request went. [ANSWERED]: the user answered; the tool's result will say how. */
enum class PermissionState { PENDING, ANSWERED, ALLOWED, DENIED, CANCELLED }

class ToolPermission(
    val requestId: String,
    var state: PermissionState,
    /** Allowed by the client's `autoAllowTools` rules: nobody was asked. */
    val auto: Boolean,
    /** The proposed edit as a unified diff (Write, Edit, MultiEdit). */
    val preview: String?,
    /** Why there is no preview. */
    val previewNote: String?,
    val decisionReason: String?,
)

/** What a tool returned: the text parts of its `tool_result`, and the CLI's structured `tool_use_result` (without `originalFile`). */
class ToolResult(
    val text: String,
    val isError: Boolean,
    val images: Int,
    val details: JsonElement?,
)

/** A tool call, from its first streamed byte to its result. */
class ToolEntry(
    id: Int,
    val toolUseId: String,
    val name: String,
    override val parentToolUseId: String?,
) : Entry(id) {
    /** The complete input; null while it streams. */
    var input: JsonObject? = null
        internal set

    /** The input's JSON as streamed so far; empty once complete. */
    val partialInput = StringBuilder()
    var status = ToolStatus.PENDING
        internal set
    var result: ToolResult? = null
        internal set
    var permission: ToolPermission? = null
        internal set

    /** The `seq`s of the `claude/fileUpdated` this call made (see [Transcript.files]). */
    val fileUpdates = mutableListOf<Int>()
}

/** The footer of a turn; [error] says why it failed (null unless the outcome is an error). */
class TurnEntry(
    id: Int,
    val outcome: TurnOutcome?,
    val durationMs: Int,
    val permissionWaitMs: Int,
    val costUsd: Double,
    val error: String?,
) : Entry(id) {
    override val parentToolUseId: String? get() = null
}

class NoticeEntry(
    id: Int,
    val level: ChatEvent.Notice.Level,
    val text: String,
) : Entry(id) {
    override val parentToolUseId: String? get() = null
}

/** A file changed without a tool call to hang it on (a rewind). */
class FileEntry(
    id: Int,
    val seq: Int,
    override val parentToolUseId: String?,
) : Entry(id)
