package dev.claudesidecar.ui

/**
 * Finds where a growing markdown text can be cut so that what is before the cut renders the
 * same alone as it does in the whole text: before a line that starts a new top-level block
 * after a blank line, outside fenced code, and not a list item or an indented line (which may
 * continue a list or a loose list item above). Reads each line once, however often the text
 * grows ([advance]); [reset] when the text is replaced rather than extended.
 */
class MarkdownBlocks {
    /** Every cut found, in order. */
    val cuts = mutableListOf<Int>()

    /** The last cut found: the text before it is made of finished blocks. */
    val cut: Int get() = cuts.lastOrNull() ?: 0

    private var scanned = 0
    private var fence: String? = null
    private var blankBefore = false

    fun reset() {
        cuts.clear()
        scanned = 0
        fence = null
        blankBefore = false
    }

    /** Reads the complete lines of [text] not read yet (the text must extend what was read) and moves [cut]. */
    fun advance(text: CharSequence) {
        while (true) {
            val end = text.indexOf('\n', scanned)
            if (end < 0) return
            line(text, scanned, end)
            scanned = end + 1
        }
    }

    private fun line(text: CharSequence, start: Int, end: Int) {
        val line = text.subSequence(start, end)
        val blank = line.isBlank()
        val marker = FENCE.find(line)?.groupValues?.get(1)
        val open = fence
        when {
            open != null -> if (marker != null && marker[0] == open[0] && marker.length >= open.length &&
                line.trim().all { it == open[0] }
            ) {
                fence = null
            }
            blank -> Unit
            else -> {
                if (blankBefore && !line[0].isWhitespace() && !LIST_ITEM.containsMatchIn(line)) cuts += start
                if (marker != null) fence = marker
            }
        }
        blankBefore = blank && fence == null
    }

    private companion object {
        val FENCE = Regex("""^ {0,3}(`{3,}|~{3,})""")
        val LIST_ITEM = Regex("""^([-+*]|\d{1,9}[.)])(\s|$)""")
    }
}
