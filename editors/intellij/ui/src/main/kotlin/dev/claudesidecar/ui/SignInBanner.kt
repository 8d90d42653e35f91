package dev.claudesidecar.ui

import dev.claudesidecar.core.SignInNeeded
import java.awt.Toolkit
import java.awt.datatransfer.StringSelection
import javax.swing.BorderFactory
import javax.swing.JButton

/**
 * Over the prompt, while the chat's CLI cannot authenticate: the daemon's error with the fix,
 * and a button that copies the command that signs the user in (the CLI's sign-in is
 * interactive: it belongs in a terminal). Hidden until [showSignIn]; [clear] once a turn gets through.
 */
class SignInBanner : Column(6) {
    private val message = wrappingText("", colour = Theme.error)
    private val copy: JButton = button("Copy Command") { copyCommand() }

    /** What is shown now; null when hidden. */
    var shown: SignInNeeded? = null
        private set

    init {
        isVisible = false
        add(message)
        add(row(copy))
        restyle()
    }

    fun restyle() {
        isOpaque = false
        border = BorderFactory.createCompoundBorder(padding(4, 14, 4, 14), BorderFactory.createMatteBorder(0, 3, 0, 0, Theme.error))
        message.font = Theme.font
        message.foreground = Theme.error
        message.border = padding(0, 8, 0, 0)
    }

    fun showSignIn(signIn: SignInNeeded) {
        shown = signIn
        message.text = signIn.text
        copy.isVisible = signIn.command != null
        isVisible = true
    }

    fun clear() {
        shown = null
        isVisible = false
    }

    private fun copyCommand() {
        val command = shown?.command ?: return
        Toolkit.getDefaultToolkit().systemClipboard.setContents(StringSelection(command), null)
        copy.text = "Copied: run it in a terminal"
    }
}
