package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.GsonBuilder
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.CommandLine
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.DaemonOptions
import dev.claudesidecar.core.SidecarClient
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.awt.AWTEvent
import java.awt.EventQueue
import java.awt.Toolkit
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import javax.swing.event.TableModelEvent
import kotlin.io.path.exists
import kotlin.io.path.writeText

/**
 * The app with "All chats" open while the chats of a shared daemon stream (issue 44's bench:
 * overview updates with 8 chats streaming, client stalls): the longest task the EDT ran, the
 * tasks over 50 ms, and how often the list was updated. bench/overview_clients.py runs the
 * daemon and streams the chats from a client of its own; the app only watches.
 *
 * It connects with `-Dsidecar.bench.daemon` (a `claude-sidecar connect` command line), opens
 * with no chat of its own, opens All chats and, once the list shows `-Dsidecar.bench.chats`
 * chats, writes the file `-Dsidecar.bench.ready`. Two windows are measured: until the file
 * `-Dsidecar.bench.go` exists (the chats idle: the baseline; `-Dsidecar.bench.going` is
 * written when it is taken), then until `-Dsidecar.bench.done` exists and the list shows
 * every chat idle (the chats streamed meanwhile). In each: every EDT task timed (wall time,
 * and the EDT's CPU time: other processes on the cores inflate the first only), how late the
 * EDT ran a task due every 5 ms ([Ticks], what Neovim's timer measures), the list's updates (a
 * new list of chats) apart from its once-a-second ticks (the "12 s ago" column). The figures go
 * to `-Dsidecar.bench.out` as JSON; `-Dsidecar.bench.trace=true` prints the EDT's tasks over
 * 50 ms.
 *
 * A benchmark, not a test: runs only with `-Dsidecar.bench.overview=true`.
 */
@EnabledIfSystemProperty(named = "sidecar.bench.overview", matches = "true")
class OverviewBench {
    /** Times every task the EDT runs, wall and CPU, from [push] on. */
    private class TimedQueue : EventQueue() {
        private val cpu = ManagementFactory.getThreadMXBean()

        @Volatile var longest = 0L

        @Volatile var longestCpu = 0L

        @Volatile var tasks = 0

        val slow = mutableListOf<Long>()
        val traces = mutableListOf<String>()

        fun remove() = pop()

        fun reset() {
            longest = 0L
            longestCpu = 0L
            tasks = 0
            synchronized(slow) {
                slow.clear()
                traces.clear()
            }
        }

        override fun dispatchEvent(event: AWTEvent) {
            val started = System.nanoTime()
            val startedCpu = cpu.currentThreadCpuTime
            try {
                super.dispatchEvent(event)
            } finally {
                val took = System.nanoTime() - started
                val tookCpu = cpu.currentThreadCpuTime - startedCpu
                tasks++
                if (took > longest) longest = took
                if (tookCpu > longestCpu) longestCpu = tookCpu
                if (took > 50_000_000) {
                    synchronized(slow) {
                        slow += took
                        traces += "${took / 1_000_000} ms (CPU ${tookCpu / 1_000_000} ms): ${event.toString().take(160)}"
                    }
                }
            }
        }
    }

    /**
     * How late the EDT runs a task due every 5 ms: as Neovim's 5 ms timer in the bench's other
     * half, late by as long as the EDT was busy or the JVM waited for a core (the task's due
     * time is counted from the start, so a late poster counts too).
     */
    private class Ticks {
        private val poster = Executors.newSingleThreadScheduledExecutor()
        private var started = 0L
        private var posted = 0L

        @Volatile var latest = 0L

        @Volatile var over50 = 0

        fun start() {
            started = System.nanoTime()
            poster.scheduleAtFixedRate({
                val due = started + posted++ * PERIOD
                EventQueue.invokeLater {
                    val late = System.nanoTime() - due
                    if (late > latest) latest = late
                    if (late > 50_000_000) over50++
                }
            }, 0, PERIOD, TimeUnit.NANOSECONDS)
        }

        fun reset() {
            latest = 0L
            over50 = 0
        }

        fun stop() = poster.shutdownNow()

        private companion object {
            const val PERIOD = 5_000_000L
        }
    }

    private fun property(name: String): String = System.getProperty("sidecar.bench.$name") ?: error("-Dsidecar.bench.$name is not set")

    @Test
    fun `All chats open while the daemon's chats stream`() {
        val chats = property("chats").toInt()
        val ready = Path.of(property("ready"))
        val go = Path.of(property("go"))
        val going = Path.of(property("going"))
        val done = Path.of(property("done"))
        val out = Path.of(property("out"))
        val cwd = Files.createTempDirectory("bench-overview-swing-")
        val client = SidecarClient(
            ClientOptions(
                daemon = DaemonOptions(
                    command = CommandLine.split(property("daemon")),
                    mode = DaemonMode.SHARED,
                    clientName = "bench-overview-swing",
                ),
            ),
        )
        val app = onEdt {
            FlatLightLaf.setup()
            App(client, cwd.toString()).also {
                it.frame.setSize(1100, 800)
                it.show(firstChat = false)
            }
        }
        val queue = TimedQueue()
        val lateness = Ticks()
        try {
            waitFor("All chats offered", timeoutMs = 120_000) { app.chatsButton.isVisible && client.features.value != null }
            onEdt { app.showChatList() }
            val list = onEdt { find<ChatRosterPanel>(app.chatList!!.contentPane).single() }
            waitFor("the list showing $chats chats", timeoutMs = 120_000) { list.table.rowCount == chats }
            var updates = 0
            var ticks = 0
            onEdt {
                list.table.model.addTableModelListener { e ->
                    if (e.lastRow == Int.MAX_VALUE || e.type != TableModelEvent.UPDATE) updates++ else ticks++
                }
                Toolkit.getDefaultToolkit().systemEventQueue.push(queue)
            }
            lateness.start()
            var started = System.nanoTime()

            /** The figures since [started], then counted afresh. On the EDT: its tasks are between windows. */
            fun window(): Map<String, Any?> = onEdt {
                val span = (System.nanoTime() - started) / 1e9
                linkedMapOf<String, Any?>(
                    "span_s" to span,
                    "max_stall_ms" to ms(queue.longest),
                    "max_stall_cpu_ms" to ms(queue.longestCpu),
                    "stalls_over_50ms" to synchronized(queue.slow) { queue.slow.size },
                    "edt_tasks" to queue.tasks,
                    "max_tick_late_ms" to ms(lateness.latest),
                    "ticks_late_over_50ms" to lateness.over50,
                    "list_updates" to updates,
                    "list_updates_per_s" to updates / span,
                    "list_ticks" to ticks,
                ).also {
                    if (TRACE) synchronized(queue.slow) { queue.traces.forEach { println("OverviewBench trace: $it") } }
                    queue.reset()
                    lateness.reset()
                    updates = 0
                    ticks = 0
                    started = System.nanoTime()
                }
            }
            ready.writeText("ready\n")
            awaitFile(go)
            val idle = window()
            going.writeText("going\n")
            awaitFile(done)
            waitFor("every chat idle in the list", timeoutMs = 30_000, describe = { "${list.table.rowCount} rows" }) {
                (0 until list.table.rowCount).all { list.table.getValueAt(it, 0) == "idle" }
            }
            val streaming = window()
            val figures = linkedMapOf("chats" to chats, "idle" to idle, "streaming" to streaming)
            println("OverviewBench $figures")
            out.writeText(GsonBuilder().setPrettyPrinting().create().toJson(figures))
        } finally {
            lateness.stop()
            onEdt {
                runCatching { queue.remove() }
                app.close()
            }
            client.close()
        }
    }

    /** Waits until the bench's other half writes [file] (10 minutes at most). */
    private fun awaitFile(file: Path) {
        val deadline = System.nanoTime() + 600_000_000_000
        while (!file.exists()) {
            check(System.nanoTime() < deadline) { "no $file: the bench's other half stopped?" }
            Thread.sleep(20)
        }
    }

    private fun ms(nanos: Long): Double = Math.round(nanos / 1e4) / 100.0

    private companion object {
        /** `-Dsidecar.bench.trace=true`: prints the EDT's tasks over 50 ms of each window. */
        val TRACE = System.getProperty("sidecar.bench.trace") == "true"
    }
}
