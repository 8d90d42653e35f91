package dev.claudesidecar.ui

import java.awt.BorderLayout
import java.awt.event.KeyEvent
import javax.swing.AbstractAction
import javax.swing.BorderFactory
import javax.swing.JButton
import javax.swing.JPanel
import javax.swing.JScrollPane
import javax.swing.JTextArea
import javax.swing.KeyStroke

/**
 * Where the user writes: Enter sends, Shift+Enter starts a new line, Escape (or Stop) stops a
 * running turn, as in the VS Code client. Tab and Shift+Tab move the focus, not insert a tab:
 * [onTab] decides where Tab goes (the permission card's buttons when one waits).
 */
class PromptArea(
    private val onSend: (String) -> Unit,
    private val onStop: () -> Unit,
    private val onTab: () -> Unit = {},
) : JPanel(BorderLayout(8, 0)) {
    val text = JTextArea(3, 20).apply {
        lineWrap = true
        wrapStyleWord = true
        border = padding(6, 8, 6, 8)
        putClientProperty("JTextArea.placeholderText", "Ask Claude… (Enter to send, Shift+Enter for a new line)")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, 0), "send")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, KeyEvent.SHIFT_DOWN_MASK), "insert-break")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ESCAPE, 0), "stop")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_TAB, 0), "focus-next")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_TAB, KeyEvent.SHIFT_DOWN_MASK), "focus-previous")
        action("send") { send() }
        action("stop") { if (stopButton.isVisible) stop() }
        action("focus-next") { onTab() }
        action("focus-previous") { transferFocusBackward() }
    }
    val sendButton: JButton = primaryButton("Send") { send() }
    val stopButton: JButton = button("Stop") { stop() }.apply {
        isVisible = false
        toolTipText = "Stop Claude (Esc)"
    }

    private val scroll = JScrollPane(text)

    /** Takes the colours and fonts of the look and feel now in use. */
    fun restyle() {
        text.font = Theme.font
        scroll.border = BorderFactory.createLineBorder(Theme.border)
        stylePrimary(sendButton)
    }

    init {
        isOpaque = false
        border = padding(0, 12, 12, 12)
        restyle()
        add(scroll, BorderLayout.CENTER)
        add(
            JPanel(BorderLayout()).apply {
                isOpaque = false
                add(row(stopButton, sendButton, gap = 6), BorderLayout.SOUTH)
            },
            BorderLayout.EAST,
        )
    }

    /** Whether a turn runs: Stop shows instead of nothing (sending stays possible: the prompt queues). */
    fun running(running: Boolean) {
        // Stop hides with the focus on it (clicked, or reached with Tab): the typing goes to the prompt.
        val hadFocus = stopButton.isFocusOwner
        stopButton.isVisible = running
        if (hadFocus && !running) text.requestFocusInWindow()
    }

    /** Interrupts the turn; the focus goes back to the prompt, so that the next message can be typed at once. */
    private fun stop() {
        onStop()
        text.requestFocusInWindow()
    }

    private fun JTextArea.action(name: String, block: () -> Unit) {
        actionMap.put(
            name,
            object : AbstractAction() {
                override fun actionPerformed(e: java.awt.event.ActionEvent?) = block()
            },
        )
    }

    private fun send() {
        val prompt = text.text.trim()
        if (prompt.isEmpty() || !sendButton.isEnabled) return
        text.text = ""
        onSend(prompt)
    }
}
