package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.awt.AWTEvent
import java.awt.EventQueue
import java.awt.Toolkit
import java.lang.management.ManagementFactory
import java.util.Locale
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicBoolean
import javax.swing.JFrame
import javax.swing.SwingUtilities

/**
 * How the panel copes with a long answer streamed at full speed (issue 25, point 5): a ~60 KB
 * markdown answer as ~3,000 deltas coalesced into [NOTIFICATIONS] notifications over about a
 * second, then its final entry and its footer. Measures the longest EDT task (an event queue
 * that times each dispatch), how late a probe posted every frame runs (what a key press would
 * wait), and when the answer's end is drawn after the footer arrives. A benchmark, not a
 * test: it asserts nothing and runs only with `-Dsidecar.bench=true`:
 *
 *     xvfb-run -a mvn -q -B test -Dtest=StreamingBench -Dsidecar.bench=true -Dsurefire.failIfNoSpecifiedTests=false
 */
@EnabledIfSystemProperty(named = "sidecar.bench", matches = "true")
class StreamingBench {
    @Test
    fun `a 60 KB answer streamed at full speed`() {
        val answer = longAnswer()
        val pieces = answer.chunked(answer.length / NOTIFICATIONS + 1)
        repeat(ROUNDS) { round ->
            val result = stream(answer, pieces)
            println(
                String.format(
                    Locale.ROOT,
                    "StreamingBench round %d: %d chars in %d notifications over %d ms; longest EDT task %.1f ms " +
                        "(%.1f ms CPU); EDT busy %.0f ms (%.0f ms CPU); probe lag median %.1f ms, max %.1f ms; " +
                        "end drawn %.1f ms after the footer",
                    round + 1, answer.length, pieces.size, result.streamMs, result.longestTaskMs, result.longestCpuMs,
                    result.busyMs, result.busyCpuMs, result.medianLagMs, result.maxLagMs, result.endMs,
                ),
            )
        }
    }

    private class Result(
        val streamMs: Long,
        val longestTaskMs: Double,
        val busyMs: Double,
        val longestCpuMs: Double,
        val busyCpuMs: Double,
        val medianLagMs: Double,
        val maxLagMs: Double,
        val endMs: Double,
    )

    /**
     * An event queue that times every task the EDT runs, in wall time and in the EDT's CPU
     * time (which other processes competing for the cores do not inflate).
     */
    private class TimedQueue : EventQueue() {
        private val cpu = ManagementFactory.getThreadMXBean()

        @Volatile var longest = 0L

        @Volatile var busy = 0L

        @Volatile var longestCpu = 0L

        @Volatile var busyCpu = 0L

        /** Gives the EDT back to the queue this one replaced. */
        fun remove() = pop()

        override fun dispatchEvent(event: AWTEvent) {
            val started = System.nanoTime()
            val startedCpu = cpu.currentThreadCpuTime
            try {
                super.dispatchEvent(event)
            } finally {
                val took = System.nanoTime() - started
                busy += took
                if (took > longest) longest = took
                val tookCpu = cpu.currentThreadCpuTime - startedCpu
                busyCpu += tookCpu
                if (tookCpu > longestCpu) longestCpu = tookCpu
            }
        }
    }

    private fun stream(answer: String, pieces: List<String>): Result {
        lateinit var panel: ChatPanel
        lateinit var frame: JFrame
        onEdt {
            FlatLightLaf.setup()
            panel = ChatPanel()
            frame = JFrame("bench").apply {
                contentPane = panel
                setSize(640, 900)
                isVisible = true
            }
        }
        var seq = 0
        fun entry(entry: Entry) = panel.listener.onEvent(ChatEvent.Notification("claude/entry", EntryNotification("ch-1", entry, ++seq)))
        entry(PromptEntry(id = "p1", text = "a long answer please"))
        entry(TextEntry(id = "m:0", text = "", streaming = true))
        onEdt { }
        val queue = TimedQueue()
        Toolkit.getDefaultToolkit().systemEventQueue.push(queue)
        val lags = mutableListOf<Long>()
        val probing = AtomicBoolean(true)
        val prober = Thread {
            while (probing.get()) {
                val posted = System.nanoTime()
                val ran = CountDownLatch(1)
                SwingUtilities.invokeLater {
                    synchronized(lags) { lags += System.nanoTime() - posted }
                    ran.countDown()
                }
                ran.await()
                Thread.sleep(FRAME_MS)
            }
        }.apply { start() }
        val started = System.nanoTime()
        for (piece in pieces) {
            panel.listener.onEvent(
                ChatEvent.Notification("claude/delta", DeltaNotification("ch-1", 0, DeltaKind.TEXT, ++seq, piece, entryId = "m:0")),
            )
            Thread.sleep(STREAM_MS / pieces.size)
        }
        entry(TextEntry(id = "m:0", text = answer))
        val footerAt = System.nanoTime()
        entry(TurnEntry(costUsd = 0.5, durationMs = 1100, id = "turn:1", outcome = TurnOutcome.SUCCESS, permissionWaitMs = 0))
        // The end is on screen once the EDT has handled the footer and painted what it changed.
        val drawn = CountDownLatch(1)
        SwingUtilities.invokeLater { SwingUtilities.invokeLater { drawn.countDown() } }
        drawn.await()
        val endMs = (System.nanoTime() - footerAt) / 1e6
        val streamMs = (footerAt - started) / 1_000_000
        probing.set(false)
        prober.join()
        queue.remove()
        onEdt {
            frame.dispose()
            panel.dispose()
        }
        val sorted = synchronized(lags) { lags.sorted() }
        return Result(
            streamMs,
            queue.longest / 1e6,
            queue.busy / 1e6,
            queue.longestCpu / 1e6,
            queue.busyCpu / 1e6,
            sorted[sorted.size / 2] / 1e6,
            sorted.last() / 1e6,
            endMs,
        )
    }

    /** ~60 KB of the markdown a model writes: headings, paragraphs, lists, code blocks. */
    private fun longAnswer(): String = buildString {
        var section = 1
        while (length < 60_000) {
            append("## Section $section\n\n")
            append("This paragraph explains step $section in some detail, with `inline code`, **bold** words and a ")
            append("[link](https://example.com/$section). It is long enough to wrap across the width of the chat panel twice.\n\n")
            append("- first point of $section\n- second point, with `code`\n- third point\n\n")
            append("```kotlin\nfun step$section(x: Int): Int {\n    val y = x * $section\n    return y + 1\n}\n```\n\n")
            append("1. Run the tests.\n2. Read the output.\n3. Fix what failed.\n\n")
            section++
        }
    }

    private companion object {
        const val NOTIFICATIONS = 45
        const val STREAM_MS = 1_000L
        const val FRAME_MS = 16L
        const val ROUNDS = 3
    }
}
