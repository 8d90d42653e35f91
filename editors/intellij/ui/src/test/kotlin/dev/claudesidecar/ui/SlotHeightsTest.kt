package dev.claudesidecar.ui

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import kotlin.random.Random

/** The windowed transcript's row heights: tops and the rows at a height, as a walk over the rows finds them. */
class SlotHeightsTest {
    /** The tops a walk over [rows] gives (and, last, the bottom of the last row). */
    private fun walkedTops(rows: List<Int>): List<Int> = rows.runningFold(0) { top, height -> top + height }

    /** The first row whose bottom passes [test], found by a walk; the last row when none does. */
    private fun walkedRow(rows: List<Int>, test: (Int) -> Boolean): Int {
        val tops = walkedTops(rows)
        return rows.indices.firstOrNull { test(tops[it + 1]) } ?: rows.lastIndex
    }

    private fun assertSameAsWalk(heights: SlotHeights, rows: List<Int>) {
        assertEquals(rows.size, heights.size)
        assertEquals(walkedTops(rows), (0..rows.size).map(heights::top))
        for (y in listOf(-5, 0, 1, 29, 30, 31, rows.sum() / 2, rows.sum() - 1, rows.sum(), rows.sum() + 7)) {
            assertEquals(walkedRow(rows) { it > y }, heights.rowBelow(y), "the row below $y")
            assertEquals(walkedRow(rows) { it >= y }, heights.rowReaching(y), "the row reaching $y")
        }
    }

    @Test
    fun `tops and rows at a height are those a walk over the rows finds, after changes, rows put in front and zero heights`() {
        val random = Random(43)
        val rows = MutableList(200) { if (it % 7 == 0) 0 else random.nextInt(10, 60) }
        val heights = SlotHeights().apply { reset(rows.size) { rows[it] } }
        assertSameAsWalk(heights, rows)
        for (i in listOf(150, 3, 199)) {
            rows[i] = 100
            heights[i] = 100
            assertSameAsWalk(heights, rows)
        }
        repeat(3) {
            val page = List(90) { random.nextInt(0, 80) }
            rows.addAll(0, page)
            heights.insertFront(page.size) { page[it] }
            assertSameAsWalk(heights, rows)
        }
        assertEquals(rows.sum(), heights.total)
        assertEquals(rows.subList(10, 50).sum(), heights.between(10, 50))
    }
}
