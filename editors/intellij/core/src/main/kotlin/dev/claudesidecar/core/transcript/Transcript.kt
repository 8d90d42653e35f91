package dev.claudesidecar.core.transcript

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.AutoDecision
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.ExitInfo
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.History
import dev.claudesidecar.core.protocol.HistoryMessage
import dev.claudesidecar.core.protocol.HistoryMessageKind
import dev.claudesidecar.core.protocol.HistoryPermission
import dev.claudesidecar.core.protocol.MessageNotification
import dev.claudesidecar.core.protocol.PermissionCancelledNotification
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.RetryInfo
import dev.claudesidecar.core.protocol.StatusNotification
import dev.claudesidecar.core.protocol.TurnEndedNotification
import dev.claudesidecar.core.protocol.TurnUsage
import dev.claudesidecar.core.protocol.orUnknown

/** The chat's state besides its entries, from `claude/status` (null [state]: no status yet). */
data class ChatStatus(
    val state: ChannelState? = null,
    val model: String? = null,
    val permissionMode: String? = null,
    /** Set while the CLI waits to retry a failed model request. */
    val retry: RetryInfo? = null,
    val exit: ExitInfo? = null,
)

/**
 * What one [Transcript.apply] changed: entries [added] at the end (in order), entries
 * [updated] in place, or, when [rebuilt], the order itself (a history went in front).
 */
class TranscriptChange internal constructor() {
    val added = mutableListOf<Entry>()
    val updated = LinkedHashSet<Entry>()
    var rebuilt = false
        internal set
}

/**
 * The chat as a view shows it, built from its [ChatEvent]s alone: prompts, answers, thinking,
 * tool calls with their permission requests, results and file updates, turn footers,
 * notices; and the status, pending permission requests, cost and file updates.
 *
 * Not thread-safe: apply events and read entries on one thread (the EDT in the ui). Applying a
 * delta costs the delta's length: the open block is found by key and its StringBuilder grows.
 *
 * How the CLI's stream maps to entries (CLI 2.1.330, docs/protocol.md):
 * - a `stream_event` `content_block_start` opens a block by (parent_tool_use_id, index): a
 *   text, thinking or tool entry; `claude/delta`s append to the open block;
 * - the `assistant` message then carries the complete block: its text replaces the streamed
 *   one (marked aborted after an interrupt); sub-agents' messages come only complete;
 * - `user` messages carry tool results, and the replay of the user's own prompt, which
 *   [ChatEvent.UserMessage] already showed: never twice;
 * - `claude/turnEnded` closes a turn with its footer (the CLI's `result` message is not read).
 */
class Transcript {
    private val entryList = mutableListOf<Entry>()
    private val queuedList = mutableListOf<UserEntry>()
    private val pendingMap = LinkedHashMap<String, PermissionRequestNotification>()
    private val fileList = mutableListOf<FileUpdatedNotification>()

    val entries: List<Entry> get() = entryList

    /** Prompts sent while a turn runs: shown after the entries until the CLI takes them up. */
    val queued: List<UserEntry> get() = queuedList

    /** Pending permission requests by `requestId`, oldest first (never the auto-allowed ones). */
    val pending: Map<String, PermissionRequestNotification> get() = pendingMap

    /** The chat's file updates, without their contents (the chat keeps those by `seq`). */
    val files: List<FileUpdatedNotification> get() = fileList

    var status = ChatStatus()
        private set
    var totalCostUsd = 0.0
        private set
    var lastTurnUsage: TurnUsage? = null
        private set
    var channelId: String? = null
        private set
    var sessionId: String? = null
        private set
    var cwd: String? = null
        private set

    private var nextId = 1
    private var change = TranscriptChange()

    /** Tool calls by `tool_use` id. */
    private val tools = HashMap<String, ToolEntry>()

    /** Blocks streaming now, by [blockKey]. */
    private val open = LinkedHashMap<String, Entry>()

    /** A turn runs: a prompt sent now is queued behind it. */
    private var turnOpen = false

    /** Applies one event of the chat, in order; returns what changed. */
    fun apply(event: ChatEvent): TranscriptChange {
        change = TranscriptChange()
        when (event) {
            is ChatEvent.Notification -> onNotification(event.params)
            is ChatEvent.UserMessage -> onUserMessage(event.messageId, event.text, event.images)
            is ChatEvent.History -> onHistory(event.history)
            is ChatEvent.Notice -> add(NoticeEntry(nextId++, event.level, event.text))
            is ChatEvent.Bound -> {
                if (channelId != null && channelId != event.channelId) endTurn()
                channelId = event.channelId
                sessionId = event.sessionId
                cwd = event.cwd
            }
        }
        return change
    }

    private fun onNotification(params: Any) {
        when (params) {
            is DeltaNotification -> onDelta(params)
            is MessageNotification -> onMessage(params.message.asObj())
            is StatusNotification -> onStatus(params)
            is PermissionRequestNotification -> onPermissionRequest(params)
            is PermissionCancelledNotification -> {
                pendingMap.remove(params.requestId)
                toolOfRequest(params.requestId)?.let { tool ->
                    tool.permission?.state = PermissionState.CANCELLED
                    touch(tool)
                }
            }
            is FileUpdatedNotification -> onFileUpdated(params)
            is TurnEndedNotification -> onTurnEnded(params)
        }
    }

    // -- entries ----------------------------------------------------------------------------

    private fun <E : Entry> add(entry: E): E {
        entryList += entry
        change.added += entry
        return entry
    }

    private fun touch(entry: Entry) {
        if (entry !in change.added) change.updated += entry
    }

    // Few tools wait for permission, and those are recent: search from the end.
    private fun toolOfRequest(requestId: String): ToolEntry? =
        entryList.asReversed().firstOrNull { it is ToolEntry && it.permission?.requestId == requestId } as ToolEntry?

    private fun addTool(toolUseId: String, name: String, parent: String?, input: JsonObject?): ToolEntry =
        add(ToolEntry(nextId++, toolUseId, name, parent)).also { tool ->
            tool.input = input
            tool.status = if (input != null) ToolStatus.RUNNING else ToolStatus.PENDING
            tools[toolUseId] = tool
        }

    private fun ensureTool(toolUseId: String, name: String, parent: String?, input: JsonObject?): ToolEntry =
        tools[toolUseId] ?: addTool(toolUseId, name, parent, input)

    // -- prompts ----------------------------------------------------------------------------

    private fun onUserMessage(messageId: String, text: String, images: Int) {
        val entry = UserEntry(nextId++, messageId, text, images)
        if (turnOpen) {
            queuedList += entry
        } else {
            add(entry)
            turnOpen = true
        }
    }

    /** Moves a queued prompt into the transcript (the CLI took it up); false if it is not queued. */
    private fun takeUp(messageId: String): Boolean {
        val at = queuedList.indexOfFirst { it.messageId == messageId }
        if (at < 0) return false
        add(queuedList.removeAt(at))
        return true
    }

    private fun hasPrompt(messageId: String): Boolean = entryList.asReversed().any { it is UserEntry && it.messageId == messageId }

    // -- streaming --------------------------------------------------------------------------

    private fun blockKey(parent: String?, index: Int) = "${parent ?: ""}:$index"

    private fun onDelta(delta: DeltaNotification) {
        val key = blockKey(delta.parentToolUseId, delta.index)
        val entry = open[key]
        when (delta.kind.orUnknown()) {
            DeltaKind.TOOL_INPUT -> if (entry is ToolEntry) {
                entry.partialInput.append(delta.text)
                touch(entry)
            }
            DeltaKind.TEXT, DeltaKind.THINKING -> {
                val thinking = delta.kind == DeltaKind.THINKING
                if (entry is TextEntry && entry.thinking == thinking) {
                    entry.text.append(delta.text)
                    entry.version++
                    touch(entry)
                } else {
                    // A delta without its block start (not seen with CLI 2.1.330): open the block here.
                    open[key] = add(TextEntry(nextId++, thinking, delta.parentToolUseId)).apply { text.append(delta.text) }
                }
            }
            null -> Unit // a kind this client does not know
        }
    }

    private fun finishStreaming(entry: Entry?) {
        if (entry is TextEntry && entry.streaming) {
            entry.streaming = false
            touch(entry)
        }
    }

    /** Ends the streaming of the open blocks of one stream ([parent]), or of all when [all]. */
    private fun closeBlocks(parent: String?, all: Boolean = false) {
        val prefix = "${parent ?: ""}:"
        val keys = open.keys.filter { all || it.startsWith(prefix) }
        for (key in keys) finishStreaming(open.remove(key))
    }

    private fun onStreamEvent(event: JsonObject, parent: String?) {
        when (event.str("type")) {
            "message_start", "message_stop" -> closeBlocks(parent)
            "content_block_start" -> {
                val index = event.int("index") ?: return
                val block = event.obj("content_block")
                val key = blockKey(parent, index)
                when (block.str("type")) {
                    "text" -> open[key] = add(TextEntry(nextId++, false, parent))
                    "thinking" -> open[key] = add(TextEntry(nextId++, true, parent))
                    "tool_use" -> block.str("id").takeIf { it.isNotEmpty() }?.let { id ->
                        open[key] = tools[id] ?: addTool(id, block.str("name"), parent, null)
                    }
                }
            }
            "content_block_stop" -> {
                val index = event.int("index") ?: return
                finishStreaming(open.remove(blockKey(parent, index)))
            }
        }
    }

    // -- CLI messages -----------------------------------------------------------------------

    private fun onMessage(message: JsonObject) {
        val parent = message.str("parent_tool_use_id").ifEmpty { null }
        when (message.str("type")) {
            "stream_event" -> onStreamEvent(message.obj("event"), parent)
            "assistant" -> onAssistant(message, parent)
            "user" -> onUser(message, parent)
            "system" -> when (message.str("subtype")) {
                "init" -> turnOpen = true
                "compact_boundary" -> add(NoticeEntry(nextId++, ChatEvent.Notice.Level.INFO, "Conversation compacted"))
            }
            // `result` is not read: claude/turnEnded says how the turn ended, without the CLI's
            // internal diagnostics.
        }
    }

    /** The open block of a stream that a complete `assistant` block finishes. */
    private fun openBlock(parent: String?, thinking: Boolean): TextEntry? {
        val prefix = "${parent ?: ""}:"
        return open.entries.firstOrNull { (key, entry) -> key.startsWith(prefix) && entry is TextEntry && entry.thinking == thinking }
            ?.value as TextEntry?
    }

    private fun onAssistant(message: JsonObject, parent: String?) {
        // An API error the CLI reports as an answer: the turn's footer says it.
        if (message.isTrue("is_api_error_message")) return
        val aborted = message.isTrue("aborted")
        for (block in message.obj("message").objects("content")) {
            when (val type = block.str("type")) {
                "tool_use" -> {
                    val input = block.obj("input")
                    val tool = ensureTool(block.str("id"), block.str("name"), parent, input)
                    tool.input = input
                    tool.partialInput.setLength(0)
                    if (tool.status == ToolStatus.PENDING &&
                        tool.permission?.state != PermissionState.PENDING
                    ) {
                        tool.status = ToolStatus.RUNNING
                    }
                    touch(tool)
                }
                "text", "thinking" -> {
                    val thinking = type == "thinking"
                    val text = block.str(type)
                    val streamed = openBlock(parent, thinking)
                    if (streamed != null) {
                        streamed.text.setLength(0)
                        streamed.text.append(text)
                        streamed.version++
                        streamed.streaming = false
                        if (!thinking) streamed.aborted = aborted
                        touch(streamed)
                    } else if (text.isNotEmpty()) {
                        add(TextEntry(nextId++, thinking, parent)).apply {
                            this.text.append(text)
                            streaming = false
                            this.aborted = aborted && !thinking
                        }
                    }
                }
            }
        }
    }

    private fun onUser(message: JsonObject, parent: String?) {
        val content = message.obj("message").get("content")
        val blocks = if (content != null && content.isJsonPrimitive) {
            listOf(
                JsonObject().apply {
                    addProperty("type", "text")
                    addProperty("text", content.asString)
                },
            )
        } else {
            message.obj("message").objects("content")
        }
        val results = blocks.filter { it.str("type") == "tool_result" }
        if (results.isNotEmpty()) return results.forEach { onToolResult(message, it) }
        if (parent != null) return // a sub-agent's prompt: its Agent call shows it
        val uuid = message.str("uuid")
        val text = blocks.filter { it.str("type") == "text" }.joinToString("\n") { it.str("text") }
        val replay = message.isTrue("isReplay")
        if (replay && uuid.isNotEmpty()) {
            turnOpen = true
            if (takeUp(uuid) || hasPrompt(uuid)) return
        }
        val local = LOCAL_COMMAND.find(text)
        if (local != null) {
            val level = if (local.groupValues[1] == "local-command-stderr") ChatEvent.Notice.Level.WARN else ChatEvent.Notice.Level.INFO
            add(NoticeEntry(nextId++, level, local.groupValues[2].trim()))
        } else if (replay && text.isNotEmpty()) {
            // A prompt this client did not send (another client of the session).
            add(UserEntry(nextId++, uuid.ifEmpty { null }, text, blocks.count { it.str("type") == "image" }))
        }
        // Anything else is the CLI's own text ("[Request interrupted by user]"): the turn footer says it.
    }

    private fun onToolResult(message: JsonObject, block: JsonObject) {
        val id = block.str("tool_use_id")
        val tool = tools[id] ?: return
        val content = block.get("content")
        val (text, images) = if (content != null && content.isJsonPrimitive) {
            content.asString to 0
        } else {
            val parts = block.objects("content")
            parts.filter { it.str("type") == "text" }.joinToString("\n") { it.str("text") } to parts.count { it.str("type") == "image" }
        }
        val isError = block.isTrue("is_error")
        // The whole file before the edit is the chat's to keep, not every view's.
        val details: JsonElement? = message.get("tool_use_result")?.let { raw ->
            if (raw.isJsonObject) raw.asJsonObject.deepCopy().apply { remove("originalFile") } else raw
        }
        tool.result = ToolResult(text, isError, images, details)
        val decision = decisionOf(message, id)
        val permission = tool.permission
        if (permission != null && (permission.state == PermissionState.PENDING || permission.state == PermissionState.ANSWERED)) {
            permission.state = decision ?: if (isError) PermissionState.DENIED else PermissionState.ALLOWED
            pendingMap.remove(permission.requestId)
        }
        tool.status = when {
            permission?.state == PermissionState.DENIED || decision == PermissionState.DENIED -> ToolStatus.DENIED
            isError -> ToolStatus.ERROR
            else -> ToolStatus.DONE
        }
        tool.partialInput.setLength(0)
        touch(tool)
    }

    /** How the user answered a tool's permission request, from the result's `tool_result_meta`. */
    private fun decisionOf(message: JsonObject, toolUseId: String): PermissionState? {
        val meta = message.objects("tool_result_meta").firstOrNull { it.str("id") == toolUseId } ?: return null
        if (meta.str("non_execution_kind") == "user-rejected") return PermissionState.DENIED
        return when (meta.obj("permission_decision").str("decision")) {
            "accept" -> PermissionState.ALLOWED
            "reject" -> PermissionState.DENIED
            else -> null
        }
    }

    // -- permissions, status, files, turns ---------------------------------------------------

    private fun onPermissionRequest(request: PermissionRequestNotification) {
        val auto = request.autoDecision == AutoDecision.ALLOW
        val tool = ensureTool(request.toolUseId ?: "request:${request.requestId}", request.toolName, request.parentToolUseId, request.input)
        // The CLI may have normalised the input (ExitPlanMode's plan is the plan file's text).
        tool.input = request.input
        tool.partialInput.setLength(0)
        tool.permission = ToolPermission(
            requestId = request.requestId,
            state = if (auto) PermissionState.ALLOWED else PermissionState.PENDING,
            auto = auto,
            preview = request.preview,
            previewNote = request.previewNote,
            decisionReason = request.decisionReason,
        )
        if (!auto) {
            tool.status = ToolStatus.PENDING
            pendingMap[request.requestId] = request
        }
        touch(tool)
    }

    private fun onStatus(update: StatusNotification) {
        status = ChatStatus(
            state = update.state,
            model = update.model ?: status.model,
            permissionMode = update.permissionMode ?: status.permissionMode,
            retry = update.retry,
            exit = update.exit,
        )
        sessionId = update.sessionId
        if (update.state == ChannelState.AWAITING_PERMISSION) return
        // No request is pending in any other state: those still listed were answered (their
        // tool's result will say how) or the channel is gone.
        val exited = update.state == ChannelState.EXITED
        for (requestId in pendingMap.keys.toList()) {
            pendingMap.remove(requestId)
            val tool = toolOfRequest(requestId) ?: continue
            val permission = tool.permission ?: continue
            if (permission.state != PermissionState.PENDING) continue
            permission.state = if (exited) PermissionState.CANCELLED else PermissionState.ANSWERED
            if (tool.status == ToolStatus.PENDING) tool.status = if (exited) ToolStatus.ERROR else ToolStatus.RUNNING
            touch(tool)
        }
        if (exited) endTurn()
        if (update.state == ChannelState.IDLE) {
            // Idle: the CLI took up every prompt sent, or never will (it failed before echoing).
            turnOpen = false
            queuedList.toList().forEach { add(it) }
            queuedList.clear()
        }
    }

    private fun onFileUpdated(update: FileUpdatedNotification) {
        fileList += update
        val tool = update.toolUseId?.let { tools[it] }
        if (tool != null) {
            tool.fileUpdates += update.seq
            touch(tool)
        } else {
            add(FileEntry(nextId++, update.seq, update.parentToolUseId))
        }
    }

    private fun onTurnEnded(ended: TurnEndedNotification) {
        endTurn()
        // A prompt the CLI answered without echoing it (it failed first) still goes above its footer.
        ended.messageIds?.forEach { takeUp(it) }
        totalCostUsd = ended.totalCostUsd
        lastTurnUsage = ended.usage
        add(TurnEntry(nextId++, ended.outcome, ended.durationMs, ended.permissionWaitMs, ended.costUsd, ended.error?.message))
    }

    /** The turn is over (or its channel is gone): nothing streams, nothing waits any more. */
    private fun endTurn() {
        closeBlocks(null, all = true)
        turnOpen = false
        for (requestId in pendingMap.keys.toList()) {
            pendingMap.remove(requestId)
            toolOfRequest(requestId)?.let { tool ->
                tool.permission?.state = PermissionState.CANCELLED
                touch(tool)
            }
        }
        // Tool calls of the main conversation without a result never ran to the end (a
        // sub-agent in the background may still be working on its own).
        for (entry in entryList.asReversed()) {
            if (entry is TurnEntry) break
            if (entry is ToolEntry && entry.parentToolUseId == null &&
                (entry.status == ToolStatus.PENDING || entry.status == ToolStatus.RUNNING)
            ) {
                entry.status = ToolStatus.ERROR
                touch(entry)
            }
        }
    }

    // -- history ----------------------------------------------------------------------------

    private fun onHistory(history: History) {
        val live = entryList.toList()
        entryList.clear()
        history.messages.forEach(::fromHistory)
        // Entries from the history come first: anything live moves behind them.
        entryList += live
        sessionId = sessionId ?: history.sessionId
        for (warning in history.warnings) add(NoticeEntry(nextId++, ChatEvent.Notice.Level.WARN, "history: $warning"))
        change.rebuilt = true
    }

    private fun fromHistory(m: HistoryMessage) {
        val parent = m.parentToolUseId
        val text = m.text ?: ""
        when (m.kind.orUnknown()) {
            HistoryMessageKind.USER_PROMPT -> if (parent == null) add(UserEntry(nextId++, m.uuid, text, m.imageCount ?: 0))
            HistoryMessageKind.ASSISTANT_TEXT, HistoryMessageKind.THINKING ->
                add(TextEntry(nextId++, m.kind == HistoryMessageKind.THINKING, parent)).apply {
                    this.text.append(text)
                    streaming = false
                }
            // Done unless its result says otherwise: a stored call without a result runs no more.
            HistoryMessageKind.TOOL_USE -> m.toolUseId?.let { id ->
                addTool(id, m.toolName ?: "tool", parent, m.input.asObj()).status = ToolStatus.DONE
            }
            HistoryMessageKind.TOOL_RESULT -> {
                val tool = m.toolUseId?.let { tools[it] } ?: return
                val isError = m.isError == true
                tool.result = ToolResult(text, isError, m.imageCount ?: 0, null)
                m.permission?.let { answered ->
                    val state = if (answered == HistoryPermission.DENIED) PermissionState.DENIED else PermissionState.ALLOWED
                    tool.permission = ToolPermission("", state, auto = false, preview = null, previewNote = null, decisionReason = null)
                }
                tool.status = when {
                    m.permission == HistoryPermission.DENIED -> ToolStatus.DENIED
                    isError -> ToolStatus.ERROR
                    else -> ToolStatus.DONE
                }
            }
            HistoryMessageKind.SYSTEM -> {
                val level = HISTORY_NOTICES[m.subtype ?: ""]
                if (level != null && parent == null) add(NoticeEntry(nextId++, level, text))
            }
            null -> Unit // a kind this client does not know
        }
    }

    private companion object {
        val LOCAL_COMMAND = Regex("""^\s*<(local-command-stdout|local-command-stderr)>([\s\S]*?)</\1>\s*$""")
        val HISTORY_NOTICES = mapOf(
            "compactBoundary" to ChatEvent.Notice.Level.INFO,
            "commandOutput" to ChatEvent.Notice.Level.INFO,
            "apiError" to ChatEvent.Notice.Level.ERROR,
        )
    }
}
