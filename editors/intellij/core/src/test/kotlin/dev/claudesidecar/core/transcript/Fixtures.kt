package dev.claudesidecar.core.transcript

import com.google.gson.JsonElement
import com.google.gson.JsonParser
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.ProtocolJson
import kotlin.io.path.listDirectoryEntries
import kotlin.io.path.name
import kotlin.io.path.readLines
import kotlin.io.path.readText

// The notifications a client receives for each stream recorded from the real daemon, CLI and
// stand-in model (tests/data/streams/<name>.client.jsonl, shared by every client), read into
// the typed notifications core delivers, and the entries they must give (<name>.entries.json).

object Fixtures {
    private val dir = Harness.repoRoot.resolve("tests/data/streams")

    /** The names of the recorded streams. */
    val names: List<String> by lazy {
        dir.listDirectoryEntries("*.client.jsonl").map { it.name.removeSuffix(".client.jsonl") }.sorted()
    }

    /** The notifications a client receives for the stream [name], in order. */
    fun notifications(name: String): List<ChatEvent.Notification> =
        dir.resolve("$name.client.jsonl").readLines().filter { it.isNotBlank() }.map { line -> notification(JsonParser.parseString(line)) }

    /** One `{method, params}` line as core delivers it. */
    fun notification(json: JsonElement): ChatEvent.Notification {
        val method = json.asJsonObject["method"].asString
        val type = Notifications.byName(method) ?: error("unknown notification $method")
        return ChatEvent.Notification(method, ProtocolJson.gson.fromJson(json.asJsonObject["params"], type.paramsType))
    }

    /** The entries a store must end with for the stream [name], as JSON. */
    fun expectedEntries(name: String): JsonElement = JsonParser.parseString(dir.resolve("$name.entries.json").readText())

    /** A stream played into a new transcript. */
    fun play(name: String): Transcript = Transcript().apply { notifications(name).forEach { apply(it) } }
}
