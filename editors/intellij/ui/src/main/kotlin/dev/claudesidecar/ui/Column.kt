package dev.claudesidecar.ui

import java.awt.Component
import java.awt.Container
import java.awt.Dimension
import java.awt.LayoutManager
import java.awt.Rectangle
import javax.swing.JPanel
import javax.swing.Scrollable
import javax.swing.SwingConstants

/**
 * Stacks children top to bottom at the container's full width, each as tall as it wants to
 * be *at that width*. Swing's own layouts ask a wrapping text component for its preferred
 * size before giving it a width, so HTML and wrapped text come out one line tall or
 * unwrapped; this layout sizes the width first, then asks for the height.
 */
class ColumnLayout(private val gap: Int = 0) : LayoutManager {
    override fun addLayoutComponent(name: String?, comp: Component?) = Unit
    override fun removeLayoutComponent(comp: Component?) = Unit
    override fun minimumLayoutSize(parent: Container): Dimension = preferredLayoutSize(parent).also { it.width = 0 }

    override fun preferredLayoutSize(parent: Container): Dimension {
        val insets = parent.insets
        val width = parent.width - insets.left - insets.right
        val visible = parent.components.filter { it.isVisible }
        val height = visible.sumOf { heightAt(it, width) } + gap * (visible.size - 1).coerceAtLeast(0)
        val prefWidth = if (width > 0) width else visible.maxOfOrNull { it.preferredSize.width } ?: 0
        return Dimension(prefWidth + insets.left + insets.right, height + insets.top + insets.bottom)
    }

    override fun layoutContainer(parent: Container) {
        val insets = parent.insets
        val width = parent.width - insets.left - insets.right
        var y = insets.top
        for (child in parent.components.filter { it.isVisible }) {
            val height = heightAt(child, width)
            child.setBounds(insets.left, y, width, height)
            y += height + gap
        }
    }

    private fun heightAt(child: Component, width: Int): Int {
        if (width <= 0) return child.preferredSize.height
        // Text components compute their preferred height for their current width.
        if (child.width != width || child.height <= 0) child.setSize(width, child.height.coerceAtLeast(TALL))
        return child.preferredSize.height
    }

    private companion object {
        const val TALL = 10_000
    }
}

/** A [ColumnLayout] panel. */
open class Column(gap: Int = 0) : JPanel(ColumnLayout(gap)) {
    init {
        isOpaque = false
    }
}

/** The content of a vertical scroll pane: as wide as the viewport, as tall as its column. */
open class ScrollableColumn(gap: Int) :
    Column(gap),
    Scrollable {
    override fun getPreferredScrollableViewportSize(): Dimension = preferredSize
    override fun getScrollableUnitIncrement(visibleRect: Rectangle, orientation: Int, direction: Int) = 24
    override fun getScrollableBlockIncrement(visibleRect: Rectangle, orientation: Int, direction: Int) =
        if (orientation == SwingConstants.VERTICAL) visibleRect.height - 24 else visibleRect.width
    override fun getScrollableTracksViewportWidth() = true
    override fun getScrollableTracksViewportHeight() = false
}
