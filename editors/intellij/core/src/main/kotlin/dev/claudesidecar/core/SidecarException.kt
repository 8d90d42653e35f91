package dev.claudesidecar.core

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.ErrorName
import org.eclipse.lsp4j.jsonrpc.ResponseErrorException

/**
 * The one error type of the client: an error the daemon answered with (with its JSON-RPC
 * [code] and `data.name` as [errorName]), a daemon that is not running, or a bad setting.
 *
 * @property where what failed: a method (`claude/sendMessage`), a setting (`daemonCommand`),
 *   `daemon` for a daemon that is not running, or `chat` for a chat that cannot act
 * @property code the JSON-RPC error code, when the daemon answered with an error
 * @property errorName the daemon's `data.name` (`invalidParams`, `channelNotFound`, ...)
 * @property data the error's whole `data`
 * @property mismatch set when `initialize` failed because the daemon and this client do not
 *   fit: which side to upgrade and how ([Handshake.initializeError])
 */
class SidecarException(
    message: String,
    val where: String,
    val code: Int? = null,
    val errorName: String? = null,
    val data: JsonElement? = null,
    cause: Throwable? = null,
    val mismatch: ProtocolMismatch? = null,
) : RuntimeException(message, cause) {
    /** [errorName] as one of the protocol's known errors. */
    val error: ErrorName? get() = ErrorName.of(errorName)

    /** `data.field` of an `invalidParams` error: the parameter that was wrong. */
    val field: String? get() = (data as? JsonObject)?.get("field")?.takeIf { it.isJsonPrimitive }?.asString

    override fun toString(): String = "SidecarException(where=$where, code=$code, errorName=$errorName): $message"

    companion object {
        /** A SidecarException for anything a request to the daemon failed with. */
        fun from(e: Throwable, where: String): SidecarException = when (e) {
            is SidecarException -> e
            is ResponseErrorException -> {
                val error = e.responseError
                val data = when (val d = error.data) {
                    is JsonElement -> d
                    null -> null
                    else -> com.google.gson.JsonPrimitive(d.toString())
                }
                val name = (data as? JsonObject)?.get("name")?.takeIf { it.isJsonPrimitive }?.asString
                SidecarException(error.message, where, error.code, name, data, e)
            }
            else -> SidecarException("$where: ${e.message ?: e.javaClass.simpleName}", where, cause = e)
        }
    }
}
