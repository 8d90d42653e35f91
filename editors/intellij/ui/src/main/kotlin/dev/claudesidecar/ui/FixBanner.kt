package dev.claudesidecar.ui

import java.awt.Toolkit
import java.awt.datatransfer.StringSelection
import javax.swing.BorderFactory
import javax.swing.JButton

/**
 * An error the user fixes outside the app, with a button that copies the command to run (in a
 * terminal: signing in and upgrading are interactive). Used over the prompt while the chat's CLI
 * cannot authenticate, and over the chats when the daemon and this client do not fit. Hidden
 * until [showFix]; [clear] once the cause is gone.
 */
class FixBanner(private val sidePadding: Int) : Column(6) {
    private val message = wrappingText("", colour = Theme.error)
    private val copy: JButton = button("Copy Command") { copyCommand() }

    /** The command the button copies; null when there is none to copy (or the banner is hidden). */
    var command: String? = null
        private set

    init {
        isVisible = false
        add(message)
        add(row(copy))
        restyle()
    }

    fun restyle() {
        isOpaque = false
        border =
            BorderFactory.createCompoundBorder(
                padding(4, sidePadding, 4, sidePadding),
                BorderFactory.createMatteBorder(0, 3, 0, 0, Theme.error),
            )
        message.font = Theme.font
        message.foreground = Theme.error
        message.border = padding(0, 8, 0, 0)
    }

    fun showFix(text: String, command: String?) {
        this.command = command
        message.text = withoutCodeMarks(text)
        copy.text = "Copy Command"
        copy.isVisible = command != null
        isVisible = true
    }

    fun clear() {
        command = null
        isVisible = false
    }

    /** [text] without Markdown's inline-code backticks (the daemon writes its messages in
     * Markdown): plain text shows them as they are, and the command is on the button anyway. */
    private fun withoutCodeMarks(text: String): String = text.replace(CODE_SPAN) { it.groupValues[1] }

    private fun copyCommand() {
        val command = command ?: return
        Toolkit.getDefaultToolkit().systemClipboard.setContents(StringSelection(command), null)
        copy.text = "Copied: run it in a terminal"
    }

    private companion object {
        val CODE_SPAN = Regex("`([^`\n]+)`")
    }
}
