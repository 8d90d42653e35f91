package dev.claudesidecar.core.transcript

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.protocol.MessageNotification
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.ProtocolJson
import kotlin.io.path.readLines

// The notification streams the VS Code client recorded from the real daemon, CLI and stand-in
// model (tests/data/streams), read into the typed notifications core delivers.

object Fixtures {
    private val dir = Harness.repoRoot.resolve("tests/data/streams")

    /** The recorded notifications of one chat, in order, as [ChatEvent.Notification]s. */
    fun notifications(name: String): List<ChatEvent.Notification> =
        dir.resolve("$name.jsonl").readLines().filter { it.isNotBlank() }.map { line ->
            val json = JsonParser.parseString(line).asJsonObject
            val method = json["method"].asString
            val type = Notifications.byName(method) ?: error("unknown notification $method")
            ChatEvent.Notification(method, ProtocolJson.gson.fromJson(json["params"], type.paramsType))
        }

    /**
     * The events a chat delivers: [ChatEvent.Bound] first, then the notifications, with each
     * prompt's [ChatEvent.UserMessage] where `claude/sendMessage` returns (before the CLI queues it).
     */
    fun chatEvents(name: String): List<ChatEvent> {
        val notes = notifications(name)
        val first = notes.first().params
        val channelId = first.javaClass.getMethod("getChannelId").invoke(first) as String
        val events = mutableListOf<ChatEvent>(ChatEvent.Bound(channelId, "session", "/home/dev/project"))
        events += notes
        for (replay in notes.mapNotNull { cliMessage(it) }.filter { it.str("type") == "user" && it.isTrue("isReplay") }) {
            val messageId = replay.str("uuid")
            val text = replay.obj("message").objects("content").filter { it.str("type") == "text" }.joinToString("\n") { it.str("text") }
            val at = events.indexOfFirst { event ->
                val m = cliMessage(event)
                m != null && ((m.str("type") == "command_lifecycle" && m.str("command_uuid") == messageId) || m === replay)
            }
            events.add(at, ChatEvent.UserMessage(messageId, text, 0))
        }
        return events
    }

    fun cliMessage(event: ChatEvent): JsonObject? = ((event as? ChatEvent.Notification)?.params as? MessageNotification)?.message?.asObj()

    /** The final texts of the `assistant` messages' blocks of [type] (`text` or `thinking`), in order. */
    fun finalTexts(name: String, type: String): List<String> =
        notifications(name).mapNotNull { cliMessage(it) }.filter { it.str("type") == "assistant" }
            .flatMap { m -> m.obj("message").objects("content").filter { it.str("type") == type }.map { it.str(type) } }
}
