package dev.claudesidecar.ui

/** Plain text in the HTML a host shows it as (an IDE's notification balloons take HTML). */
object Html {
    /** [text] with `&`, `<`, `>` and quotes escaped and its line breaks kept: an error message shows as written. */
    fun text(text: String): String = Markdown.escape(text).replace("\r\n", "\n").replace("\n", "<br>")
}
