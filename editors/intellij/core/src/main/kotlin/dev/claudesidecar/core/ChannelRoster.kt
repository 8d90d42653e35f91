package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.ChannelsChangedNotification
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow

/**
 * Every chat of the daemon as `claude/watchChannels` answered and `claude/channelsChanged`
 * said since, in the overview's order ([ordered]). Used on one thread (the client's event
 * thread): [expect] when the watch request goes out, [answered] with its answer; notifications
 * that come meanwhile are applied after the answer (they are newer than it).
 */
class ChannelRoster {
    private val channels = LinkedHashMap<String, ChannelSummary>()
    private var pending: MutableList<ChannelsChangedNotification>? = null
    private val flow = MutableStateFlow<List<ChannelSummary>>(emptyList())

    /** The chats, waiting for the user first ([ordered]). */
    val current: StateFlow<List<ChannelSummary>> = flow.asStateFlow()

    /** A watch request went out: notifications wait for its answer. */
    fun expect() {
        pending = mutableListOf()
    }

    /** The watch request's answer, every chat as it is now; then what came meanwhile. */
    fun answered(list: List<ChannelSummary>) {
        channels.clear()
        for (channel in list) channels[channel.channelId] = channel
        val meanwhile = pending.orEmpty()
        pending = null
        meanwhile.forEach(::apply)
        publish()
    }

    /** The watch request failed: notifications apply as they come. */
    fun abandoned() {
        pending = null
    }

    /** A `claude/channelsChanged`: chats that changed or started replace what was known of them; those closed go. */
    fun changed(notification: ChannelsChangedNotification) {
        pending?.let { return it.plusAssign(notification) }
        apply(notification)
        publish()
    }

    /** No daemon any more (it stopped): no chats. */
    fun clear() {
        channels.clear()
        pending = null
        publish()
    }

    private fun apply(notification: ChannelsChangedNotification) {
        for (channel in notification.channels) channels[channel.channelId] = channel
        for (id in notification.closed) channels.remove(id)
    }

    private fun publish() {
        flow.value = ordered(channels.values)
    }

    companion object {
        /** A chat the user must answer: it waits for a permission. */
        fun waiting(channel: ChannelSummary): Boolean =
            channel.state == ChannelState.AWAITING_PERMISSION || !channel.pendingPermissions.isNullOrEmpty()

        /** A chat whose CLI ended with an error or a signal. */
        fun failed(channel: ChannelSummary): Boolean =
            channel.state == ChannelState.EXITED && channel.exit.let { it != null && ((it.code ?: 0) != 0 || it.signal != null) }

        /**
         * The overview's order: waiting for the user, then running (or starting), idle, ended; in each
         * group the oldest chat first (by the number in its id), so a chat does not jump around as it works.
         */
        fun ordered(channels: Collection<ChannelSummary>): List<ChannelSummary> = channels.sortedWith(
            compareBy<ChannelSummary>({ rank(it) }, { number(it) }, { it.channelId }),
        )

        private fun rank(channel: ChannelSummary): Int = when {
            waiting(channel) -> 0
            channel.state == ChannelState.RUNNING || channel.state == ChannelState.STARTING -> 1
            channel.state == ChannelState.IDLE -> 2
            else -> 3
        }

        private fun number(channel: ChannelSummary): Long =
            Regex("""(\d+)$""").find(channel.channelId)?.value?.toLongOrNull() ?: Long.MAX_VALUE
    }
}
