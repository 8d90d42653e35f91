package dev.claudesidecar.ui

/**
 * The heights of a windowed list's rows, in order, and where each row's top is: kept in int
 * arrays, so that a window over a hundred thousand rows finds its rows (a binary search) and
 * the height of those above and below it (a difference of running sums) without a walk over
 * the rows. A changed height makes the running sums from it on stale; they are summed again,
 * in one pass over an int array, when next read. Rows of an older page go in front, new ones
 * after the others.
 */
class SlotHeights {
    private var heights = IntArray(INITIAL)

    /** `sums[i]`: the height of the rows before row i; correct up to [summedTo]. */
    private var sums = IntArray(INITIAL + 1)
    private var summedTo = 0

    /** How many rows. */
    var size = 0
        private set

    /** The height of all rows. */
    val total: Int get() = top(size)

    /** Row [i]'s height. */
    operator fun get(i: Int): Int = heights[i]

    /** Sets row [i]'s height. */
    operator fun set(i: Int, height: Int) {
        if (heights[i] == height) return
        heights[i] = height
        if (i < summedTo) summedTo = i
    }

    /** Makes the rows [count] rows, row i [height] (i) tall. */
    fun reset(count: Int, height: (Int) -> Int) {
        ensure(count)
        for (i in 0 until count) heights[i] = height(i)
        size = count
        summedTo = 0
    }

    /** Puts [count] rows in front of the others, row i (of the new ones) [height] (i) tall. */
    fun insertFront(count: Int, height: (Int) -> Int) {
        if (count == 0) return
        ensure(size + count)
        System.arraycopy(heights, 0, heights, count, size)
        for (i in 0 until count) heights[i] = height(i)
        size += count
        summedTo = 0
    }

    /** Puts [count] rows after the others, row i (of the new ones) [height] (i) tall. */
    fun append(count: Int, height: (Int) -> Int) {
        ensure(size + count)
        for (i in 0 until count) heights[size + i] = height(i)
        size += count
    }

    /** The top of row [i] (the height of the rows before it); [size] gives the bottom of the last. */
    fun top(i: Int): Int {
        if (i > summedTo) {
            var sum = sums[summedTo]
            for (j in summedTo until i) {
                sum += heights[j]
                sums[j + 1] = sum
            }
            summedTo = i
        }
        return sums[i]
    }

    /** The height of rows [from] until [to]. */
    fun between(from: Int, to: Int): Int = top(to) - top(from)

    /** The first row whose bottom is below [y] (the row at [y]); the last row when none is. */
    fun rowBelow(y: Int): Int = firstBottom { bottom -> bottom > y }

    /** The first row whose bottom reaches [y]; the last row when none does. */
    fun rowReaching(y: Int): Int = firstBottom { bottom -> bottom >= y }

    /** The first row whose bottom passes [test] (bottoms only grow); the last row when none does. */
    private inline fun firstBottom(test: (Int) -> Boolean): Int {
        if (size == 0) return 0
        top(size)
        var low = 0
        var high = size - 1
        while (low < high) {
            val mid = (low + high) ushr 1
            if (test(sums[mid + 1])) high = mid else low = mid + 1
        }
        return low
    }

    private fun ensure(count: Int) {
        if (count <= heights.size) return
        val capacity = maxOf(count, heights.size * 2)
        heights = heights.copyOf(capacity)
        sums = sums.copyOf(capacity + 1)
    }

    private companion object {
        const val INITIAL = 64
    }
}
