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

/** Where the user writes: Enter sends, Shift+Enter starts a new line; Stop interrupts a running turn. */
class PromptArea(
    private val onSend: (String) -> Unit,
    onStop: () -> Unit,
) : JPanel(BorderLayout(8, 0)) {
    val text = JTextArea(3, 20).apply {
        lineWrap = true
        wrapStyleWord = true
        border = padding(6, 8, 6, 8)
        putClientProperty("JTextArea.placeholderText", "Ask Claude… (Enter to send, Shift+Enter for a new line)")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, 0), "send")
        inputMap.put(KeyStroke.getKeyStroke(KeyEvent.VK_ENTER, KeyEvent.SHIFT_DOWN_MASK), "insert-break")
        actionMap.put(
            "send",
            object : AbstractAction() {
                override fun actionPerformed(e: java.awt.event.ActionEvent?) = send()
            },
        )
    }
    val sendButton: JButton = primaryButton("Send") { send() }
    val stopButton: JButton = button("Stop") { onStop() }.apply {
        isVisible = false
        toolTipText = "Interrupt Claude"
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
        stopButton.isVisible = running
    }

    private fun send() {
        val prompt = text.text.trim()
        if (prompt.isEmpty() || !sendButton.isEnabled) return
        text.text = ""
        onSend(prompt)
    }
}
