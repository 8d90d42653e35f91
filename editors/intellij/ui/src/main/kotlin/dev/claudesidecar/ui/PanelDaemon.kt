package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.WarmPoolOptions

/** What every host of the chat panel (the standalone app, the IDE plugin) asks of the daemon at `initialize`. */
object PanelDaemon {
    /**
     * Text and thinking deltas merged by the daemon into one notification per 16 ms (a frame):
     * the panel draws no faster, and fewer events leave the EDT free for typing.
     */
    const val COALESCE_DELTAS_MS = 16

    /** The `initializationOptions` of a panel host named [clientName]: deltas coalesced, and [cliPath] and [warmPool] when given. */
    fun initializationOptions(clientName: String, cliPath: String? = null, warmPool: WarmPoolOptions? = null) =
        InitializationOptions(clientName = clientName, cliPath = cliPath, coalesceDeltasMs = COALESCE_DELTAS_MS, warmPool = warmPool)
}
