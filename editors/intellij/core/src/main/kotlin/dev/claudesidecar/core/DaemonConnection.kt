package dev.claudesidecar.core

import com.google.gson.JsonObject
import dev.claudesidecar.core.SidecarLogger.Level
import dev.claudesidecar.core.protocol.ClientRequests
import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.InitializeResult
import dev.claudesidecar.core.protocol.Method
import dev.claudesidecar.core.protocol.Methods
import dev.claudesidecar.core.protocol.NotificationType
import dev.claudesidecar.core.protocol.Notifications
import dev.claudesidecar.core.protocol.ProtocolJson
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import kotlinx.coroutines.withTimeoutOrNull
import org.eclipse.lsp4j.jsonrpc.Endpoint
import org.eclipse.lsp4j.jsonrpc.RemoteEndpoint
import org.eclipse.lsp4j.jsonrpc.ResponseErrorException
import org.eclipse.lsp4j.jsonrpc.json.JsonRpcMethod
import org.eclipse.lsp4j.jsonrpc.json.MessageJsonHandler
import org.eclipse.lsp4j.jsonrpc.json.StreamMessageConsumer
import org.eclipse.lsp4j.jsonrpc.json.StreamMessageProducer
import org.eclipse.lsp4j.jsonrpc.messages.ResponseError
import org.eclipse.lsp4j.jsonrpc.messages.ResponseErrorCode
import java.io.IOException
import java.nio.file.Path
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** Which daemon a client uses: one of its own, or the user's shared one (docs/protocol.md, "The shared daemon"). */
enum class DaemonMode {
    /** `claude-sidecar --stdio`: the client's own daemon; its chats end with the client. */
    PRIVATE,

    /**
     * `claude-sidecar connect`: the per-user daemon, whose chats outlive the client; a dropped
     * connection is made again and every chat attached again with what it missed.
     */
    SHARED,
    ;

    /** This mode's command for [program] (looked up on `PATH` unless it is a path): `program --stdio` or `program connect`. */
    fun command(program: String = PROGRAM): List<String> = listOf(program, if (this == PRIVATE) "--stdio" else "connect")

    companion object {
        /** The daemon's program when the user gives no command. */
        const val PROGRAM = "claude-sidecar"
    }
}

/** How to start a daemon. */
data class DaemonOptions(
    /**
     * The command and its arguments: the `daemonCommand` setting (e.g. `ssh devbox claude-sidecar
     * connect`); null: [mode]'s command of `claude-sidecar` ([DaemonMode.command]).
     */
    val command: List<String>? = null,
    /** Private or shared: how the client reacts when the process ends, and whether chats can be attached. */
    val mode: DaemonMode = DaemonMode.PRIVATE,
    /** The daemon's working directory (default: this process's). */
    val cwd: Path? = null,
    /** Added to (a value) or removed from (null) this process's environment for the daemon and its CLIs. */
    val env: Map<String, String?> = emptyMap(),
    val initializationOptions: InitializationOptions = InitializationOptions(),
    /** Sent as `clientInfo.name` of `initialize`. */
    val clientName: String = "claude-sidecar-intellij",
    /**
     * This client's name in the version handshake (`initializationOptions.protocol.client`,
     * which the daemon's upgrade message names): `intellij`, `swing-app`.
     */
    val protocolClient: String = "intellij",
    val logger: SidecarLogger = SidecarLogger.NONE,
    /** How long `shutdown`/`exit` may take before the process is killed. */
    val shutdownGrace: Duration = 3.seconds,
) {
    /** The command to run: [command], else [mode]'s. */
    val commandLine: List<String> get() = command ?: mode.command()
}

/** How a daemon process ended. */
data class DaemonExit(
    val exitCode: Int,
    /** True when [DaemonConnection.shutdown] or [DaemonConnection.kill] ended it. */
    val expected: Boolean,
    /** Its last stderr lines, for the message a user sees. */
    val stderrTail: List<String>,
)

/** What a connection tells its owner. Notification and exit calls come from the connection's own threads. */
interface DaemonHandlers {
    /** A `claude/…` notification: called on the connection's reader thread, one at a time, in wire order. */
    fun onNotification(type: NotificationType<*>, params: Any)

    /** Serves a request the daemon sends the client (`claude/callEditorTool`); throw to answer with an error. */
    suspend fun onClientRequest(method: Method<*, *>, params: Any): Any?

    /** The process ended (once, also after [DaemonConnection.shutdown]). */
    fun onExit(exit: DaemonExit)
}

/**
 * One running daemon: its process, and JSON-RPC over its stdio (lsp4j). Moves typed messages
 * and knows nothing about chats (see [SidecarClient]).
 */
class DaemonConnection private constructor(
    private val process: Process,
    private val options: DaemonOptions,
    private val handlers: DaemonHandlers,
) {
    private val log = options.logger
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private val stderrTail = ArrayDeque<String>()
    private val pending = ConcurrentHashMap.newKeySet<CompletableFuture<*>>()
    private lateinit var remote: RemoteEndpoint
    private lateinit var stderrThread: Thread

    @Volatile private var stopping = false

    @Volatile var exit: DaemonExit? = null
        private set

    /** The daemon's answer to `initialize`: its version, methods, and the CLI it found. */
    lateinit var initializeResult: InitializeResult
        private set

    val pid: Long get() = process.pid()
    val alive: Boolean get() = exit == null

    /** Sends a typed `claude/…` request; an error answer throws [SidecarException] with the daemon's `data.name`. */
    suspend fun <P : Any, R : Any> request(method: Method<P, R>, params: P): R {
        // Every claude/* result is an object: a null one is the daemon's fault, said as such
        // (not a NullPointerException on the caller's thread).
        val result = call(method.name, params) ?: throw SidecarException("the daemon answered ${method.name} with no result", method.name)
        return method.resultType.cast(result)
    }

    private suspend fun call(method: String, params: Any?): Any? {
        if (!alive) throw notRunning()
        val future = remote.request(method, params)
        pending += future
        if (!alive) future.completeExceptionally(notRunning())
        try {
            return future.await()
        } catch (e: Throwable) {
            if (e is kotlinx.coroutines.CancellationException) throw e
            throw SidecarException.from(e, method)
        } finally {
            pending -= future
        }
    }

    /**
     * Ends the daemon: `shutdown` and `exit` (it closes its channels and their CLIs), then
     * SIGKILL when it is not gone within [DaemonOptions.shutdownGrace]. Returns once it is gone.
     */
    suspend fun shutdown() {
        if (!alive) return
        stopping = true
        withTimeoutOrNull(options.shutdownGrace) {
            runCatching { call("shutdown", null) }
            runCatching { remote.notify("exit", null) }
            runCatching { process.outputStream.close() }
            process.onExit().await()
        }
        if (process.isAlive) {
            log.log(Level.WARN, "daemon ${process.pid()} did not exit within ${options.shutdownGrace}: killing it")
            process.destroyForcibly()
        }
        process.onExit().await()
        awaitExitReported()
    }

    /** Kills the process at once (SIGKILL); its CLIs die with it (they run with a parent-death signal). */
    fun kill() {
        stopping = true
        process.destroyForcibly()
    }

    private suspend fun awaitExitReported() {
        while (exit == null) kotlinx.coroutines.delay(10)
    }

    private fun notRunning(): SidecarException {
        val exit = exit ?: return SidecarException("the daemon is not running", "daemon")
        val tail = exit.stderrTail.takeLast(3).joinToString(" | ")
        return SidecarException("the daemon exited (code ${exit.exitCode})${if (tail.isEmpty()) "" else ": $tail"}", "daemon")
    }

    private fun connect() {
        val methods = LinkedHashMap<String, JsonRpcMethod>()
        methods["initialize"] = JsonRpcMethod.request("initialize", InitializeResult::class.java, Any::class.java)
        methods["shutdown"] = JsonRpcMethod.request("shutdown", Any::class.java)
        methods["exit"] = JsonRpcMethod.notification("exit")
        for (m in Methods.ALL) methods[m.name] = JsonRpcMethod.request(m.name, m.resultType, m.paramsType)
        for (n in Notifications.ALL) methods[n.name] = JsonRpcMethod.notification(n.name, n.paramsType)
        for (m in ClientRequests.ALL) methods[m.name] = JsonRpcMethod.request(m.name, m.resultType, m.paramsType)
        val json = MessageJsonHandler(methods) { ProtocolJson.configure(it) }
        remote = RemoteEndpoint(StreamMessageConsumer(process.outputStream, json), LocalEndpoint())
        json.methodProvider = remote
        val producer = StreamMessageProducer(process.inputStream, json, remote)
        Thread({
            try {
                producer.listen(remote)
            } catch (e: Exception) {
                if (alive && !stopping) log.log(Level.WARN, "daemon connection: ${e.message}")
            }
        }, "claude-sidecar-rpc-${process.pid()}").apply { isDaemon = true }.start()
        stderrThread = Thread({ drainStderr() }, "claude-sidecar-stderr-${process.pid()}").apply {
            isDaemon = true
            start()
        }
        process.onExit().thenRun { exited() }
    }

    private inner class LocalEndpoint : Endpoint {
        override fun notify(method: String, parameter: Any?) {
            val type = Notifications.byName(method)
            if (type == null || parameter == null) {
                log.log(Level.DEBUG, "daemon: ignored notification $method")
                return
            }
            try {
                handlers.onNotification(type, parameter)
            } catch (e: Exception) {
                log.log(Level.ERROR, "handling $method: $e")
            }
        }

        override fun request(method: String, parameter: Any?): CompletableFuture<*> {
            val known = ClientRequests.ALL.firstOrNull { it.name == method }
                ?: return CompletableFuture.failedFuture<Any>(
                    ResponseErrorException(ResponseError(ResponseErrorCode.MethodNotFound, "this client does not serve $method", null)),
                )
            return scope.future {
                try {
                    handlers.onClientRequest(known, parameter ?: JsonObject())
                } catch (e: Exception) {
                    if (e is kotlinx.coroutines.CancellationException) throw e
                    log.log(Level.WARN, "$method failed: ${e.message}")
                    throw ResponseErrorException(ResponseError(ResponseErrorCode.InternalError, e.message ?: e.toString(), null))
                }
            }
        }
    }

    private fun drainStderr() {
        try {
            process.errorStream.bufferedReader().useLines { lines ->
                for (line in lines) {
                    if (line.isBlank()) continue
                    synchronized(stderrTail) {
                        stderrTail.addLast(line)
                        while (stderrTail.size > STDERR_TAIL_LINES) stderrTail.removeFirst()
                    }
                    log.log(SidecarLogger.daemonLineLevel(line), "daemon: $line")
                }
            }
        } catch (e: IOException) {
            // Process.destroy() closes the pipe under a read in progress ("Stream closed"): the
            // daemon is being stopped, and what it wrote before is already in the tail.
            if (alive && !stopping) log.log(Level.WARN, "daemon stderr: ${e.message}")
        }
    }

    private fun exited() {
        stderrThread.join(500) // its last lines say why
        val code = process.exitValue()
        val tail = synchronized(stderrTail) { stderrTail.toList() }
        val info = DaemonExit(code, stopping, tail)
        log.log(if (stopping) Level.INFO else Level.ERROR, "daemon ${process.pid()} exited (code $code)")
        exit = info
        val error = notRunning()
        for (future in pending) future.completeExceptionally(error)
        scope.cancel()
        handlers.onExit(info)
    }

    companion object {
        private const val STDERR_TAIL_LINES = 20

        /**
         * Spawns the daemon, sends `initialize` (with `protocol`, [Handshake.offer], unless the
         * options hold one) and returns once it answered. Throws [SidecarException] (`where =
         * "daemonCommand"` when the command cannot run; the daemon's error when it refuses the
         * initialization options, with [SidecarException.mismatch] when it and this client do
         * not fit) and leaves no process behind.
         */
        suspend fun start(options: DaemonOptions, handlers: DaemonHandlers): DaemonConnection {
            val command = options.commandLine
            val program = command.firstOrNull()
                ?: throw SidecarException(
                    "daemonCommand is empty: set it to e.g. ${options.mode.command().joinToString(" ")}",
                    "daemonCommand",
                )
            val builder = ProcessBuilder(command)
            options.cwd?.let { builder.directory(it.toFile()) }
            val env = builder.environment()
            for ((key, value) in options.env) if (value == null) env.remove(key) else env[key] = value
            val process = try {
                builder.start()
            } catch (e: IOException) {
                val hint = if (e.message?.contains("error=2") == true) {
                    "$program was not found: install claude-sidecar, or set daemonCommand to its full path " +
                        "(e.g. ${options.mode.command("/path/to/.venv/bin/claude-sidecar").joinToString(" ")})"
                } else {
                    e.message
                }
                throw SidecarException(
                    "cannot start the daemon `${command.joinToString(" ")}` (setting daemonCommand): $hint",
                    "daemonCommand",
                    cause = e,
                )
            }
            val daemon = DaemonConnection(process, options, handlers)
            daemon.connect()
            try {
                val params = mapOf(
                    "processId" to ProcessHandle.current().pid(),
                    "clientInfo" to mapOf("name" to options.clientName),
                    "capabilities" to emptyMap<String, Any>(),
                    "initializationOptions" to options.initializationOptions.let {
                        if (it.protocol == null) it.copy(protocol = Handshake.offer(options.protocolClient)) else it
                    },
                )
                daemon.initializeResult = daemon.call("initialize", params) as InitializeResult
                daemon.remote.notify("initialized", emptyMap<String, Any>())
            } catch (e: Throwable) {
                daemon.kill()
                withTimeoutOrNull(options.shutdownGrace) { process.onExit().await() }
                throw Handshake.initializeError(SidecarException.from(e, "initialize"))
            }
            options.logger.log(
                Level.INFO,
                "daemon ${process.pid()} started: ${daemon.initializeResult.serverInfo.name} ${daemon.initializeResult.serverInfo.version}",
            )
            return daemon
        }
    }
}
