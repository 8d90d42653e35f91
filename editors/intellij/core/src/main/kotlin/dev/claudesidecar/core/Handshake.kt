package dev.claudesidecar.core

import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.ClientName
import dev.claudesidecar.core.protocol.ClientProtocol
import dev.claudesidecar.core.protocol.DAEMON_VERSION
import dev.claudesidecar.core.protocol.ErrorName
import dev.claudesidecar.core.protocol.InitializeResult
import dev.claudesidecar.core.protocol.PROTOCOL_VERSION

/**
 * The version handshake of `initialize` (docs/protocol.md, "Versions: the handshake"): the
 * protocol this client states, what the daemon answers about the connection (its optional
 * features, the options it ignored), and the one error of a daemon the client does not fit.
 */
object Handshake {
    /** The oldest daemon protocol this client works with: the one it was built against. */
    const val OLDEST_DAEMON_PROTOCOL: Int = PROTOCOL_VERSION

    /** The command that upgrades the daemon, for a daemon from before the handshake (which cannot say it). */
    const val UPGRADE_DAEMON = "uv tool upgrade claude-sidecar"
    private const val UPGRADE_DAEMON_PIPX = "pipx upgrade claude-sidecar"

    /**
     * `initializationOptions.protocol` of the client called [client] (`intellij`, `swing-app`):
     * the protocol it speaks and the oldest daemon protocol it works with. The client ships in
     * step with the daemon (release/versions.py): the version of the schema it was generated
     * from is its own.
     */
    fun offer(client: String, version: String = DAEMON_VERSION): ClientProtocol =
        ClientProtocol(version = PROTOCOL_VERSION, client = ClientName(client, version), oldest = OLDEST_DAEMON_PROTOCOL)

    /** The optional features the daemon serves this connection (`attach`, `fork`, …). */
    fun features(result: InitializeResult): Set<String> = result.capabilities.experimental.claudeSidecar.features.toSet()

    /** The log line naming the `initializationOptions` the daemon ignored (keys it does not know); null when none. */
    fun ignoredOptionsWarning(result: InitializeResult): String? {
        val ignored = result.capabilities.experimental.claudeSidecar.ignoredOptions
        if (ignored.isEmpty()) return null
        return "claude-sidecar ${result.serverInfo.version} ignored initializationOptions it does not know: " +
            "${ignored.joinToString(", ")} (a daemon older than this client; upgrade it for them to apply)"
    }

    /** What a request of [feature] says on a daemon that does not serve it (a hidden action run all the same). */
    fun featureMissing(feature: String, what: String, result: InitializeResult): SidecarException = SidecarException(
        "$what needs a claude-sidecar daemon that serves \"$feature\"; this one (${result.serverInfo.version}) does not " +
            "(features: ${features(result).joinToString(", ").ifEmpty { "none" }})",
        "daemon",
    )

    /**
     * The error `initialize` failed with, as the client shows it: a [ProtocolMismatch] carried
     * by the exception ([SidecarException.mismatch]) when the daemon answered `protocolMismatch`,
     * or when a daemon from before the handshake refused `initializationOptions.protocol`
     * (which means the same: upgrade the daemon); else [e] as it is.
     */
    fun initializeError(e: SidecarException): SidecarException {
        val mismatch = mismatchOf(e) ?: return e
        return SidecarException(mismatch.message, "initialize", e.code, ErrorName.PROTOCOL_MISMATCH.wire, e.data, e, mismatch)
    }

    private fun mismatchOf(e: SidecarException): ProtocolMismatch? {
        val data = e.data as? JsonObject
        fun field(name: String) = data?.get(name)?.takeIf { it.isJsonPrimitive }?.asString
        if (e.error == ErrorName.PROTOCOL_MISMATCH) {
            val upgrade = if (field("upgrade") == "client") ProtocolMismatch.Upgrade.CLIENT else ProtocolMismatch.Upgrade.DAEMON
            val fix = field("fix") ?: if (upgrade == ProtocolMismatch.Upgrade.DAEMON) UPGRADE_DAEMON else ""
            return ProtocolMismatch(upgrade, e.message.orEmpty(), fix, field("daemonVersion"))
        }
        if (e.error == ErrorName.INVALID_PARAMS && e.field == "initializationOptions.protocol") {
            return ProtocolMismatch(
                ProtocolMismatch.Upgrade.DAEMON,
                "This claude-sidecar daemon is older than this client needs (it predates protocol $OLDEST_DAEMON_PROTOCOL): " +
                    "upgrade claude-sidecar: $UPGRADE_DAEMON (or $UPGRADE_DAEMON_PIPX), then start the daemon again.",
                UPGRADE_DAEMON,
                null,
            )
        }
        return null
    }
}

/**
 * The daemon and this client do not fit: which side to [upgrade], and how. A UI shows
 * [message] (the daemon's words; they name the fix) and, for the daemon, offers to copy [fix].
 *
 * @property fix for the daemon the command that upgrades it; for the client what to do (the
 *   daemon's words: e.g. update the plugin in Settings > Plugins)
 * @property daemonVersion the daemon's version; null for a daemon from before the handshake
 */
data class ProtocolMismatch(
    val upgrade: Upgrade,
    val message: String,
    val fix: String,
    val daemonVersion: String?,
) {
    /** The side to upgrade. */
    enum class Upgrade { CLIENT, DAEMON }

    /** The command a UI offers to copy: the daemon's upgrade; null when the client is the older side. */
    val command: String? get() = fix.takeIf { upgrade == Upgrade.DAEMON && it.isNotEmpty() }
}
