package dev.claudesidecar.ui

import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.AskState
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryFileChange
import dev.claudesidecar.core.protocol.EntryPermission
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.orUnknown
import java.awt.BorderLayout
import java.awt.Cursor
import java.awt.event.ContainerAdapter
import java.awt.event.ContainerEvent
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import javax.swing.BorderFactory
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JPanel
import javax.swing.JTextArea

/**
 * A tool use as one compact line: status, name, the argument that says what it does (file,
 * command, pattern), how its permission request went, and the size of its edits (+N −M). A
 * click opens the input (an edit's diff) and the result. A sub-agent's entries are nested in
 * [children], under the Agent/Task call that started them. Whether it is open is kept in
 * [opened] (the transcript's), so a view made again comes back as the user left it.
 */
class ToolRow(
    private val key: String,
    private val context: ViewContext,
    private val opened: OpenedEntries,
) : EntryView {
    private var entry = ToolEntry(id = "", name = "", status = ToolStatus.PENDING)
    private val status = JLabel()

    /** ▸ / ▾: the row opens on a click to its input and result. */
    private val chevron = JLabel("▸").apply {
        foreground = Theme.muted
        font = Theme.smallFont
    }
    private val toolName = JLabel().apply { font = Theme.font.deriveFont(java.awt.Font.BOLD) }
    private val argument = JLabel().apply {
        font = Theme.monoFont
        foreground = Theme.muted
    }
    private val stats = mutedLabel("")

    /**
     * Why a denied or failed call did not run: the user's reason or the error, always shown.
     * Made for the first reason (most calls have none: no text area for them in a long chat).
     */
    private var why: JTextArea? = null
    private val details = Column(6).apply {
        isVisible = false
        border = padding(4, 20, 2, 0)
    }

    /** What a sub-agent started by this call did, indented under it. */
    val children = Column(8).apply {
        isVisible = false
        border = BorderFactory.createCompoundBorder(
            BorderFactory.createCompoundBorder(padding(4, 6, 0, 0), BorderFactory.createMatteBorder(0, 2, 0, 0, Theme.border)),
            padding(0, 10, 0, 0),
        )
        addContainerListener(object : ContainerAdapter() {
            override fun componentAdded(e: ContainerEvent) {
                isVisible = true
            }
        })
    }
    private var drawnDetails: Any? = null

    override val component: JComponent = Column(0)

    init {
        val header = JPanel(BorderLayout(6, 0)).apply {
            isOpaque = false
            add(row(chevron, status, toolName, gap = 6), BorderLayout.WEST)
            add(argument, BorderLayout.CENTER) // truncated with "…" when the row is narrow
            add(stats, BorderLayout.EAST)
            cursor = Cursor.getPredefinedCursor(Cursor.HAND_CURSOR)
            toolTipText = "Show the input and the result"
        }
        header.addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                opened.toggle(key)
                update(entry)
            }
        })
        component.add(header)
        component.add(details)
        component.add(children)
    }

    override fun update(entry: Entry) {
        this.entry = entry as ToolEntry
        val (icon, colour, label) = when (entry.status.orUnknown()) {
            ToolStatus.PENDING, null -> Triple("○", Theme.muted, "preparing")
            ToolStatus.AWAITING_PERMISSION -> Triple("○", Theme.warning, "waiting for you")
            ToolStatus.RUNNING -> Triple("◌", Theme.accent, "running")
            ToolStatus.DONE -> Triple("✓", Theme.success, "done")
            ToolStatus.FAILED -> Triple("✕", Theme.error, "failed")
            ToolStatus.DENIED -> Triple("⊘", Theme.error, "denied")
            ToolStatus.INTERRUPTED -> Triple("■", Theme.muted, "interrupted")
        }
        status.text = icon
        status.foreground = colour
        status.toolTipText = label
        toolName.text = toolLabel(entry.name)
        argument.text = keyArgument(entry.name, entry.input, context.cwd)
        // An interrupted call says so by its ■ (and tooltip) only: the turn's footer says "Interrupted" once.
        stats.text = listOfNotNull(decision(entry.permission), fileStats(entry.files.orEmpty())).joinToString("  ·  ")
        val reason = entry.result?.text?.takeIf { it.isNotBlank() }?.let { text ->
            when (entry.status.orUnknown()) {
                ToolStatus.DENIED -> "Denied: $text"
                ToolStatus.FAILED -> "Failed: ${text.lineSequence().first()}"
                else -> null
            }
        }
        val why = why ?: reason?.let { wrappingText("", Theme.smallFont, Theme.error).also(::showWhy) }
        why?.isVisible = reason != null
        why?.text = reason ?: ""
        val expanded = opened.isOpen(key)
        details.isVisible = expanded
        chevron.text = if (expanded) "▾" else "▸"
        if (expanded) fillDetails(entry)
        component.revalidate()
        component.repaint()
    }

    /** Puts [area], the reason's text, under the header (above the details). */
    private fun showWhy(area: JTextArea) {
        area.border = padding(2, 20, 0, 0)
        why = area
        component.add(area, 1)
    }

    /** How the permission request went, in words (null when nobody was asked). */
    private fun decision(permission: EntryPermission?): String? = when (permission?.decision?.orUnknown()) {
        null -> null
        AskState.PENDING -> "waiting for you"
        AskState.ANSWERED -> "answered"
        AskState.ALLOWED -> if (permission.byRule == true) "allowed by rule" else "allowed"
        AskState.DENIED -> "denied"
        AskState.CANCELLED -> "not answered"
    }

    /** The size of the edits ("+3 −1"), as the entry counts it; null when it changed no file. */
    private fun fileStats(files: List<EntryFileChange>): String? =
        if (files.isEmpty()) null else "+${files.sumOf { it.added }} −${files.sumOf { it.removed }}"

    /** The diffs to show: those of the files changed, else the one proposed when permission was asked. */
    private fun diffs(entry: ToolEntry): List<String> =
        context.fileUpdates(key).mapNotNull { it.diff }.ifEmpty { listOfNotNull(entry.permission?.preview) }

    private fun fillDetails(entry: ToolEntry) {
        val updates = context.fileUpdates(key)
        val drawn = listOf(entry, updates.size)
        if (drawn == drawnDetails) return
        drawnDetails = drawn
        details.removeAll()
        val diffs = diffs(entry)
        for (update in updates) openDiffLink(context, update.seq, update.path)?.let { details.add(it) }
        when {
            diffs.isNotEmpty() -> diffs.forEach { details.add(DiffView(it)) }
            entry.input != null -> details.add(codeBlock(inputText(entry.input!!)))
            !entry.partialInput.isNullOrEmpty() -> details.add(codeBlock(entry.partialInput!!))
        }
        entry.permission?.previewNote?.let { details.add(wrappingText(it, Theme.smallFont, Theme.muted)) }
        val result = entry.result
        if (result != null && result.text.isNotBlank() && (diffs.isEmpty() || result.isError == true)) {
            val lines = result.text.trimEnd().lines()
            val upTo = if (opened.showsWhole(key)) WHOLE_RESULT_LINES else RESULT_LINES
            val shown =
                lines.take(upTo).joinToString("\n") +
                    if (lines.size > upTo && upTo == WHOLE_RESULT_LINES) "\n… ${lines.size - upTo} more lines" else ""
            details.add(codeBlock(shown, if (result.isError == true) Theme.error else Theme.foreground))
            if (lines.size > upTo && upTo == RESULT_LINES) {
                val more = lines.size - RESULT_LINES
                details.add(
                    row(
                        linkButton(if (more == 1) "Show 1 more line" else "Show $more more lines") {
                            opened.showWhole(key)
                            drawnDetails = null
                            update(this.entry)
                        }.apply { font = Theme.smallFont },
                        gap = 0,
                    ),
                )
            }
        }
        (result?.imageCount ?: 0).takeIf { it > 0 }?.let { details.add(mutedLabel(if (it == 1) "1 image" else "$it images")) }
    }

    /** The input as `key: value` lines (the command of a Bash call alone). */
    private fun inputText(input: JsonObject): String {
        input.get("command")?.takeIf { it.isJsonPrimitive }?.let { return it.asString }
        return input.entrySet().joinToString("\n") { (k, v) -> "$k: ${if (v.isJsonPrimitive) v.asString else v.toString()}" }
    }

    companion object {
        private const val RESULT_LINES = 12

        /** The most lines of a result shown when the user asked for it whole (a file read can be thousands). */
        private const val WHOLE_RESULT_LINES = 2_000

        /** The name shown for a tool: MCP tools as "server · tool". */
        fun toolLabel(name: String): String =
            Regex("^mcp__(.+?)__(.+)$").find(name)?.let { "${it.groupValues[1]} · ${it.groupValues[2]}" } ?: name

        /** The one argument that says what a call does. */
        fun keyArgument(name: String, input: JsonObject?, cwd: String?): String {
            if (input == null) return ""
            fun s(key: String) = input.get(key)?.takeIf { it.isJsonPrimitive }?.asString ?: ""
            val path = s("file_path").ifEmpty { s("notebook_path") }.ifEmpty { s("path") }
            return when (name) {
                "Bash" -> s("command").lineSequence().first()
                "Grep", "Glob" -> listOf(s("pattern"), relativePath(path, cwd)).filter { it.isNotEmpty() }.joinToString("  in ")
                "WebFetch" -> s("url")
                "WebSearch" -> s("query")
                "Agent", "Task" -> s("description")
                "TodoWrite" -> input.getAsJsonArray("todos")?.let { "${it.size()} to-dos" } ?: ""
                "AskUserQuestion" -> input.getAsJsonArray("questions")?.firstOrNull()?.asJsonObject?.get("question")?.asString ?: ""
                "ExitPlanMode" -> "plan ready for review"
                else -> if (path.isNotEmpty()) {
                    relativePath(path, cwd)
                } else {
                    input.entrySet().firstOrNull { it.value.isJsonPrimitive }?.value?.asString?.lineSequence()?.first() ?: ""
                }
            }
        }
    }
}
