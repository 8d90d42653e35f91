package dev.claudesidecar.core

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.claudesidecar.core.protocol.PROTOCOL_VERSION
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.exists
import kotlin.io.path.readLines

/**
 * A stand-in daemon for the handshake and odd-answer tests: answers `initialize` with [answer] (a JSON
 * object with `result` or `error`), every other request with null, and writes each message
 * it got to a file in [folder], one JSON line each. A few lines of the venv's Python: no daemon, no CLI.
 * The test owns [folder] (a JUnit `@TempDir`, removed after the test): a fake daemon is never closed.
 */
class FakeDaemon(
    answer: String,
    folder: Path,
    chattyStderr: Boolean = false,
) {
    private val record: Path = Files.createTempFile(folder, "received-", ".jsonl")

    /** The command that runs it; with `chattyStderr` it also writes log lines to stderr without end. */
    val command: List<String> =
        listOf(Harness.repoRoot.resolve(".venv/bin/python").toString(), "-c", SCRIPT, answer, record.toString(), chattyStderr.toString())

    /** The messages it got so far, in order. */
    fun received(): List<JsonObject> =
        if (record.exists()) record.readLines().filter { it.isNotBlank() }.map { JsonParser.parseString(it).asJsonObject } else emptyList()

    /** The methods of the messages it got, in order. */
    fun methods(): List<String> = received().mapNotNull { it.get("method")?.asString }

    companion object {
        /** A daemon's `initialize` answer with these features and ignored options. */
        fun answer(features: List<String>, ignored: List<String> = emptyList()): String {
            fun list(items: List<String>) = items.joinToString(", ", "[", "]") { "\"$it\"" }
            return """
                {"result": {"serverInfo": {"name": "claude-sidecar", "version": "9.9.9"},
                 "capabilities": {"experimental": {"claudeSidecar": {
                   "protocolVersion": $PROTOCOL_VERSION, "oldestClientProtocol": $PROTOCOL_VERSION,
                   "features": ${list(features)}, "ignoredOptions": ${list(ignored)},
                   "methods": [], "notifications": [], "clientRequests": [],
                   "cli": {"path": "/opt/claude", "source": "PATH", "version": "2.1.330", "tested": true,
                           "testedVersions": ["2.1.330"], "error": null}}}}}}
            """.trimIndent()
        }

        /** The daemon's protocolMismatch error for [client], as the wire carries it. */
        fun mismatch(upgrade: String, fix: String, client: String = "intellij"): String {
            val message = if (upgrade == "client") {
                "This claude-sidecar daemon (9.9.9, protocol 7) no longer serves clients of protocol $PROTOCOL_VERSION " +
                    "(the oldest it serves is 5): upgrade $client: $fix"
            } else {
                "$client needs a claude-sidecar daemon of protocol $PROTOCOL_VERSION or newer; this daemon (0.0.9) speaks " +
                    "protocol 0: upgrade claude-sidecar: $fix"
            }
            return """
                {"code": -32016, "message": "$message",
                 "data": {"name": "protocolMismatch", "upgrade": "$upgrade", "daemonProtocol": 7, "oldestClientProtocol": 5,
                          "clientProtocol": $PROTOCOL_VERSION, "clientOldest": $PROTOCOL_VERSION,
                          "daemonVersion": "${if (upgrade == "client") "9.9.9" else "0.0.9"}", "fix": "$fix"}}
            """.trimIndent()
        }

        private val SCRIPT =
            """
            import json, sys, threading
            answer, record = json.loads(sys.argv[1]), sys.argv[2]
            def chatter():
                while True:
                    sys.stderr.write("INFO a daemon log line\n" * 100)
            if sys.argv[3] == "true":
                threading.Thread(target=chatter, daemon=True).start()
            stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
            while True:
                headers = {}
                while True:
                    line = stdin.readline()
                    if not line:
                        sys.exit(0)
                    if not line.strip():
                        break
                    key, _, value = line.decode().partition(":")
                    headers[key.strip().lower()] = value.strip()
                message = json.loads(stdin.read(int(headers["content-length"])))
                with open(record, "a") as f:
                    f.write(json.dumps(message) + "\n")
                if message.get("method") == "exit":
                    sys.exit(0)
                if "id" not in message:
                    continue
                reply = answer if message.get("method") == "initialize" else {"result": None}
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode()
                stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                stdout.flush()
            """.trimIndent()
    }
}
