package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.GsonBuilder
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.awt.AWTEvent
import java.awt.EventQueue
import java.awt.Toolkit
import java.lang.management.ManagementFactory
import java.nio.file.Path
import javax.swing.JFrame
import kotlin.io.path.writeText

/**
 * A long stored session opened in the chat panel (issue 43, point 4): the time until the last
 * entry is on screen, and the longest task the EDT ran while opening and while scrolling to
 * the first entry, per session size, paged and windowed (the panel as it is) against the
 * whole transcript drawn at once (the panel before paging: `pageEntries` beyond the session's
 * length, every entry drawn). The real daemon and CLI resume a session grown by
 * tests/repeated_session.py (7 entries a copy). The clock starts when the resume is asked for
 * (the user's pick): with a paging daemon the end is on screen from the session's stored last
 * page, read while the CLI starts (`resume_answered_ms` is when the chat opened). Scrolling to
 * the top turns the mouse wheel (through the event queue, as the user does) until the first
 * entry is in sight.
 *
 * The JVM's first chat (opened before the figures, not measured) loads and compiles the
 * panel's classes. Stalls are wall time (what the user waits) and the EDT's CPU time (other
 * processes on the cores inflate the first, not the second).
 *
 * A benchmark, not a test: runs only with `-Dsidecar.bench.long=true`; `-Dsidecar.bench.sizes`
 * (`56,1000,10000`: a short chat too, which the panel drew whole in one task unseen while the
 * sizes began at 1,000) names the entry counts, `-Dsidecar.bench.modes` (`paged,whole`) the panels,
 * `-Dsidecar.bench.out` a JSON file for the figures, `-Dsidecar.bench.trace=true` prints the
 * EDT's tasks over 50 ms or 20 ms of CPU (with the GC and blocked time in each):
 *
 *     xvfb-run -a mvn -q -B test -pl core,ui -Dtest=LongSessionBench -Dsidecar.bench.long=true -Dsurefire.failIfNoSpecifiedTests=false
 */
@EnabledIfSystemProperty(named = "sidecar.bench.long", matches = "true")
class LongSessionBench {
    private val sizes = (System.getProperty("sidecar.bench.sizes") ?: "56,1000,10000").split(",").map { it.trim().toInt() }
    private val modes = (System.getProperty("sidecar.bench.modes") ?: "paged,whole").split(",").map { it.trim() }

    /**
     * Times every task the EDT runs (wall time and the EDT's CPU time), the longest since [reset];
     * of the tasks over 50 ms, also the time the JVM's collectors took meanwhile and the time the
     * EDT was blocked on a monitor or waited: what is left of the wall time beyond these is the
     * EDT ready to run but not running (other processes on the cores).
     */
    private class TimedQueue : EventQueue() {
        private val cpu = ManagementFactory.getThreadMXBean().apply {
            if (isThreadContentionMonitoringSupported) isThreadContentionMonitoringEnabled = true
        }
        private val collectors = ManagementFactory.getGarbageCollectorMXBeans()

        private fun gcMs() = collectors.sumOf { it.collectionTime.coerceAtLeast(0) }

        /** The EDT's time blocked on monitors and waiting so far (ms; 0 where the JVM does not measure it). */
        private fun offCpuMs(): Long {
            val info = cpu.getThreadInfo(Thread.currentThread().id) ?: return 0
            return info.blockedTime.coerceAtLeast(0) + info.waitedTime.coerceAtLeast(0)
        }

        /** Of the tasks over 50 ms since [reset]: how many, and their wall, CPU, GC and blocked or waiting time (ms). */
        @Volatile var slowCount = 0

        @Volatile var slowWall = 0L

        @Volatile var slowCpu = 0L

        @Volatile var slowGc = 0L

        @Volatile var slowBlocked = 0L

        /** The EDT's CPU time in all tasks since [reset] (ns): the work, whatever the load. */
        @Volatile var totalCpu = 0L

        @Volatile var longest = 0L

        @Volatile var longestCpu = 0L

        /** The tasks over 50 ms (traced: or over 20 ms of CPU) since [reset]: wall and CPU time, what they ran. */
        val slow = mutableListOf<String>()

        /** Checked after every task: when it first holds, the time is noted. */
        @Volatile var until: (() -> Boolean)? = null

        @Volatile var metAt = 0L

        fun reset() {
            longest = 0L
            longestCpu = 0L
            slowCount = 0
            slowWall = 0L
            slowCpu = 0L
            slowGc = 0L
            slowBlocked = 0L
            totalCpu = 0L
            synchronized(slow) { slow.clear() }
        }

        fun remove() = pop()

        override fun dispatchEvent(event: AWTEvent) {
            val started = System.nanoTime()
            val startedCpu = cpu.currentThreadCpuTime
            val startedGc = gcMs()
            val startedOff = offCpuMs()
            try {
                super.dispatchEvent(event)
            } finally {
                val took = System.nanoTime() - started
                val tookCpu = cpu.currentThreadCpuTime - startedCpu
                if (took > longest) longest = took
                if (tookCpu > longestCpu) longestCpu = tookCpu
                totalCpu += tookCpu
                val over = took > 50_000_000
                if (over || (TRACE && tookCpu > TRACE_CPU_NS)) {
                    val gc = gcMs() - startedGc
                    val blocked = offCpuMs() - startedOff
                    if (over) {
                        slowCount++
                        slowWall += took / 1_000_000
                        slowCpu += tookCpu / 1_000_000
                        slowGc += gc
                        slowBlocked += blocked
                    }
                    synchronized(slow) {
                        // The time of day it started: a flight recording's samples of it are found by it.
                        val at = java.time.LocalTime.now().minusNanos(System.nanoTime() - started)
                        slow +=
                            "at $at, ${took / 1_000_000} ms (CPU ${tookCpu / 1_000_000} ms, GC $gc ms, blocked or waiting $blocked ms): " +
                            event.toString().take(160)
                    }
                }
            }
            val check = until
            if (check != null && metAt == 0L && check()) metAt = System.nanoTime()
        }
    }

    @Test
    fun `a long session opened and scrolled to its first entry`() {
        val results = mutableListOf<Map<String, Any?>>()
        Model.start().use { model ->
            for (size in sizes) {
                Sandbox(model).use { sandbox ->
                    val sessionId = sandbox.storeLongSession((size + 6) / 7)
                    // The JVM's first chat loads and compiles the panel's classes: not what is measured.
                    if (results.isEmpty()) open(sandbox, sandbox.storeLongSession(WARM_UP_COPIES), whole = false)
                    for (mode in modes) {
                        val result = open(sandbox, sessionId, whole = mode == "whole")
                        val row = linkedMapOf<String, Any?>("entries" to size, "mode" to mode) + result
                        println("LongSessionBench $row")
                        results += row
                    }
                }
            }
        }
        System.getProperty("sidecar.bench.out")?.let { Path.of(it).writeText(GsonBuilder().setPrettyPrinting().create().toJson(results)) }
    }

    private fun open(sandbox: Sandbox, sessionId: String, whole: Boolean): Map<String, Any?> {
        val client = sandbox.client(pageEntries = if (whole) 10_000_000 else 100)
        val (panel, frame) = onEdt {
            FlatLightLaf.setup()
            val panel = ChatPanel()
            if (whole) panel.transcriptView.wholeUpTo = Int.MAX_VALUE
            panel to JFrame("long session").apply {
                contentPane = panel
                setSize(640, 900)
                isVisible = true
            }
        }
        val queue = TimedQueue()
        onEdt { Toolkit.getDefaultToolkit().systemEventQueue.push(queue) }
        try {
            runBlocking { client.daemon() } // started before the clock: the resume is what is timed
            // The last entry of the conversation on screen, drawn whole.
            queue.until = {
                val keys = panel.transcript.keys
                keys.isNotEmpty() && AnswerView.rendering == 0 && panel.transcriptView.inSight(keys.last())
            }
            val started = System.nanoTime()
            val chat = runBlocking { client.resumeChat(sandbox.cwd, sessionId, listener = panel.listener) }
            onEdt { panel.attach(chat) }
            val resumed = System.nanoTime()
            val deadline = started + 600_000_000_000
            while (queue.metAt == 0L && System.nanoTime() < deadline) {
                EventQueue.invokeLater { } // a task after which the queue looks
                Thread.sleep(5)
            }
            check(queue.metAt != 0L) { "the last entry never came on screen" }
            settle()
            val openStall = queue.longest
            val openStallCpu = queue.longestCpu
            val openSlow = synchronized(queue.slow) { queue.slow.toList() }
            val lastOnScreen = queue.metAt - started
            // To the top: the wheel turned until the first entry is in sight and nothing older is left.
            queue.reset()
            val scrollStarted = System.nanoTime()
            var turns = 0
            while (System.nanoTime() < deadline) {
                val done = onEdt {
                    !panel.transcript.hasOlder && panel.transcriptView.scrollPane.viewport.viewPosition.y == 0 &&
                        panel.transcriptView.inSight(panel.transcript.keysInOrder.first())
                }
                if (done) break
                wheelUp(panel.transcriptView.scrollPane, 30)
                turns++
                Thread.sleep(16) // a wheel turned at the display's pace, not faster than a user can
            }
            val topMs = ms(System.nanoTime() - scrollStarted)
            settle()
            // Read before the bench's own look at the transcript (a list of every entry, made on the EDT).
            val topStall = queue.longest
            val topStallCpu = queue.longestCpu
            val topSlow = synchronized(queue.slow) { queue.slow.toList() }
            val topCpu = queue.totalCpu
            val topOver50 = linkedMapOf(
                "tasks" to queue.slowCount,
                "wall_ms" to queue.slowWall,
                "cpu_ms" to queue.slowCpu,
                "gc_ms" to queue.slowGc,
                "blocked_or_waiting_ms" to queue.slowBlocked,
            )
            val entries = onEdt { panel.transcript.entries.size }
            val drawn = onEdt { panel.transcriptView.viewCount }
            runBlocking { chat.close() }
            return linkedMapOf(
                "resume_answered_ms" to ms(resumed - started),
                "last_entry_on_screen_ms" to ms(lastOnScreen),
                "open_max_stall_ms" to ms(openStall),
                "open_max_stall_cpu_ms" to ms(openStallCpu),
                "to_top_ms" to topMs,
                "wheel_turns" to turns,
                "to_top_max_stall_ms" to ms(topStall),
                "to_top_max_stall_cpu_ms" to ms(topStallCpu),
                "to_top_edt_cpu_ms" to ms(topCpu),
                // The tasks over 50 ms while scrolling: where their wall time went.
                "to_top_over_50ms" to topOver50,
                "entries_loaded" to entries,
                "views_at_top" to drawn,
            ).also {
                if (TRACE) {
                    openSlow.forEach { println("LongSessionBench trace open: $it") }
                    topSlow.forEach { println("LongSessionBench trace to top: $it") }
                }
            }
        } finally {
            onEdt { queue.remove() }
            client.close()
            onEdt {
                frame.dispose()
                panel.dispose()
            }
        }
    }

    private fun ms(nanos: Long): Double = Math.round(nanos / 1e4) / 100.0

    private companion object {
        /** `-Dsidecar.bench.trace=true`: prints the EDT's tasks over 50 ms (or over [TRACE_CPU_NS] of CPU) while opening and scrolling. */
        val TRACE = System.getProperty("sidecar.bench.trace") == "true"

        /** A task that took this much of the EDT's CPU (ns) is traced whatever its wall time: the work, not the load. */
        const val TRACE_CPU_NS = 20_000_000L

        /** The session of the unmeasured first chat: 105 entries, paged in two pages. */
        const val WARM_UP_COPIES = 15
    }
}
