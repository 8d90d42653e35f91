package dev.claudesidecar.ui

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

// How a chat's events reach the EDT: in batches, in order, none lost. The EDT is stood in for
// by a list of scheduled tasks the test runs when it chooses.

class EdtBatcherTest {
    private val tasks = ArrayDeque<Runnable>()
    private val batches = mutableListOf<List<Int>>()

    private fun batcher(most: Int = 256) = EdtBatcher<Int>(most, { tasks.addLast(it) }) { batches += it }

    private fun runTasks() {
        while (tasks.isNotEmpty()) tasks.removeFirst().run()
    }

    @Test
    fun `items offered before the EDT gets to them are delivered in one batch, in order`() {
        val b = batcher()
        (1..5).forEach(b::offer)
        assertEquals(1, tasks.size, "one task for the batch, not one per item")
        runTasks()
        assertEquals(listOf(listOf(1, 2, 3, 4, 5)), batches)
    }

    @Test
    fun `an item offered while a batch is delivered goes in the next batch`() {
        var offeredDuring = false
        lateinit var b: EdtBatcher<Int>
        b = EdtBatcher(256, { tasks.addLast(it) }) { batch ->
            batches += batch
            if (!offeredDuring) {
                offeredDuring = true
                b.offer(3)
            }
        }
        b.offer(1)
        b.offer(2)
        runTasks()
        assertEquals(listOf(listOf(1, 2), listOf(3)), batches)
    }

    @Test
    fun `a long burst is delivered a few items at a time, in order, with a task for the rest`() {
        val b = batcher(most = 4)
        (1..10).forEach(b::offer)
        tasks.removeFirst().run()
        assertEquals(listOf(listOf(1, 2, 3, 4)), batches)
        assertEquals(1, tasks.size, "the rest waits in a task of its own, after whatever came meanwhile")
        b.offer(11)
        runTasks()
        assertEquals(listOf(listOf(1, 2, 3, 4), listOf(5, 6, 7, 8), listOf(9, 10, 11)), batches)
    }

    @Test
    fun `a batch that fails to be shown does not stop the ones after it`() {
        val b = EdtBatcher<Int>(2, { tasks.addLast(it) }) { batch ->
            batches += batch
            check(batch != listOf(1, 2)) { "a view failed" }
        }
        (1..3).forEach(b::offer)
        runCatching { tasks.removeFirst().run() }
        runTasks()
        assertEquals(listOf(listOf(1, 2), listOf(3)), batches)
    }

    @Test
    fun `items offered from another thread while batches are delivered all arrive once, in order`() {
        val edt = Executors.newSingleThreadExecutor()
        val delivered = mutableListOf<Int>() // touched by the one delivering thread only
        val b = EdtBatcher<Int>(64, { edt.execute(it) }) { delivered += it }
        val producer = Thread { (1..20_000).forEach(b::offer) }
        producer.start()
        producer.join()
        // Each no-op task runs after every task scheduled before it (a drain schedules the
        // next for what it left): run them until nothing is left to deliver.
        var count = 0
        repeat(20_000) { if (count < 20_000) count = edt.submit<Int> { delivered.size }.get() }
        edt.shutdown()
        assertTrue(edt.awaitTermination(60, TimeUnit.SECONDS))
        assertEquals(20_000, delivered.size)
        assertTrue(delivered == (1..20_000).toList(), "in the order offered")
    }
}
