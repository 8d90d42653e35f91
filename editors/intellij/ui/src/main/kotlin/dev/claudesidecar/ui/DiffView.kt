package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Dimension
import java.awt.Graphics
import java.awt.Shape
import javax.swing.BorderFactory
import javax.swing.JScrollPane
import javax.swing.JTextArea
import javax.swing.ScrollPaneConstants
import javax.swing.text.DefaultCaret
import javax.swing.text.Highlighter
import javax.swing.text.JTextComponent

/**
 * A unified diff as the IDE shows one: added lines on green, removed lines on red, hunk
 * headers in blue, in the editor font; selectable, and scrolled sideways rather than wrapped
 * (code lines keep their shape). The `---`/`+++` file header is left out: the card names the file.
 */
class DiffView(
    diff: String,
    maxVisibleLines: Int = 20,
) : JScrollPane() {
    /** The text shown, for tests. */
    val area = JTextArea()

    init {
        val lines = diff.trimEnd('\n').split('\n').filterNot { it.startsWith("--- ") || it.startsWith("+++ ") }
        // The caret stays at the start before the text goes in: a caret at the end of the text
        // would scroll the view to the end of the longest last line, the `@@` header out of sight.
        (area.caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
        area.text = lines.joinToString("\n")
        area.caretPosition = 0
        area.isEditable = false
        area.font = Theme.monoFont
        area.background = Theme.codeBackground
        area.foreground = Theme.foreground
        area.border = BorderFactory.createEmptyBorder(4, 6, 4, 6)
        lines.forEachIndexed { i, line ->
            val colour = when {
                line.startsWith("+") -> Theme.addedBackground
                line.startsWith("-") -> Theme.removedBackground
                else -> null
            }
            if (colour != null) area.highlighter.addHighlight(area.getLineStartOffset(i), area.getLineEndOffset(i), LinePainter(colour))
        }
        // Hunk headers: quieter, like the IDE's gutter text.
        val hunk = LinePainter(Theme.mix(Theme.hunkForeground, Theme.codeBackground, 0.85))
        lines.forEachIndexed { i, line ->
            if (line.startsWith("@@")) area.highlighter.addHighlight(area.getLineStartOffset(i), area.getLineEndOffset(i), hunk)
        }
        setViewportView(area)
        border = BorderFactory.createLineBorder(Theme.border)
        horizontalScrollBarPolicy = ScrollPaneConstants.HORIZONTAL_SCROLLBAR_AS_NEEDED
        verticalScrollBarPolicy = ScrollPaneConstants.VERTICAL_SCROLLBAR_AS_NEEDED
        val lineHeight = area.getFontMetrics(area.font).height
        val visible = lines.size.coerceAtMost(maxVisibleLines)
        preferredSize =
            Dimension(100, visible * lineHeight + 10 + if (lines.any { it.length > 80 }) horizontalScrollBar.preferredSize.height else 0)
    }

    /** Paints the whole line's width, not only under its characters. */
    private class LinePainter(private val colour: Color) : Highlighter.HighlightPainter {
        override fun paint(g: Graphics, p0: Int, p1: Int, bounds: Shape, c: JTextComponent) {
            val rect = c.modelToView2D(p0)?.bounds ?: return
            g.color = colour
            g.fillRect(0, rect.y, c.width, rect.height)
        }
    }
}
