package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.TurnEntry

// The fields every entry kind has, which the generated union (one data class per kind) does
// not put on its interface.

/** An entry's id, whatever its kind. */
fun Entry.id(): String = when (this) {
    is PromptEntry -> id
    is TextEntry -> id
    is ThinkingEntry -> id
    is ToolEntry -> id
    is NoticeEntry -> id
    is TurnEntry -> id
}

/** The Agent/Task tool use a sub-agent's entry belongs to (null in the main conversation). */
fun Entry.parentId(): String? = when (this) {
    is PromptEntry -> parentId
    is TextEntry -> parentId
    is ThinkingEntry -> parentId
    is ToolEntry -> parentId
    is NoticeEntry -> parentId
    is TurnEntry -> parentId
}
