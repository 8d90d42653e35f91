package dev.claudesidecar.ui

import dev.claudesidecar.core.ChannelRoster
import dev.claudesidecar.core.protocol.ChannelSummary
import javax.swing.BorderFactory
import javax.swing.JComponent
import javax.swing.JTextArea

/**
 * Notices of chats that started waiting for a permission where the user does not see them
 * (no tab shows the chat, the chat list is closed): "Claude in ⎇ worktree-search waits for
 * your answer: Bash", with Open and Dismiss. One notice per wait: a chat told of is not told
 * again until it stopped waiting and waits anew. A notice goes when its chat no longer waits,
 * ends, is shown, or is dismissed. Fed the daemon's chats by [update] on the EDT.
 */
class WaitNotices(private val onOpen: (ChannelSummary) -> Unit) : Column(4) {
    /** The chats waiting at the last [update]: a chat in it is in a wait told of (or shown) already. */
    private val waiting = HashSet<String>()
    private val shownNotices = LinkedHashMap<String, Notice>()

    /** One notice: its panel and its text (coloured anew by [restyle]). */
    private class Notice(
        val panel: JComponent,
        val text: JTextArea,
    )

    /** How many notices were raised so far (each wait of a chat the user did not see: one). */
    var raised = 0
        private set

    /** The notices' texts, oldest first. */
    val texts: List<String> get() = shownNotices.values.map { it.text.text }

    init {
        isVisible = false
        isOpaque = false
        border = padding(0, 8, 4, 8)
    }

    /**
     * The daemon's chats now ([ChannelRoster]'s list); [seen] says whether the user sees a chat
     * (its tab, or the open chat list). Raises a notice for each chat that started waiting
     * unseen, and takes down those whose wait is over or that are seen now.
     */
    fun update(channels: List<ChannelSummary>, seen: (ChannelSummary) -> Boolean) {
        val now = channels.filter(ChannelRoster::waiting)
        for (channel in now) {
            if (channel.channelId !in waiting && !seen(channel)) raise(channel)
        }
        waiting.clear()
        now.mapTo(waiting) { it.channelId }
        val byId = channels.associateBy { it.channelId }
        for (id in shownNotices.keys.toList()) {
            val channel = byId[id]
            if (channel == null || !ChannelRoster.waiting(channel) || seen(channel)) takeDown(id)
        }
    }

    private fun raise(channel: ChannelSummary) {
        raised += 1
        takeDown(channel.channelId)
        val text = wrappingText(text(channel))
        val notice = Column(2).apply {
            isOpaque = false
            add(text)
            add(
                row(
                    button("Open the chat") {
                        takeDown(channel.channelId)
                        onOpen(channel)
                    },
                    button("Dismiss") { takeDown(channel.channelId) },
                ),
            )
        }
        shownNotices[channel.channelId] = Notice(notice, text).also(::style)
        add(notice)
        relayout()
    }

    /** The notices in the colours of the theme now (after a switch between light and dark). */
    fun restyle() = shownNotices.values.forEach(::style)

    private fun style(notice: Notice) {
        notice.panel.border = BorderFactory.createCompoundBorder(
            BorderFactory.createMatteBorder(0, 3, 0, 0, Theme.warning),
            padding(2, 8, 2, 0),
        )
        notice.text.font = Theme.font
        notice.text.foreground = Theme.foreground
    }

    private fun takeDown(id: String) {
        val notice = shownNotices.remove(id) ?: return
        remove(notice.panel)
        relayout()
    }

    private fun relayout() {
        isVisible = shownNotices.isNotEmpty()
        revalidate()
        repaint()
    }

    companion object {
        /** "Claude in shop waits for your answer: Bash" (a worktree chat: its branch, "⎇ worktree-x"). */
        fun text(channel: ChannelSummary): String {
            val place =
                channel.worktree?.let { "⎇ ${it.branch}" } ?: channel.cwd.trimEnd('/').substringAfterLast('/').ifEmpty { channel.cwd }
            val request = channel.pendingPermissions.orEmpty().firstOrNull()
            val what = request?.let { ": ${it.displayName ?: it.toolName}" }.orEmpty()
            return "Claude in $place waits for your answer$what"
        }
    }
}
