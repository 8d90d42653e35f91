package dev.claudesidecar.ui

import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.swing.Swing
import java.awt.Dimension
import javax.swing.JButton
import kotlin.coroutines.CoroutineContext

/**
 * The chats running in the shared daemon (`claude/listChannels`), whoever started them, each
 * with its folder, state, model and the editors attached to it; double-click, Enter or
 * [attachButton] opens the selected one through [onAttach]. With a private daemon it says
 * that attaching needs the shared one. [uiContext]: the EDT dispatcher of its requests.
 */
class RunningChatList(
    private val client: SidecarClient,
    uiContext: CoroutineContext = Dispatchers.Swing,
    private val onAttach: (ChannelSummary) -> Unit,
) : ChoiceList<ChannelSummary>("Chats running in the shared daemon", uiContext, onAttach) {
    /** Attaches the selected chat. */
    val attachButton: JButton = primaryButton("Attach") { list.selectedValue?.let(onAttach) }.apply { isEnabled = false }

    override val emptyText = "No chat is running in the shared daemon."

    init {
        list.addListSelectionListener { attachButton.isEnabled = list.selectedValue != null }
        scrollPane.preferredSize = Dimension(560, 220)
        south.add(row(attachButton))
    }

    override suspend fun fetch(): List<ChannelSummary> = client.runningChats()

    override fun failedText(e: SidecarException) = e.message ?: "Cannot list the running chats."

    override fun title(item: ChannelSummary) = RunningChats.title(item)

    override fun facts(item: ChannelSummary) = RunningChats.facts(item, client.chatOf(item.channelId) != null)

    override fun loaded(items: List<ChannelSummary>) {
        if (items.isNotEmpty()) list.selectedIndex = 0
    }
}

/** How a running chat of the shared daemon is named in lists (this panel, the IDE's popup). */
object RunningChats {
    /** Its folder (home as `~`) and state: "~/src/shop · running". */
    fun title(channel: ChannelSummary): String {
        val home = System.getProperty("user.home")
        val folder = if (home != null && channel.cwd.startsWith("$home/")) "~" + channel.cwd.removePrefix(home) else channel.cwd
        val state = if (channel.state == ChannelState.AWAITING_PERMISSION) "waiting for permission" else channel.state.wire
        return "$folder · $state"
    }

    /** Its model, the editors attached and what waits: "ch-2 · sonnet · 2 editors: nvim, vscode · 1 waiting for an answer · open here". */
    fun facts(channel: ChannelSummary, openHere: Boolean): String = buildList {
        add(channel.channelId)
        channel.model?.let(::add)
        val clients = channel.clients.orEmpty().map { it.clientName ?: it.connectionId }
        add(
            when (clients.size) {
                0 -> "no editor attached"
                1 -> "1 editor: ${clients.single()}"
                else -> "${clients.size} editors: ${clients.joinToString(", ")}"
            },
        )
        channel.pendingPermissions?.takeIf { it.isNotEmpty() }?.let { add("${it.size} waiting for an answer") }
        if (openHere) add("open here")
    }.joinToString(" · ")
}
