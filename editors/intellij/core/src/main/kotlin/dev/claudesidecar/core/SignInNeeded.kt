package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.TurnEndedNotification
import dev.claudesidecar.core.protocol.TurnErrorKind

/**
 * A turn the CLI could not authenticate (no credentials, or a key the API refused): the
 * daemon's `authRequired` error of `claude/turnEnded`, as a UI shows it.
 *
 * @property message what is wrong and both ways to fix it (the daemon's words)
 * @property command the command that signs this user in, run in a terminal (`claude-sidecar login`)
 * @property refused true when the API refused a key, false when the CLI had none
 */
data class SignInNeeded(
    val message: String,
    val command: String?,
    val refused: Boolean,
) {
    /** The command that explains the API-key route on this machine. */
    val apiKeyCommand: String? get() = command?.let { "$it --api-key" }

    /** For a message box: [message], then the command to run on a line of its own. */
    val text: String get() = message + (command?.let { "\n\nSign in from a terminal: $it" } ?: "")

    companion object {
        /** The sign-in a chat event asks for: a `claude/turnEnded` whose error is `authRequired`; else null. */
        fun of(event: ChatEvent): SignInNeeded? {
            if (event !is ChatEvent.Notification || event.method != Notifications.TURN_ENDED.name) return null
            val error = (event.params as? TurnEndedNotification)?.error ?: return null
            if (error.kind != TurnErrorKind.AUTH_REQUIRED) return null
            fun field(name: String) = error.data?.get(name)?.takeIf { it.isJsonPrimitive }?.asString
            return SignInNeeded(error.message, field("how"), field("reason") == "refused")
        }
    }
}
