package dev.claudesidecar.core

import com.google.gson.JsonParser
import dev.claudesidecar.core.protocol.AskState
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.FileUpdatedNotification
import dev.claudesidecar.core.protocol.ImageBlock
import dev.claudesidecar.core.protocol.ImageMediaType
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.PermissionMode
import dev.claudesidecar.core.protocol.ProtocolJson
import dev.claudesidecar.core.protocol.SendMessageParams
import dev.claudesidecar.core.protocol.StatusNotification
import dev.claudesidecar.core.protocol.TextBlock
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.ToolStatus
import dev.claudesidecar.core.protocol.orUnknown
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.io.path.readText

@DisplayName("the protocol types")
class ProtocolTest {
    private val gson = ProtocolJson.gson
    private fun json(value: Any) = JsonParser.parseString(gson.toJson(value))

    @Test fun `Protocol_kt is what gen_protocol_py makes of the schema`() {
        val intellij = Harness.repoRoot.resolve("editors/intellij")
        val process = ProcessBuilder("python3", "scripts/gen_protocol.py", "--check")
            .directory(intellij.toFile()).redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        check(process.waitFor(60, TimeUnit.SECONDS))
        assertEquals(0, process.exitValue(), output)
    }

    @Test fun `params go out with camelCase names, enum wire values and no absent fields`() {
        val params = NewChannelParams(cwd = "/w", permissionMode = PermissionMode.ACCEPT_EDITS, maxTurns = 3)
        assertEquals(JsonParser.parseString("""{"cwd":"/w","maxTurns":3,"permissionMode":"acceptEdits"}"""), json(params))
    }

    @Test fun `a union of content blocks is written by member and read back by its type`() {
        val params = SendMessageParams(
            channelId = "ch-1",
            content = listOf(ImageBlock(data = "AAAA", mediaType = ImageMediaType.IMAGE_PNG), TextBlock("hi")),
        )
        val text = gson.toJson(params)
        assertEquals(
            JsonParser.parseString(
                """{"channelId":"ch-1","content":[{"data":"AAAA","mediaType":"image/png","type":"image"},{"text":"hi","type":"text"}]}""",
            ),
            JsonParser.parseString(text),
        )
        assertEquals(params, gson.fromJson(text, SendMessageParams::class.java))
    }

    @Test fun `required nullable fields are written as null and read back, optional ones stay absent`() {
        val wire = """{"channelId":"ch-1","seq":4,"path":"/w/a.py","toolName":"Write","toolUseId":null,"messageId":null,
            "diff":null,"oldContent":null,"newContent":"x","notice":null,"parentToolUseId":null}"""
        val update = gson.fromJson(wire, FileUpdatedNotification::class.java)
        assertNull(update.toolUseId)
        assertEquals("x", update.newContent)
        assertEquals(JsonParser.parseString(wire), json(update))
        val status = gson.fromJson(
            """{"channelId":"ch-1","seq":1,"sessionId":"s","state":"awaitingPermission"}""",
            StatusNotification::class.java,
        )
        assertEquals(ChannelState.AWAITING_PERMISSION, status.state)
        assertNull(status.exit)
        assertEquals(JsonParser.parseString("""{"channelId":"ch-1","seq":1,"sessionId":"s","state":"awaitingPermission"}"""), json(status))
    }

    @Test fun `the method table knows every request with its types`() {
        assertEquals("claude/newChannel", Methods.NEW_CHANNEL.name)
        // Every method of the schema the generator read (the module's folder is the working directory).
        val schema = JsonParser.parseString(Path.of("../../../docs/protocol.schema.json").readText()).asJsonObject
        assertEquals(schema.getAsJsonObject("x-methods").keySet(), Methods.ALL.map { it.name }.toSet())
        assertEquals(Methods.ATTACH, Methods.byName("claude/attach"))
        assertEquals(Methods.GET_TRANSCRIPT, Methods.byName("claude/getTranscript"))
        assertEquals(Methods.REWIND_FILES, Methods.byName("claude/rewindFiles"))
    }

    @Test fun `an entry is read back as the member its kind names`() {
        val wire = """{"channelId":"ch-1","seq":3,"entry":{"kind":"tool","id":"toolu_1","name":"Write",""" +
            """"status":"awaitingPermission","permission":{"decision":"pending","requestId":"r1"}}}"""
        val note = gson.fromJson(wire, EntryNotification::class.java)
        val tool = note.entry as ToolEntry
        assertEquals(ToolStatus.AWAITING_PERMISSION, tool.status)
        assertEquals(AskState.PENDING, tool.permission?.decision)
        assertEquals(JsonParser.parseString(wire), json(note))
        val text = gson.fromJson("""{"kind":"text","id":"msg_1:0","text":"Hi"}""", Entry::class.java)
        assertEquals(TextEntry(id = "msg_1:0", text = "Hi"), text)
    }

    @Test fun `an entry of a kind this client does not know reads as null`() {
        val note = gson.fromJson("""{"channelId":"ch-1","seq":1,"entry":{"kind":"hologram","id":"h1"}}""", EntryNotification::class.java)
        assertNull(note.entry.orUnknown())
    }

    @Test fun `daemon log lines keep their level`() {
        assertEquals(
            SidecarLogger.Level.INFO,
            SidecarLogger.daemonLineLevel("2026-11-23 18:03:23,728 INFO claude_sidecar.hub: channel ch-1 started"),
        )
        assertEquals(
            SidecarLogger.Level.WARN,
            SidecarLogger.daemonLineLevel("2026-11-23 18:03:23,728 WARNING claude_sidecar.channel: slow"),
        )
        assertEquals(SidecarLogger.Level.ERROR, SidecarLogger.daemonLineLevel("2026-11-23 18:03:23,728 ERROR claude_sidecar.stdio: boom"))
        assertEquals(SidecarLogger.Level.DEBUG, SidecarLogger.daemonLineLevel("Traceback (most recent call last):"))
    }
}
