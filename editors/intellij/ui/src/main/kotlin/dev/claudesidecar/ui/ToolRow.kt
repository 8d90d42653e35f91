package dev.claudesidecar.ui

import com.google.gson.JsonObject
import dev.claudesidecar.core.transcript.PermissionState
import dev.claudesidecar.core.transcript.ToolEntry
import dev.claudesidecar.core.transcript.ToolStatus
import java.awt.BorderLayout
import java.awt.Cursor
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JPanel

/**
 * A tool call as one compact line: status, name, and the argument that says what it does
 * (file, command, pattern). A click opens the input (an edit's diff) and the result.
 */
class ToolRow(
    private val entry: ToolEntry,
    private val context: ViewContext,
) : EntryView {
    private val status = JLabel()
    private val toolName = JLabel(toolLabel(entry.name)).apply { font = Theme.font.deriveFont(java.awt.Font.BOLD) }
    private val argument = JLabel().apply {
        font = Theme.monoFont
        foreground = Theme.muted
    }
    private val stats = mutedLabel("")

    /** Why a denied call did not run: the user's reason, always shown. */
    private val denial = wrappingText("", Theme.smallFont, Theme.error).apply {
        isVisible = false
        border = padding(2, 20, 0, 0)
    }
    private val details = Column(6).apply {
        isVisible = false
        border = padding(4, 20, 2, 0)
    }
    private var expanded = false
    private var drawnDetails: String? = null

    override val component: JComponent = Column(0)

    init {
        val header = JPanel(BorderLayout(6, 0)).apply {
            isOpaque = false
            add(row(status, toolName, gap = 6), BorderLayout.WEST)
            add(argument, BorderLayout.CENTER) // truncated with "…" when the row is narrow
            add(stats, BorderLayout.EAST)
            cursor = Cursor.getPredefinedCursor(Cursor.HAND_CURSOR)
            toolTipText = "Show the input and the result"
        }
        header.addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                expanded = !expanded
                update()
            }
        })
        component.add(header)
        component.add(denial)
        component.add(details)
    }

    override fun update() {
        val (icon, colour, label) = when (entry.status) {
            ToolStatus.PENDING -> {
                val waiting = if (entry.permission?.state == PermissionState.PENDING) "waiting for you" else "waiting"
                Triple("○", Theme.muted, waiting)
            }
            ToolStatus.RUNNING -> Triple("◌", Theme.accent, "running")
            ToolStatus.DONE -> Triple("✓", Theme.success, "done")
            ToolStatus.ERROR -> Triple("✕", Theme.error, "failed")
            ToolStatus.DENIED -> Triple("⊘", Theme.error, "denied")
        }
        status.text = icon
        status.foreground = colour
        status.toolTipText = label
        argument.text = keyArgument(entry.name, entry.input, context.cwd)
        stats.text = if (entry.status == ToolStatus.DENIED) "denied" else diffStats()
        val reason = entry.result?.text?.takeIf { entry.status == ToolStatus.DENIED && it.isNotBlank() }
        denial.isVisible = reason != null
        denial.text = reason?.let { "Denied: $it" } ?: ""
        details.isVisible = expanded
        if (expanded) fillDetails()
        component.revalidate()
        component.repaint()
    }

    /** The edit's size ("+3 −1"): from its file updates, else its proposed diff. */
    private fun diffStats(): String {
        val diffs = diffs()
        if (diffs.isEmpty()) return ""
        val lines = diffs.flatMap { it.lines() }
        val added = lines.count { it.startsWith("+") && !it.startsWith("+++") }
        val removed = lines.count { it.startsWith("-") && !it.startsWith("---") }
        return "+$added −$removed"
    }

    private fun diffs(): List<String> {
        val done = entry.fileUpdates.mapNotNull { context.fileUpdate(it)?.diff }
        return done.ifEmpty { listOfNotNull(entry.permission?.preview) }
    }

    private fun fillDetails() {
        val result = entry.result
        val key = "${entry.status}|${entry.fileUpdates.size}|${result?.text?.length}"
        if (key == drawnDetails) return
        drawnDetails = key
        details.removeAll()
        val diffs = diffs()
        for (seq in entry.fileUpdates) openDiffLink(context, seq, context.fileUpdate(seq)?.path)?.let { details.add(it) }
        when {
            diffs.isNotEmpty() -> diffs.forEach { details.add(DiffView(it)) }
            entry.input != null -> details.add(codeBlock(inputText(entry.input!!)))
            entry.partialInput.isNotEmpty() -> details.add(codeBlock(entry.partialInput.toString()))
        }
        if (result != null && result.text.isNotBlank() && (diffs.isEmpty() || result.isError)) {
            val lines = result.text.trimEnd().lines()
            val shown =
                lines.take(RESULT_LINES).joinToString("\n") +
                    if (lines.size > RESULT_LINES) "\n… ${lines.size - RESULT_LINES} more lines" else ""
            details.add(codeBlock(shown, if (result.isError) Theme.error else Theme.foreground))
        }
    }

    private fun codeBlock(text: String, colour: java.awt.Color = Theme.foreground) = wrappingText(text, Theme.monoFont, colour).apply {
        isOpaque = true
        background = Theme.codeBackground
        border = padding(4, 6, 4, 6)
    }

    /** The input as `key: value` lines (the command of a Bash call alone). */
    private fun inputText(input: JsonObject): String {
        input.get("command")?.takeIf { it.isJsonPrimitive }?.let { return it.asString }
        return input.entrySet().joinToString("\n") { (k, v) -> "$k: ${if (v.isJsonPrimitive) v.asString else v.toString()}" }
    }

    companion object {
        private const val RESULT_LINES = 12

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
