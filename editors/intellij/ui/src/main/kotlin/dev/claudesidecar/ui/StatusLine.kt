package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.transcript.ChatStatus
import javax.swing.JLabel
import javax.swing.Timer

/** One line over the prompt: what the chat does now (working, waiting for you, retrying, ended). */
class StatusLine : JLabel(" ") {
    private var runningSince = 0L
    private var status = ChatStatus()
    private var promptsWaiting = 0
    private val ticker = Timer(1000) { render() }

    init {
        border = padding(0, 14, 4, 14)
        restyle()
    }

    /** Draws the line again in the look and feel now in use. */
    fun restyle() {
        font = Theme.smallFont
        render()
    }

    /** Shows [status]; [promptsWaiting]: prompts sent while the chat starts, sent once it has. */
    fun show(status: ChatStatus, promptsWaiting: Int = 0) {
        val running = status.state == ChannelState.RUNNING || status.state == ChannelState.AWAITING_PERMISSION
        if (running && runningSince == 0L) runningSince = System.currentTimeMillis()
        if (!running) runningSince = 0L
        if (running) ticker.start() else ticker.stop()
        this.status = status
        this.promptsWaiting = promptsWaiting
        render()
    }

    private fun render() {
        val elapsed = if (runningSince > 0) " ${(System.currentTimeMillis() - runningSince) / 1000} s" else ""
        val retry = status.retry
        val (message, colour) = when {
            status.openFailure != null -> NOT_OPEN to Theme.error
            status.reconnecting -> "Reconnecting to the shared daemon…  ·  the chat goes on there" to Theme.warning
            retry != null -> {
                val attempt = "attempt ${retry.attempt} of ${retry.maxRetries}"
                "Retrying in ${retry.retryInMs / 1000} s ($attempt): ${retry.error}" to Theme.warning
            }
            status.state == ChannelState.RUNNING -> "Claude is working…$elapsed  ·  Esc to stop" to Theme.muted
            status.state == ChannelState.AWAITING_PERMISSION -> "Waiting for your answer" to Theme.warning
            status.state == ChannelState.STARTING && promptsWaiting > 0 ->
                "Starting…  ·  ${if (promptsWaiting == 1) "your message is" else "$promptsWaiting messages are"} sent once it has" to
                    Theme.muted
            status.state == ChannelState.STARTING -> "Starting…" to Theme.muted
            status.state == ChannelState.EXITED -> {
                val exit = status.exit
                val stderr = exit?.stderrTail?.lines()?.lastOrNull { it.isNotBlank() }
                val why = listOfNotNull(exit?.code?.let { "code $it" }, exit?.signal?.let { "signal $it" }, stderr)
                val detail = if (why.isEmpty()) "" else " (${why.joinToString(", ")})"
                "The session ended$detail: send a message to start again" to Theme.error
            }
            else -> "Enter to send, Shift+Enter for a new line" to Theme.muted
        }
        text = message
        foreground = colour
        toolTipText = message.takeIf { it.isNotBlank() }
    }

    companion object {
        /** What the line says once the chat could not open (the reason is in the conversation). */
        const val NOT_OPEN = "The chat did not open: this tab sends nothing"
    }
}
