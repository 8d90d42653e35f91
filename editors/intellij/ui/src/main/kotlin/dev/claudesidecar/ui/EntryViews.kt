package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.NoticeLevel
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.protocol.orUnknown
import java.awt.BorderLayout
import java.awt.Color
import java.awt.Graphics
import java.awt.Graphics2D
import java.awt.RenderingHints
import java.util.Locale
import javax.swing.BorderFactory
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JPanel
import javax.swing.JTextArea

/** What entry views need from the chat around them. */
interface ViewContext {
    val cwd: String?

    /** The file updates (without contents) of the entry [key]: a tool's edits with their diffs, a rewind's file. */
    fun fileUpdates(key: String): List<FileUpdatedNotification>

    /** Shows a file update (by `seq`) in the host's diff viewer; null when the host has none. */
    val openFileUpdate: ((Int) -> Unit)? get() = null

    /** Whether the prompt [key] waits for the chat to start (sent before its channel opened). */
    fun waitsForStart(key: String): Boolean = false

    /** Why the prompt [key] was not sent (it waited for a chat that could not open), or null. */
    fun notSentBecause(key: String): String? = null
}

/** A link that opens the file update [seq] in the host's diff viewer, or null when the host has none. */
fun openDiffLink(context: ViewContext, seq: Int, path: String?): JComponent? {
    val open = context.openFileUpdate ?: return null
    val name = path?.substringAfterLast('/') ?: "the change"
    return row(linkButton("Open $name in the diff viewer") { open(seq) }, gap = 0)
}

/**
 * The view of one entry of the conversation, showing what the entry says; [update] draws it
 * again for the entry's new state (same id, same kind).
 */
interface EntryView {
    val component: JComponent
    fun update(entry: Entry)

    companion object {
        /** The view whose [component] [c] is (null for any other component). */
        fun of(c: java.awt.Component): EntryView? = (c as? JComponent)?.getClientProperty(EntryView::class.java) as? EntryView
    }
}

/**
 * A view that can say "Interrupted" (an aborted answer, an interrupt notice); it stays quiet
 * when [saidElsewhere]: another entry of its exchange says it (TranscriptView decides which).
 */
interface InterruptMark {
    var saidElsewhere: Boolean
}

/**
 * A view for [entry] (kept under [key]), drawn once; a sub-agent's is indented under its Agent
 * call. A tool row or thought opens as [opened] says (the user opened it before its view was dropped).
 */
fun entryView(key: String, entry: Entry, context: ViewContext, opened: OpenedEntries): EntryView {
    val view = when (entry) {
        is PromptEntry -> UserView(key, context)
        is TextEntry -> AnswerView()
        is ThinkingEntry -> ThinkingView(key, opened)
        is ToolEntry -> ToolRow(key, context, opened)
        is TurnEntry -> TurnFooter()
        is NoticeEntry -> NoticeView(key, context)
    }
    view.update(entry)
    view.component.putClientProperty(EntryView::class.java, view)
    return view
}

/**
 * The user's prompt (or the one a sub-agent was given): a tinted, rounded box; "Queued" while it
 * waits for the turn running, "Waiting" while it waits for the chat to start, "Not sent" and why
 * when the chat could not open (the prompt's text stays, to select and copy).
 */
class UserView(
    private val key: String,
    private val context: ViewContext,
) : EntryView {
    private val text = wrappingText("")
    private val images = mutedLabel("")
    private val queued = mutedLabel(QUEUED)

    /** "Not sent: why", wrapped and selectable: the reason can be long (a CLI's last words). */
    private val notSent = wrappingText("", Theme.smallFont, Theme.error).apply { isVisible = false }
    override val component: JComponent = object : Column(2) {
        override fun paintComponent(g: Graphics) {
            val g2 = g.create() as Graphics2D
            g2.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON)
            g2.color = Theme.userBackground
            g2.fillRoundRect(0, 0, width, height, 10, 10)
            g2.dispose()
        }
    }.apply {
        border = padding(7, 10, 7, 10)
        add(text)
        add(images)
        add(queued)
        add(notSent)
    }

    override fun update(entry: Entry) {
        entry as PromptEntry
        if (text.text != entry.text) text.text = entry.text
        val count = entry.imageCount ?: 0
        images.isVisible = count > 0
        images.text = if (count == 1) "1 image" else "$count images"
        queued.isVisible = entry.queued == true
        queued.text = if (context.waitsForStart(key)) WAITING else QUEUED
        val why = context.notSentBecause(key)
        notSent.isVisible = why != null
        if (why != null) notSent.text = "$NOT_SENT$why"
        component.revalidate()
    }

    companion object {
        const val QUEUED = "Queued: sent when Claude is done"
        const val WAITING = "Waiting: sent once Claude has started"

        /** How a prompt the chat never took says so; the reason follows. */
        const val NOT_SENT = "Not sent: "
    }
}

/** The model's thinking: one quiet line, expandable to the text (open while [opened] says so). */
class ThinkingView(
    private val key: String,
    private val opened: OpenedEntries,
) : EntryView {
    private var entry = ThinkingEntry(id = "", text = "")

    /**
     * The thought's text, made when first opened: a text area costs a millisecond or so to make,
     * and a long chat scrolled through makes a view per thought it passes, nearly all closed.
     */
    private var body: JTextArea? = null
    private val toggle = linkButton("") {
        opened.toggle(key)
        update(entry)
    }.apply {
        foreground = Theme.muted
        font = Theme.smallFont
    }
    override val component: JComponent = Column(4).apply {
        add(row(toggle, gap = 0))
    }

    override fun update(entry: Entry) {
        this.entry = entry as ThinkingEntry
        val expanded = opened.isOpen(key)
        toggle.text = (if (expanded) "▾ " else "▸ ") + if (entry.streaming == true) "Thinking…" else "Thought"
        val body = body ?: if (expanded) openedBody() else null
        body?.isVisible = expanded
        if (expanded && body != null && body.text != entry.text) body.text = entry.text
        component.revalidate()
    }

    private fun openedBody(): JTextArea = wrappingText("", Theme.smallFont, Theme.muted).apply {
        border = BorderFactory.createCompoundBorder(BorderFactory.createMatteBorder(0, 2, 0, 0, Theme.border), padding(2, 8, 2, 0))
        body = this
        component.add(this)
    }
}

/** How a turn ended: its outcome (when it did not simply finish), time, and cost; an error on a line of its own. */
class TurnFooter : EntryView {
    private val facts = mutedLabel("")

    /** The error of a failed turn, made when one is shown (most turns have none: no text area for them). */
    private var error: JTextArea? = null
    override val component: JComponent = JPanel(BorderLayout()).apply {
        isOpaque = false
        border = BorderFactory.createCompoundBorder(BorderFactory.createMatteBorder(0, 0, 1, 0, Theme.border), padding(0, 0, 6, 0))
        add(facts, BorderLayout.WEST)
    }

    override fun update(entry: Entry) {
        entry as TurnEntry
        val outcome = entry.outcome.orUnknown()
        facts.text = buildList {
            when (outcome) {
                TurnOutcome.INTERRUPTED -> add("Interrupted")
                TurnOutcome.MAX_TURNS -> add("Stopped: too many turns")
                TurnOutcome.MAX_BUDGET -> add("Stopped: budget reached")
                TurnOutcome.SUCCESS, TurnOutcome.ERROR, null -> Unit
            }
            add(duration(entry.durationMs))
            if (entry.permissionWaitMs > 0) add("${duration(entry.permissionWaitMs)} waiting for you")
            if (entry.costUsd > 0) add(String.format(Locale.ROOT, "$%.4f", entry.costUsd))
        }.joinToString("  ·  ")
        val failed = outcome == TurnOutcome.ERROR || outcome == null
        val error = error ?: if (failed) wrappingText("", Theme.smallFont, Theme.error).also(::showError) else return
        error.isVisible = failed
        error.text = if (failed) entry.error ?: "The turn failed" else ""
    }

    private fun showError(area: JTextArea) {
        error = area
        component.add(area, BorderLayout.SOUTH)
    }

    private fun duration(ms: Int) = when {
        ms < 60_000 -> String.format(Locale.ROOT, "%.1f s", ms / 1000.0)
        else -> "${ms / 60_000} min ${ms % 60_000 / 1000} s"
    }
}

/**
 * Something the CLI (or this client) reported, by its subtype: a compaction as a divider, a
 * command's output as a code block, an interrupt as one quiet "Interrupted" (unless said
 * elsewhere), a rewound file with its diff; any other subtype (an API error, a cleared
 * conversation, one this client does not know) by its text, coloured by level.
 */
class NoticeView(
    private val key: String,
    private val context: ViewContext,
) : EntryView,
    InterruptMark {
    private var entry: NoticeEntry? = null
    override var saidElsewhere = false
        set(value) {
            if (field == value) return
            field = value
            entry?.let(::update)
        }
    override val component: JComponent = Column(4)

    override fun update(entry: Entry) {
        entry as NoticeEntry
        this.entry = entry
        component.removeAll()
        val colour = levelColour(entry.level.orUnknown())
        when (entry.subtype) {
            "compaction" -> component.add(divider(entry.text.ifBlank { "Conversation compacted" }))
            "cleared" -> component.add(divider(entry.text.ifBlank { "Conversation cleared" }))
            "commandOutput" -> component.add(codeBlock(entry.text.trimEnd(), colour))
            "interrupted" -> if (!saidElsewhere) component.add(mutedLabel("Interrupted").apply { toolTipText = entry.text })
            "fileChanged" -> {
                val updates = context.fileUpdates(key)
                component.add(mutedLabel(updates.firstOrNull()?.let { "Changed ${relativePath(it.path, context.cwd)}" } ?: entry.text))
                for (update in updates) {
                    openDiffLink(context, update.seq, update.path)?.let { component.add(it) }
                    update.diff?.let { component.add(DiffView(it)) }
                }
            }
            else -> component.add(wrappingText(entry.text, Theme.smallFont, colour))
        }
        component.isVisible = component.componentCount > 0
        component.revalidate()
    }

    private fun divider(text: String) = JLabel("── $text ──").apply {
        font = Theme.smallFont
        foreground = Theme.muted
    }
}

/** The colour of a notice's text at [level] (an unknown level reads as info). */
fun levelColour(level: NoticeLevel?): Color = when (level) {
    NoticeLevel.ERROR -> Theme.error
    NoticeLevel.WARN -> Theme.warning
    NoticeLevel.INFO, null -> Theme.muted
}

/** Monospaced text on the code background (a command's output, a tool's input or result). */
fun codeBlock(text: String, colour: Color = Theme.foreground) = wrappingText(text, Theme.monoFont, colour).apply {
    isOpaque = true
    background = Theme.codeBackground
    border = padding(4, 6, 4, 6)
}
