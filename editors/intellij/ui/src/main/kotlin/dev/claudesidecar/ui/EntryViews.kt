package dev.claudesidecar.ui

import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.transcript.Entry
import dev.claudesidecar.core.transcript.FileEntry
import dev.claudesidecar.core.transcript.NoticeEntry
import dev.claudesidecar.core.transcript.TextEntry
import dev.claudesidecar.core.transcript.ToolEntry
import dev.claudesidecar.core.transcript.TurnEntry
import dev.claudesidecar.core.transcript.UserEntry
import java.awt.BorderLayout
import java.awt.Graphics
import java.awt.Graphics2D
import java.awt.RenderingHints
import java.util.Locale
import javax.swing.BorderFactory
import javax.swing.JComponent
import javax.swing.JPanel

/** What entry views need from the chat around them. */
interface ViewContext {
    val cwd: String?

    /** The file update [seq] of the chat (without contents). */
    fun fileUpdate(seq: Int): FileUpdatedNotification?

    /** Shows a file update (by `seq`) in the host's diff viewer; null when the host has none. */
    val openFileUpdate: ((Int) -> Unit)? get() = null
}

/** A link that opens the file update [seq] in the host's diff viewer, or null when the host has none. */
fun openDiffLink(context: ViewContext, seq: Int, path: String?): JComponent? {
    val open = context.openFileUpdate ?: return null
    val name = path?.substringAfterLast('/') ?: "the change"
    return row(linkButton("Open $name in the diff viewer") { open(seq) }, gap = 0)
}

/** The view of one transcript entry; [update] redraws it after its entry changed. */
interface EntryView {
    val component: JComponent
    fun update() = Unit
}

fun entryView(entry: Entry, context: ViewContext): EntryView {
    val view = when (entry) {
        is UserEntry -> UserView(entry)
        is TextEntry -> if (entry.thinking) ThinkingView(entry) else AnswerView(entry)
        is ToolEntry -> ToolRow(entry, context)
        is TurnEntry -> TurnFooter(entry)
        is NoticeEntry -> NoticeView(entry)
        is FileEntry -> FileView(entry, context)
    }
    // A sub-agent's output sits indented under the Agent call that started it.
    if (entry.parentToolUseId != null) {
        view.component.border = BorderFactory.createCompoundBorder(
            BorderFactory.createMatteBorder(0, 2, 0, 0, Theme.border),
            padding(0, 10, 0, 0),
        )
    }
    return view
}

/** The user's prompt: a tinted, rounded box. */
class UserView(entry: UserEntry) : EntryView {
    override val component: JComponent = object : Column() {
        override fun paintComponent(g: Graphics) {
            val g2 = g.create() as Graphics2D
            g2.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON)
            g2.color = Theme.userBackground
            g2.fillRoundRect(0, 0, width, height, 10, 10)
            g2.dispose()
        }
    }.apply {
        border = padding(7, 10, 7, 10)
        add(wrappingText(entry.text))
        if (entry.images > 0) add(mutedLabel(if (entry.images == 1) "1 image" else "${entry.images} images"))
    }
}

/** The model's answer as markdown; re-rendered only when its text changed. */
class AnswerView(private val entry: TextEntry) : EntryView {
    private val markdown = MarkdownView()
    private val interrupted = mutedLabel("Interrupted").apply { isVisible = false }
    private var drawn = -1
    override val component: JComponent = Column(2).apply {
        add(markdown)
        add(interrupted)
    }

    override fun update() {
        if (drawn != entry.version) {
            drawn = entry.version
            markdown.markdown = entry.text.toString()
        }
        interrupted.isVisible = entry.aborted
    }
}

/** The model's thinking: one quiet line, expandable to the text. */
class ThinkingView(private val entry: TextEntry) : EntryView {
    private var expanded = false
    private val body = wrappingText("", Theme.smallFont, Theme.muted).apply {
        isVisible = false
        border = BorderFactory.createCompoundBorder(BorderFactory.createMatteBorder(0, 2, 0, 0, Theme.border), padding(2, 8, 2, 0))
    }
    private val toggle = linkButton("") {
        expanded = !expanded
        update()
    }.apply {
        foreground = Theme.muted
        font = Theme.smallFont
    }
    override val component: JComponent = Column(4).apply {
        add(row(toggle, gap = 0))
        add(body)
    }

    override fun update() {
        toggle.text = (if (expanded) "▾ " else "▸ ") + if (entry.streaming) "Thinking…" else "Thought"
        body.isVisible = expanded
        if (expanded && body.text.length != entry.text.length) body.text = entry.text.toString()
        component.revalidate()
    }
}

/** How a turn ended: time, cost, and what went wrong, in red. */
class TurnFooter(entry: TurnEntry) : EntryView {
    override val component: JComponent = JPanel(BorderLayout()).apply {
        isOpaque = false
        border = BorderFactory.createCompoundBorder(BorderFactory.createMatteBorder(0, 0, 1, 0, Theme.border), padding(0, 0, 6, 0))
        val facts = buildList {
            add(duration(entry.durationMs))
            if (entry.permissionWaitMs > 0) add("${duration(entry.permissionWaitMs)} waiting for you")
            if (entry.costUsd > 0) add(String.format(Locale.ROOT, "$%.4f", entry.costUsd))
        }.joinToString("  ·  ")
        val outcome = when (entry.outcome) {
            TurnOutcome.SUCCESS -> null
            TurnOutcome.INTERRUPTED -> "Interrupted"
            TurnOutcome.MAX_TURNS -> "Stopped: too many turns"
            TurnOutcome.MAX_BUDGET -> "Stopped: budget reached"
            TurnOutcome.ERROR, null -> entry.error ?: "The turn failed"
        }
        add(mutedLabel(facts), BorderLayout.WEST)
        if (outcome != null) {
            val failed = entry.outcome == TurnOutcome.ERROR || entry.outcome == null
            add(wrappingText(outcome, Theme.smallFont, if (failed) Theme.error else Theme.muted), BorderLayout.SOUTH)
        }
    }

    private fun duration(ms: Int) = when {
        ms < 60_000 -> String.format(Locale.ROOT, "%.1f s", ms / 1000.0)
        else -> "${ms / 60_000} min ${ms % 60_000 / 1000} s"
    }
}

class NoticeView(entry: NoticeEntry) : EntryView {
    override val component: JComponent = wrappingText(
        entry.text,
        Theme.smallFont,
        when (entry.level) {
            ChatEvent.Notice.Level.INFO -> Theme.muted
            ChatEvent.Notice.Level.WARN -> Theme.warning
            ChatEvent.Notice.Level.ERROR -> Theme.error
        },
    )
}

/** A file changed without a tool call (a rewind): its path and diff. */
class FileView(
    entry: FileEntry,
    context: ViewContext,
) : EntryView {
    override val component: JComponent = Column(4).apply {
        val update = context.fileUpdate(entry.seq)
        add(mutedLabel("Changed ${update?.path?.let { relativePath(it, context.cwd) } ?: "a file"}"))
        openDiffLink(context, entry.seq, update?.path)?.let { add(it) }
        update?.diff?.let { add(DiffView(it)) }
    }
}
