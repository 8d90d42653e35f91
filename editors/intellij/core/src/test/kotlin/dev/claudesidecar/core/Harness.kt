package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.TurnEndedNotification
import dev.claudesidecar.core.protocol.WarmPoolOptions
import dev.claudesidecar.core.transcript.ChatState
import dev.claudesidecar.core.transcript.id
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assumptions
import java.io.IOException
import java.net.StandardProtocolFamily
import java.net.UnixDomainSocketAddress
import java.nio.channels.SocketChannel
import java.nio.file.Files
import java.nio.file.Path
import java.util.UUID
import java.util.concurrent.TimeUnit
import kotlin.io.path.absolutePathString
import kotlin.io.path.createDirectories
import kotlin.io.path.exists
import kotlin.io.path.readText
import kotlin.io.path.writeText
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

// What the core tests share: the stand-in model, an own HOME and workspace, a client on the
// real daemon and the real CLI, and waiting for a chat's events.

object Harness {
    /** The repository's root (the folder with pyproject.toml). */
    val repoRoot: Path by lazy {
        System.getProperty("sidecar.repoRoot")?.let { return@lazy Path.of(it).toRealPath() }
        var dir: Path? = Path.of("").toAbsolutePath()
        while (dir != null && !dir.resolve("pyproject.toml").exists()) dir = dir.parent
        dir ?: error("cannot find the repository root (pyproject.toml) above ${Path.of("").toAbsolutePath()}")
    }

    /** The daemon executable of the repository's virtualenv (`uv sync` makes it), or the one
     * CLAUDE_SIDECAR_BIN names: another release's, or the test command's fork server's stand-in
     * (tests/zygote/command.sh), which starts the same daemon without its imports. */
    val sidecarBin: Path by lazy {
        val bin = System.getenv("CLAUDE_SIDECAR_BIN")?.let(Path::of) ?: consoleScript
        check(bin.exists()) { "$bin is missing: run `uv sync` in $repoRoot first" }
        bin
    }

    /** The `claude-sidecar` console script as `uv sync` installs it: for the tests of how the app
     * finds and starts the daemon a user installed. */
    val consoleScript: Path by lazy {
        val bin = repoRoot.resolve(".venv/bin/claude-sidecar")
        check(bin.exists()) { "$bin is missing: run `uv sync` in $repoRoot first" }
        bin
    }

    val logger: SidecarLogger = when (System.getenv("SIDECAR_TEST_LOG")) {
        null -> SidecarLogger.NONE
        else -> SidecarLogger { level, m -> System.err.println("[$level] $m") }
    }
}

/** `claude-sidecar scripted-model` with a scenario (docs/scripted-model.md). */
class Model private constructor(
    private val process: Process,
    val url: String,
    /** The folder of its scenario, its own: removed once it has stopped (each test class left one in the temporary folder). */
    private val dir: Path,
) : AutoCloseable {
    override fun close() {
        process.destroy()
        if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
        dir.toFile().deleteRecursively()
    }

    companion object {
        fun start(scenarioResource: String = "/scenario.json"): Model =
            startScenario(Model::class.java.getResource(scenarioResource)!!.readText())

        /** The model playing [json], a scenario's text. */
        fun startScenario(json: String): Model {
            val dir = Files.createTempDirectory("sidecar-model-")
            val scenario = dir.resolve("scenario.json")
            scenario.writeText(json)
            val process = ProcessBuilder(
                Harness.sidecarBin.toString(),
                "scripted-model",
                "--scenario",
                scenario.toString(),
                "--port",
                "0",
            ).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
            val reader = process.errorStream.bufferedReader()
            val seen = StringBuilder()
            val deadline = System.nanoTime() + 20_000_000_000
            while (System.nanoTime() < deadline) {
                val line = reader.readLine() ?: break
                seen.appendLine(line)
                Regex("""listening on (http://\S+)""").find(line)?.let { match ->
                    Thread { reader.useLines { it.forEach { } } }.apply { isDaemon = true }.start()
                    return Model(process, match.groupValues[1], dir)
                }
            }
            process.destroyForcibly().waitFor()
            dir.toFile().deleteRecursively()
            error("the stand-in model did not start: $seen")
        }
    }
}

/**
 * An own HOME and workspace, and the environment that points the CLI at the model; without
 * [credentials], neither the model nor a key: the CLI has no credentials at all.
 */
class Sandbox(
    model: Model,
    credentials: Boolean = true,
) : AutoCloseable {
    val root: Path = Files.createTempDirectory("sidecar-intellij-")
    val home: Path = root.resolve("home").createDirectories()
    val workspace: Path = root.resolve("workspace").createDirectories()
    val cwd: String get() = workspace.absolutePathString()

    val env: Map<String, String?> = buildMap {
        for (key in System.getenv().keys) if (key.startsWith("ANTHROPIC_") || key.startsWith("CLAUDE")) put(key, null)
        put("HOME", home.toString())
        if (credentials) {
            put("ANTHROPIC_BASE_URL", model.url)
            put("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
        }
        put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    }

    /**
     * A client on the real daemon, started in [env] (the sandbox's by default); no warm pool
     * (each spare costs a CLI) unless [initializationOptions] ask for one.
     */
    fun client(
        command: List<String> = listOf(Harness.sidecarBin.toString(), "--stdio"),
        env: Map<String, String?> = this.env,
        editorTools: List<EditorToolBinding> = emptyList(),
        initializationOptions: InitializationOptions = InitializationOptions(warmPool = WarmPoolOptions(size = 0)),
        mode: DaemonMode = DaemonMode.PRIVATE,
        clientName: String = "claude-sidecar-intellij",
        pageEntries: Int = 100,
    ) = SidecarClient(
        ClientOptions(
            daemon = DaemonOptions(
                command = command,
                mode = mode,
                cwd = workspace,
                env = env,
                initializationOptions = initializationOptions,
                clientName = clientName,
                logger = Harness.logger,
            ),
            editorTools = editorTools,
            pageEntries = pageEntries,
        ),
    )

    /**
     * Stores a long session of the workspace, [copies] times a short real one ("hello there",
     * then a Write: 7 entries each) on one parent chain, as tests/repeated_session.py writes
     * it; returns its session id.
     */
    fun storeLongSession(copies: Int): String {
        val sessionId = UUID.randomUUID().toString()
        val script = """
            |import sys
            |from pathlib import Path
            |from claude_sidecar.cli.paths import project_dir
            |from tests.repeated_session import write_long_session
            |folder = project_dir(Path(sys.argv[1]), sys.argv[2])
            |folder.mkdir(parents=True, exist_ok=True)
            |write_long_session(folder / (sys.argv[4] + ".jsonl"), int(sys.argv[3]), sys.argv[4])
        """.trimMargin()
        // The checkout's own Python: the session is this checkout's test data, whichever daemon runs.
        val python = Harness.repoRoot.resolve(".venv/bin/python").toString()
        val process = ProcessBuilder(python, "-c", script, home.toString(), cwd, copies.toString(), sessionId)
            .directory(Harness.repoRoot.toFile())
            .redirectErrorStream(true)
            .start()
        val output = process.inputStream.bufferedReader().readText()
        check(process.waitFor() == 0) { "writing the long session failed: $output" }
        return sessionId
    }

    /**
     * [env] with the daemon's CLI held on a resume until [go] exists (tests/fixtures/held-cli.sh):
     * what a client does while a resumed session's CLI starts, shown without sleeps. The held
     * CLI is the one the daemon runs here (its `initialize` says which).
     */
    fun heldResumeEnv(go: Path): Map<String, String?> {
        val probe = client()
        val cli = try {
            runBlocking { probe.daemon().initializeResult.capabilities.experimental.claudeSidecar.cli.path }
        } finally {
            probe.close()
        }
        return env + mapOf(
            "CLAUDE_SIDECAR_CLI" to Harness.repoRoot.resolve("tests/fixtures/held-cli.sh").toString(),
            "CLAUDE_SIDECAR_HELD_CLI" to checkNotNull(cli) { "the daemon names no CLI" },
            "CLAUDE_SIDECAR_HOLD" to go.toString(),
        )
    }

    override fun close() {
        root.toFile().deleteRecursively()
    }
}

/**
 * `claude-sidecar serve` on a socket of its own in a short /tmp directory (a socket path has
 * at most 108 bytes), in [box]'s environment, no warm pool; [args] are more `serve` options.
 * Clients reach it with [connect], as an editor does; when it is gone, `connect` starts a
 * new one (the same options, logging to daemon-started.log). [close] stops the daemon serving
 * the socket (SIGTERM) and checks that neither it nor a CLI of its outlives it.
 */
class SharedDaemon(
    private val box: Sandbox,
    vararg args: String,
) : AutoCloseable {
    private val dir: Path = Files.createTempDirectory(Path.of("/tmp"), "cs-")
    val socket: Path = dir.resolve("daemon.sock")
    private val process: Process

    /** The command that bridges a client to this daemon. */
    val connect: List<String>
        get() = listOf(Harness.sidecarBin.toString(), "connect", "--socket", socket.toString()) +
            listOf("--daemon-log", box.root.resolve("daemon-started.log").toString(), "--warm-pool", "0", "--linger", "60")

    /** The process serving the socket now: the one started here, or one `connect` started after it died. */
    fun serving(): ProcessHandle? = runCatching {
        socket.resolveSibling("daemon.sock.lock").readText().trim().substringBefore(" ").toLong()
    }
        .getOrNull()
        ?.let { ProcessHandle.of(it).orElse(null) }
        ?.takeIf { it.isAlive }

    init {
        val command = listOf(Harness.sidecarBin.toString(), "--log-level", "DEBUG", "serve", "--socket", socket.toString()) +
            listOf("--warm-pool", "0", "--linger", "60") + args
        val builder = ProcessBuilder(command).redirectErrorStream(true).redirectOutput(box.root.resolve("daemon.log").toFile())
        for ((key, value) in box.env) if (value == null) builder.environment().remove(key) else builder.environment()[key] = value
        process = builder.start()
        awaitSocket()
    }

    /** The daemon's pid and its CLIs' now. */
    fun pids(): Set<Long> = setOf(process.pid()) + process.descendants().map { it.pid() }.toList()

    private fun awaitSocket() {
        val deadline = System.nanoTime() + 30_000_000_000
        while (System.nanoTime() < deadline) {
            check(process.isAlive) { "the shared daemon exited with ${process.exitValue()}" }
            try {
                SocketChannel.open(StandardProtocolFamily.UNIX).use { it.connect(UnixDomainSocketAddress.of(socket)) }
                return
            } catch (_: IOException) {
                // Polls: the daemon's readiness is not an event this process can await.
                Thread.sleep(50)
            }
        }
        error("no daemon served $socket")
    }

    override fun close() {
        val other = serving()?.takeIf { it.pid() != process.pid() }
        val pids = pids() + listOfNotNull(other?.pid()) + (other?.descendants()?.map { it.pid() }?.toList() ?: emptyList())
        process.destroy()
        other?.destroy()
        if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly()
        try {
            assertAllGone(pids)
        } finally {
            dir.toFile().deleteRecursively()
        }
    }
}

/**
 * Skips the calling test (JUnit's assumptions) when the daemon [client] starts does not serve
 * [feature]: for a test of a feature newer than a release whose daemon the tests also run
 * against (tests/cross-release.sh runs these tests against the last release's daemon). Only
 * for that: a prerequisite missing here is a failure, not a skip.
 */
suspend fun assumeFeature(client: SidecarClient, feature: String) {
    val daemon = client.daemon()
    val features = Handshake.features(daemon.initializeResult)
    Assumptions.assumeTrue(
        feature in features,
        "the daemon under test (${daemon.initializeResult.serverInfo.version}) does not serve $feature",
    )
}

/** Records a chat's events from now on and waits for those a test expects; notes every pid it sees. */
class Recorder(
    private val client: SidecarClient,
    private val pids: MutableSet<Long>,
) : ChatListener {
    private val events = mutableListOf<ChatEvent>()
    private val state = ChatState()

    /** How many events were recorded: what a wait below wakes on. */
    private val recorded = MutableStateFlow(0)
    lateinit var chat: Chat

    /** The chat as a view shows it after the events so far (a copy of what [ChatState] made of them). */
    fun <T> view(read: (ChatState) -> T): T = synchronized(events) { read(state) }

    /** The texts of the view's answer entries (not a sub-agent's), in order. */
    fun texts(): List<String> = view { s ->
        s.transcript.entries.filterIsInstance<TextEntry>().filter { it.parentId == null }.map { it.text }
    }

    /** The texts of the notices this client added, in order. */
    fun notices(): List<String> = events().filterIsInstance<ChatEvent.Notice>().map { it.text }

    /** Opens a chat with `open(this)` so that the recording starts with its first event. */
    suspend fun start(open: suspend (ChatListener) -> Chat): Recorder = apply {
        chat = open(this)
        notePids()
    }

    private fun notePids() = synchronized(pids) {
        if (::chat.isInitialized) chat.pid?.let { pids += it.toLong() }
        client.runningDaemon?.let { pids += it.pid }
    }

    override fun onEvent(event: ChatEvent) {
        if (event is ChatEvent.Bound) notePids() // the chat's fields are set before Bound is delivered
        synchronized(events) {
            events += event
            state.apply(event)
            recorded.value = events.size
        }
    }

    /** [found] once it is not null after an event (or before any), else null after [timeout]. */
    private suspend fun <T : Any> awaitFound(timeout: Duration, found: () -> T?): T? = withTimeoutOrNull(timeout) {
        var result: T? = null
        recorded.first { _ -> found()?.also { result = it } != null }
        result
    }

    /** Waits until the view's answer texts are [expected]. */
    suspend fun awaitTexts(expected: List<String>, timeout: Duration = 60.seconds) {
        awaitFound(timeout) { texts().takeIf { it == expected } }
            ?: error("the answer texts are not $expected within $timeout but ${texts()}")
    }

    /** Waits until the view's channel state is [expected] (`claude/status` comes after the turn's end). */
    suspend fun awaitState(expected: ChannelState, timeout: Duration = 60.seconds) {
        awaitFound(timeout) { view { it.status.state }.takeIf { it == expected } }
            ?: error("the chat's state is not $expected within $timeout but ${view { it.status.state }}")
    }

    fun events(): List<ChatEvent> = synchronized(events) { events.toList() }

    /** A position in the recording, to wait "from here" without racing the action that follows. */
    fun mark(): Int = synchronized(events) { events.size }

    fun <P : Any> notifications(type: NotificationType<P>, since: Int = 0): List<P> = events().drop(since)
        .filterIsInstance<ChatEvent.Notification>()
        .filter { it.method == type.name }
        .map { type.paramsType.cast(it.params) }

    /** The entries the chat's `claude/entry` notifications carried from the mark [since], each as last sent. */
    fun entries(since: Int = 0): List<Entry> =
        notifications(Notifications.ENTRY, since).map { it.entry }.associateBy { it.id() }.values.toList()

    /** Waits for a notification [type] from the mark [since] matching [test]. */
    suspend fun <P : Any> next(type: NotificationType<P>, since: Int, timeout: Duration = 60.seconds, test: (P) -> Boolean = { true }): P =
        awaitFound(timeout) { notifications(type, since).firstOrNull(test) }
            ?: error("no ${type.name} within $timeout; saw: ${summary()}")

    /** Waits until an event matching [test] was recorded from [since]. */
    suspend fun awaitEvent(since: Int, timeout: Duration = 60.seconds, test: (ChatEvent) -> Boolean): ChatEvent =
        awaitFound(timeout) { events().drop(since).firstOrNull(test) }
            ?: error("no such event within $timeout; saw: ${summary()}")

    /** Sends [text] and waits for the end of its turn. */
    suspend fun turn(text: String): TurnEndedNotification {
        val since = mark()
        val messageId = chat.send(text)
        return next(Notifications.TURN_ENDED, since) { messageId in (it.messageIds ?: emptyList()) }
    }

    private fun summary(): String = events().takeLast(15).joinToString {
        if (it is ChatEvent.Notification) it.method else it.javaClass.simpleName
    }
}

/** Waits until none of [pids] runs; fails naming those that outlived the wait ([timeoutMs]: a
 * hang guard; a process's end is no event this process can await). */
fun assertAllGone(pids: Collection<Long>, timeoutMs: Long = 30_000) {
    val deadline = System.currentTimeMillis() + timeoutMs
    fun left() = pids.filter { pid -> ProcessHandle.of(pid).map { it.isAlive }.orElse(false) }
    while (left().isNotEmpty() && System.currentTimeMillis() < deadline) Thread.sleep(50)
    check(left().isEmpty()) { "processes outlived the client: ${left()}" }
}
