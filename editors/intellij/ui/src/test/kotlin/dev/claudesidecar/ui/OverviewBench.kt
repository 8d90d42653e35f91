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
 * chats, writes the file `-Dsidecar.bench.ready`. From then until the file
 * `-Dsidecar.bench.done` exists and the list shows every chat idle it times each EDT task
 * (wall time, and the EDT's CPU time: other processes on the cores inflate the first only) and
 * counts the list's updates (a new list of chats) apart from its once-a-second ticks (the
 * "12 s ago" column); the figures go to `-Dsidecar.bench.out` as JSON.
 * `-Dsidecar.bench.trace=true` prints the EDT's tasks over 50 ms.
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

    private fun property(name: String): String = System.getProperty("sidecar.bench.$name") ?: error("-Dsidecar.bench.$name is not set")

    @Test
    fun `All chats open while the daemon's chats stream`() {
        val chats = property("chats").toInt()
        val ready = Path.of(property("ready"))
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
            val started = System.nanoTime()
            ready.writeText("ready\n")
            val deadline = started + 600_000_000_000
            while (!done.exists()) {
                check(System.nanoTime() < deadline) { "the chats never ended (no ${property("done")})" }
                Thread.sleep(20)
            }
            waitFor("every chat idle in the list", timeoutMs = 30_000, describe = { "${list.table.rowCount} rows" }) {
                (0 until list.table.rowCount).all { list.table.getValueAt(it, 0) == "idle" }
            }
            val span = System.nanoTime() - started
            val slow = synchronized(queue.slow) { queue.slow.toList() }
            val figures = linkedMapOf<String, Any?>(
                "chats" to chats,
                "span_s" to span / 1e9,
                "max_stall_ms" to ms(queue.longest),
                "max_stall_cpu_ms" to ms(queue.longestCpu),
                "stalls_over_50ms" to slow.size,
                "edt_tasks" to queue.tasks,
                "list_updates" to updates,
                "list_updates_per_s" to updates / (span / 1e9),
                "list_ticks" to ticks,
                "waiting_on_button" to onEdt { app.chatsButton.text },
            )
            println("OverviewBench $figures")
            if (System.getProperty("sidecar.bench.trace") ==
                "true"
            ) {
                synchronized(queue.slow) { queue.traces.forEach { println("OverviewBench trace: $it") } }
            }
            out.writeText(GsonBuilder().setPrettyPrinting().create().toJson(figures))
        } finally {
            onEdt {
                runCatching { queue.remove() }
                app.chatList?.dispose()
                app.frame.dispose()
            }
            client.close()
        }
    }

    private fun ms(nanos: Long): Double = Math.round(nanos / 1e4) / 100.0
}
