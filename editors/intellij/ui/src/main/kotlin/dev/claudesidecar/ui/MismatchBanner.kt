package dev.claudesidecar.ui

import dev.claudesidecar.core.ProtocolMismatch
import java.awt.Toolkit
import java.awt.datatransfer.StringSelection
import javax.swing.BorderFactory
import javax.swing.JButton

/**
 * Over the chats, when the daemon and this client do not fit ([ProtocolMismatch]): the one
 * error saying which side to upgrade and how, with a button that copies the command when the
 * daemon is the one to upgrade (for the client the fix is what to install). Hidden until
 * [showMismatch]; [clear] once a daemon answered.
 */
class MismatchBanner : Column(6) {
    private val message = wrappingText("", colour = Theme.error)
    private val copy: JButton = button("Copy Command") { copyCommand() }

    /** What is shown now; null when hidden. */
    var shown: ProtocolMismatch? = null
        private set

    init {
        isVisible = false
        add(message)
        add(row(copy))
        restyle()
    }

    fun restyle() {
        isOpaque = false
        border = BorderFactory.createCompoundBorder(padding(4, 8, 4, 8), BorderFactory.createMatteBorder(0, 3, 0, 0, Theme.error))
        message.font = Theme.font
        message.foreground = Theme.error
        message.border = padding(0, 8, 0, 0)
    }

    fun showMismatch(mismatch: ProtocolMismatch) {
        shown = mismatch
        message.text = mismatch.message
        copy.text = "Copy Command"
        copy.isVisible = mismatch.command != null
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
