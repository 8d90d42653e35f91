package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import com.google.gson.GsonBuilder
import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.ChatListener
import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.protocol.DeltaKind
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.InitializationOptions
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.TurnEndedNotification
import dev.claudesidecar.core.protocol.WarmPoolOptions
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.condition.EnabledIfSystemProperty
import java.awt.AWTEvent
import java.awt.BorderLayout
import java.awt.EventQueue
import java.awt.Toolkit
import java.awt.event.KeyEvent
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path
import javax.swing.JComponent
import javax.swing.JFrame
import javax.swing.JScrollPane
import javax.swing.JTextArea
import javax.swing.SwingUtilities
import javax.swing.text.DefaultCaret
import kotlin.io.path.readLines
import kotlin.io.path.writeText

/**
 * How the chat panel copes with a long answer streamed at full speed (issue 25, point 5;
 * bench (i), which bench/editor_swing.py runs). The real daemon and CLI against the stand-in
 * model, which streams a ~60 KB markdown answer in 20-character deltas as fast as it can (the
 * daemon coalesces them into a few dozen notifications). From the first delta to
 * `claude/turnEnded` a key is typed into the prompt every 25 ms. Measured per turn:
 *
 * - stall: the longest task the EDT ran from the prompt to the end on screen, timed by an
 *   event queue around each dispatch (wall time, and the EDT's CPU time, which other
 *   processes on the cores do not inflate);
 * - key echo: from a key press queued on the EDT (as the toolkit queues one) to the end of
 *   the paint that follows its insertion; median and max;
 * - end drawn: from the daemon's send of `claude/turnEnded` to the end of the paint after
 *   which the answer's last line is in the view, scrolled into sight. The daemon runs under
 *   bench/send_clock.py, which stamps each turnEnded frame as the daemon writes it (the same
 *   monotonic clock as [System.nanoTime]), however late the client reads it; the time from
 *   that send to the panel's listener is reported too (`listener_lag_ms`).
 *
 * Peer, in the same JVM and the same panel: the cheapest renderer of the stream, each text
 * delta appended to a plain JTextArea in the transcript's place (no entry drawn). The first
 * turn of each runs on a cold JVM and is reported apart. A benchmark, not a test: it asserts
 * nothing and runs only with `-Dsidecar.bench=true`; `-Dsidecar.bench.chars` (60000) and
 * `-Dsidecar.bench.rounds` (3 warm turns of each) size it, and `-Dsidecar.bench.out` names
 * a JSON file for its figures; `-Dsidecar.bench.trace=true` prints the EDT's tasks over 15 ms
 * (wall and CPU time, what they ran) and when the turn's end reached the listener and the screen:
 *
 *     xvfb-run -a mvn -q -B test -pl ui -am -Dtest=StreamingBench -Dsidecar.bench=true -Dsurefire.failIfNoSpecifiedTests=false
 */
@EnabledIfSystemProperty(named = "sidecar.bench", matches = "true")
class StreamingBench {
    private val chars = System.getProperty("sidecar.bench.chars")?.toInt() ?: 60_000
    private val rounds = System.getProperty("sidecar.bench.rounds")?.toInt() ?: 3

    @Test
    fun `a 60 KB answer streamed at full speed`() {
        val answer = longAnswer(chars)
        val scenario = mapOf(
            "rules" to listOf(mapOf("match" to "(?i)long", "steps" to listOf(listOf(mapOf("text" to answer))))),
            "default" to listOf(listOf(mapOf("text" to "ok"))),
            "chunk" to 20,
            "delay" to 0,
        )
        val turns = mapOf("panel" to mutableListOf<Map<String, Any?>>(), "peer" to mutableListOf())
        val stamps = Files.createTempFile("send-clock-", ".txt")
        Model.startScenario(GsonBuilder().create().toJson(scenario)).use { model ->
            Sandbox(model).use { sandbox ->
                // Deltas coalesced as the IDE plugin asks for them (ClaudeService).
                val client = sandbox.client(
                    command =
                    listOf(Harness.consoleScript.resolveSibling("python").toString(), SEND_CLOCK.toString(), stamps.toString(), "--") +
                        listOf(Harness.sidecarBin.toString(), "--stdio"),
                    initializationOptions = InitializationOptions(coalesceDeltasMs = 16, warmPool = WarmPoolOptions(size = 0)),
                )
                try {
                    repeat(rounds + 1) { round ->
                        for ((renderer, results) in turns) {
                            val result = turn(client, sandbox.cwd, peer = renderer == "peer", stamps)
                            println("StreamingBench ${if (round == 0) "cold" else "round $round"} $renderer: $result")
                            results += result
                        }
                    }
                } finally {
                    client.close()
                    Files.deleteIfExists(stamps)
                }
            }
        }
        val report = mapOf(
            "answer_chars" to answer.length,
            "cold" to turns.mapValues { it.value.first() },
            "repeats" to turns.mapValues { it.value.drop(1) },
        )
        System.getProperty("sidecar.bench.out")?.let { Path.of(it).writeText(GsonBuilder().setPrettyPrinting().create().toJson(report)) }
    }

    /**
     * An event queue that times every task the EDT runs, in wall time and in the EDT's CPU
     * time, and notes when the answer's end is drawn: once [ended] and the task after which
     * [endShown] holds is done, the paint it queued runs next.
     */
    private class TimedQueue(private val endShown: () -> Boolean) : EventQueue() {
        private val cpu = ManagementFactory.getThreadMXBean()
        val tasks = mutableListOf<Long>()

        /** With [TRACE]: the tasks over 15 ms and all after [ended], when they started, how long they took, what they were. */
        val long = mutableListOf<Triple<Long, Long, String>>()
        var longestCpu = 0L
        var busyCpu = 0L

        @Volatile var ended = false

        @Volatile var drawnAt = 0L
        private var seen = false

        /** Gives the EDT back to the queue this one replaced. */
        fun remove() = pop()

        override fun dispatchEvent(event: AWTEvent) {
            val started = System.nanoTime()
            val startedCpu = cpu.currentThreadCpuTime
            try {
                super.dispatchEvent(event)
            } finally {
                tasks += System.nanoTime() - started
                val tookCpu = cpu.currentThreadCpuTime - startedCpu
                val took = System.nanoTime() - started
                if (TRACE &&
                    (took > 15_000_000 || (ended && drawnAt == 0L))
                ) {
                    long +=
                        Triple(started, took, "CPU ${ms(tookCpu)} ms: ${event.toString().take(240)}")
                }
                busyCpu += tookCpu
                if (tookCpu > longestCpu) longestCpu = tookCpu
            }
            if (ended && !seen && endShown()) {
                seen = true
                invokeLater { drawnAt = System.nanoTime() }
            }
        }
    }

    /** What the listener saw of the stream, on core's event thread; read on the bench's. */
    private class Seen {
        @Volatile var firstDelta = 0L

        @Volatile var ended = 0L

        @Volatile var notifications = 0

        /** When the answer's entry came finished (no longer streaming). */
        @Volatile var finished = 0L
    }

    /** One turn of the long answer into a new panel, or into the peer's text area in one. */
    private fun turn(client: SidecarClient, cwd: String, peer: Boolean, stamps: Path): Map<String, Any?> {
        lateinit var area: JTextArea
        val (panel, frame) = onEdt {
            FlatLightLaf.setup()
            val panel = ChatPanel()
            if (peer) {
                area = JTextArea().apply {
                    lineWrap = true
                    isEditable = false
                    (caret as DefaultCaret).updatePolicy = DefaultCaret.ALWAYS_UPDATE // follows the end
                }
                panel.remove((panel.layout as BorderLayout).getLayoutComponent(BorderLayout.CENTER))
                panel.add(JScrollPane(area), BorderLayout.CENTER)
            }
            panel to JFrame("bench").apply {
                contentPane = panel
                setSize(640, 900)
                isVisible = true
            }
        }
        val endShown = if (peer) {
            { area.text.endsWith(LAST_LINE) && bottomInSight(area) }
        } else {
            { find<MarkdownView>(panel).lastOrNull { it.plainText.contains(LAST_LINE) }?.let(::bottomInSight) == true }
        }
        val queue = TimedQueue(endShown)
        val seen = Seen()
        val render = if (peer) plainRenderer(area) else panel.listener
        val listener = ChatListener { event ->
            when (val params = (event as? ChatEvent.Notification)?.params) {
                is DeltaNotification -> {
                    seen.notifications++
                    if (seen.firstDelta == 0L) seen.firstDelta = System.nanoTime()
                }
                is EntryNotification -> if (params.entry.let { it is TextEntry && it.streaming != true }) seen.finished = System.nanoTime()
                is TurnEndedNotification -> {
                    seen.ended = System.nanoTime()
                    queue.ended = true
                    EventQueue.invokeLater { } // an EDT task after which the queue looks, should nothing else come
                }
                else -> Unit
            }
            render.onEvent(event)
        }
        val chat = runBlocking { client.openChat(NewChannelParams(cwd), listener) }
        val prompt = panel.prompt.text
        onEdt {
            panel.attach(chat)
            prompt.requestFocusInWindow()
        }
        Toolkit.getDefaultToolkit().systemEventQueue.push(queue)
        val sent = System.nanoTime()
        runBlocking { chat.send("write the long answer") }
        val echoes = mutableListOf<Long>()
        val deadline = sent + 120_000_000_000
        while (seen.firstDelta == 0L && seen.ended == 0L && System.nanoTime() < deadline) Thread.sleep(1)
        var typed = 0
        while (seen.ended == 0L && System.nanoTime() < deadline) {
            val key = "abcdefghij"[typed++ % 10]
            val posted = System.nanoTime()
            EventQueue.invokeLater {
                prompt.dispatchEvent(KeyEvent(prompt, KeyEvent.KEY_TYPED, System.currentTimeMillis(), 0, KeyEvent.VK_UNDEFINED, key))
                // Queued after the paint the insertion asked for.
                EventQueue.invokeLater { synchronized(echoes) { echoes += System.nanoTime() - posted } }
            }
            Thread.sleep(KEY_MS)
        }
        while (queue.drawnAt == 0L && System.nanoTime() < deadline) Thread.sleep(1)
        val shown = onEdt { endShown() }
        queue.remove()
        val echoed = onEdt { prompt.text.length }
        runBlocking { chat.close() }
        onEdt {
            frame.dispose()
            panel.dispose()
        }
        check(seen.ended != 0L && queue.drawnAt != 0L) {
            "the turn did not end, or its end was never drawn: ${seen.notifications} deltas, ended ${seen.ended != 0L}, end shown $shown"
        }
        // This turn's turnEnded as the daemon sent it: the one stamp after the prompt was sent.
        val endSent = stamps.readLines().map { it.trim().toLong() }.single { it > sent }
        val tasks = queue.tasks.sorted()
        if (TRACE) {
            // Times from the daemon's send of turnEnded.
            val name = if (peer) "peer" else "panel"
            for ((at, took, what) in queue.long) {
                println(
                    "StreamingBench trace $name: task at ${ms(at - endSent)} ms took ${ms(took)} ms, $what",
                )
            }
            println(
                "StreamingBench trace $name: prompt ${ms(
                    sent - endSent,
                )} ms, answer finished ${ms(
                    seen.finished - endSent,
                )} ms, listener ${ms(seen.ended - endSent)} ms, end drawn ${ms(queue.drawnAt - endSent)} ms",
            )
        }
        val keys = synchronized(echoes) { echoes.sorted() }
        return linkedMapOf(
            "stream_s" to ms(seen.ended - sent) / 1000,
            "notifications" to seen.notifications,
            "max_stall_ms" to ms(tasks.last()),
            "max_stall_cpu_ms" to ms(queue.longestCpu),
            "stalls_over_50ms" to tasks.count { it > 50_000_000 },
            "edt_busy_ms" to ms(tasks.sum()),
            "edt_busy_cpu_ms" to ms(queue.busyCpu),
            "key_echo_median_ms" to keys.getOrNull(keys.size / 2)?.let(::ms),
            "key_echo_max_ms" to keys.lastOrNull()?.let(::ms),
            "keys" to keys.size,
            "keys_in_prompt" to echoed,
            "end_on_screen_ms" to ms(queue.drawnAt - endSent),
            "listener_lag_ms" to ms(seen.ended - endSent),
        )
    }

    /** Whether the bottom of [c] (where the answer ends) is inside the scrolled view. EDT only. */
    private fun bottomInSight(c: JComponent): Boolean {
        val sight = c.visibleRect
        return c.isShowing && !sight.isEmpty && sight.y + sight.height >= c.height - 2
    }

    /** The peer: each text delta appended to [area], nothing else drawn. */
    private fun plainRenderer(area: JTextArea) = ChatListener { event ->
        val delta = (event as? ChatEvent.Notification)?.params as? DeltaNotification
        if (delta?.kind == DeltaKind.TEXT) SwingUtilities.invokeLater { area.append(delta.text) }
    }

    /** About [size] characters of the markdown a model writes: headings, paragraphs, lists, code blocks. */
    private fun longAnswer(size: Int): String = buildString {
        var section = 1
        while (length < size) {
            append("## Section $section\n\n")
            append("This paragraph explains step $section in some detail, with `inline code`, **bold** words and a ")
            append("[link](https://example.com/$section). It is long enough to wrap across the width of the chat panel twice.\n\n")
            append("- first point of $section\n- second point, with `code`\n- third point\n\n")
            append("```kotlin\nfun step$section(x: Int): Int {\n    val y = x * $section\n    return y + 1\n}\n```\n\n")
            append("1. Run the tests.\n2. Read the output.\n3. Fix what failed.\n\n")
            section++
        }
        append(LAST_LINE)
    }

    private companion object {
        const val LAST_LINE = "That is the end of the long answer."
        const val KEY_MS = 25L

        /** The relay that stamps the daemon's sends of turnEnded (bench/send_clock.py). */
        val SEND_CLOCK: Path get() = Harness.repoRoot.resolve("bench/send_clock.py")

        /** `-Dsidecar.bench.trace=true`: prints each EDT task over 15 ms and when the end came, per turn. */
        val TRACE = System.getProperty("sidecar.bench.trace") == "true"

        /** [nanos] in milliseconds, to the hundredth. */
        fun ms(nanos: Long): Double = Math.round(nanos / 1e4) / 100.0
    }
}
