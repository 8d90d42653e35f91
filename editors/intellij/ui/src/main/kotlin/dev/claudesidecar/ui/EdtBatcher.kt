package dev.claudesidecar.ui

import javax.swing.SwingUtilities

/**
 * Hands items offered on any thread to [deliver] on the EDT in batches, in the order offered:
 * everything that arrived while the EDT was busy goes in one task (at most [most] items, the
 * rest in the next task), so a burst of a chat's events costs one application, one layout and
 * one paint instead of one per event, and the user's keys are not queued behind a task per
 * event. An idle EDT gets each item in a task of its own, as soon as it comes: nothing waits
 * for a timer, so the end of a turn is never held back.
 *
 * [schedule] runs a task on the EDT later (tests pass their own to run it when they choose).
 */
internal class EdtBatcher<T>(
    private val most: Int = MOST,
    private val schedule: (Runnable) -> Unit = SwingUtilities::invokeLater,
    private val deliver: (List<T>) -> Unit,
) {
    private val lock = Any()
    private var waiting = ArrayList<T>()

    /** Whether a task that takes [waiting] is scheduled and has not taken it yet. */
    private var scheduled = false

    /** Adds [item] to the next batch; schedules that batch's task unless one is. Any thread. */
    fun offer(item: T) {
        val start = synchronized(lock) {
            waiting += item
            !scheduled.also { scheduled = true }
        }
        if (start) schedule(::drain)
    }

    private fun drain() {
        var rest = false
        val batch = synchronized(lock) {
            val all = waiting
            if (all.size <= most) {
                waiting = ArrayList()
                scheduled = false
                all
            } else {
                // The rest goes in a task of its own (scheduled stays true: offers add to it).
                rest = true
                waiting = ArrayList(all.subList(most, all.size))
                ArrayList(all.subList(0, most))
            }
        }
        try {
            if (batch.isNotEmpty()) deliver(batch)
        } finally {
            if (rest) schedule(::drain)
        }
    }

    private companion object {
        /**
         * Items per task: a catch-up of thousands of events (an attach after a dropped
         * connection) is applied a few hundred at a time, with the EDT free between.
         */
        const val MOST = 256
    }
}
