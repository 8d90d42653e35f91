package dev.claudesidecar.core

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.exists
import kotlin.io.path.readLines

/**
 * A stand-in daemon for the handshake tests: answers `initialize` with [answer] (a JSON
 * object with `result` or `error`), every other request with null, and writes each message
 * it got to a file, one JSON line each. A few lines of the venv's Python: no daemon, no CLI.
 */
class FakeDaemon(answer: String) {
    private val record: Path = Files.createTempDirectory("sidecar-fake-").resolve("received.jsonl")

    /** The command that runs it. */
    val command: List<String> = listOf(Harness.repoRoot.resolve(".venv/bin/python").toString(), "-c", SCRIPT, answer, record.toString())

    /** The messages it got so far, in order. */
    fun received(): List<JsonObject> =
        if (record.exists()) record.readLines().filter { it.isNotBlank() }.map { JsonParser.parseString(it).asJsonObject } else emptyList()

    /** The methods of the messages it got, in order. */
    fun methods(): List<String> = received().mapNotNull { it.get("method")?.asString }

    private companion object {
        val SCRIPT =
            """
            import json, sys
            answer, record = json.loads(sys.argv[1]), sys.argv[2]
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
