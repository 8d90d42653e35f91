package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.WorktreeOptions
import javax.swing.JComboBox
import javax.swing.JLabel
import javax.swing.JScrollPane
import javax.swing.JTextArea
import javax.swing.JTextField
import javax.swing.SwingUtilities
import javax.swing.event.AncestorEvent
import javax.swing.event.AncestorListener
import javax.swing.event.DocumentEvent
import javax.swing.event.DocumentListener

/**
 * The form of "New chat in worktree…": what Claude should do there (sent as the chat's first
 * prompt; empty: nothing is sent), the worktree's name and where it starts. The name follows
 * the task's first words ([nameFrom], as every client names it) until the user edits the name;
 * an empty name lets the daemon pick one.
 */
class WorktreeChatForm : Column(6) {
    val task = JTextArea(3, 48).apply {
        lineWrap = true
        wrapStyleWord = true
    }
    val name = JTextField(24)
    val base = JComboBox(arrayOf("head", "fresh")).apply { isEditable = true }

    /** The name last filled in from the task: while the field still says it, the task rules it. */
    private var suggested = ""

    init {
        add(JLabel("What should Claude do there? (sent as the chat's first message; empty: nothing is sent)"))
        add(JScrollPane(task))
        add(JLabel("Name (from the task's first words; empty: one is chosen; the branch is worktree-NAME):"))
        add(name)
        add(JLabel("Start from: head (your branch and commits), fresh (the default branch), or any ref:"))
        add(base)
        task.document.addDocumentListener(
            object : DocumentListener {
                override fun insertUpdate(e: DocumentEvent) = follow()

                override fun removeUpdate(e: DocumentEvent) = follow()

                override fun changedUpdate(e: DocumentEvent) = follow()
            },
        )
        // A dialog focuses its OK button once it shows: the task is what the user types first.
        task.addAncestorListener(
            object : AncestorListener {
                override fun ancestorAdded(e: AncestorEvent) = SwingUtilities.invokeLater { task.requestFocusInWindow() }

                override fun ancestorRemoved(e: AncestorEvent) {}

                override fun ancestorMoved(e: AncestorEvent) {}
            },
        )
    }

    private fun follow() {
        if (name.text != suggested) return
        suggested = nameFrom(task.text)
        name.text = suggested
    }

    /** The chat to open: its worktree and its first prompt (null: none). */
    fun request(): Request = Request(
        WorktreeOptions(
            baseRef = (base.selectedItem as? String)?.trim()?.ifEmpty { null },
            name = name.text.trim().ifEmpty { null },
        ),
        task.text.trim().ifEmpty { null },
    )

    /** A worktree chat to open: where, and what it is asked first. */
    data class Request(
        val worktree: WorktreeOptions,
        val firstPrompt: String?,
    )

    companion object {
        private val WORD = Regex("[a-z0-9]+")

        /**
         * A worktree's name from a task's first [words] words, the rule of every client:
         * lowercased, each run of characters other than a-z and 0-9 one dash, no dash at either
         * end ("Fix the login form!" → "fix-the-login-form"); "" when there is no such word.
         */
        fun nameFrom(task: String, words: Int = 4): String = WORD.findAll(task.lowercase()).take(words).joinToString("-") { it.value }
    }
}
