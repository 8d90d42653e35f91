package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.ExitInfo
import dev.claudesidecar.core.protocol.RetryInfo

/** The chat's state besides its entries, from `claude/status` (null [state]: no status yet). */
data class ChatStatus(
    val state: ChannelState? = null,
    val model: String? = null,
    val permissionMode: String? = null,
    /** Set while the CLI waits to retry a failed model request. */
    val retry: RetryInfo? = null,
    val exit: ExitInfo? = null,
    /** Shared daemon: the connection dropped and is being made again. */
    val reconnecting: Boolean = false,
    /** Why the chat's channel could not open ([ChatState.openFailed]): it takes no messages. Null while it may. */
    val openFailure: String? = null,
)
