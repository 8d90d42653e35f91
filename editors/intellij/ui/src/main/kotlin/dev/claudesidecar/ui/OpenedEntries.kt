package dev.claudesidecar.ui

/**
 * Which entries the user opened to their details (a tool row's input and result, a thought's
 * text), and whose long result they asked to see whole, by entry key. It belongs to the transcript, not to an entry's view: a windowed
 * transcript drops the views of entries far from the screen and makes them again when the
 * user scrolls back (and a theme switch makes every view again), and an opened row must come
 * back open. EDT only.
 */
class OpenedEntries {
    private val open = HashSet<String>()
    private val whole = HashSet<String>()

    /** Told the key of an entry the user is about to open, close or show whole (its view not laid out anew yet). */
    var onToggle: (String) -> Unit = {}

    /** Whether the entry [key] shows its details. */
    fun isOpen(key: String): Boolean = key in open

    /** Opens the entry [key] when closed, closes it when open; returns whether it is open now. */
    fun toggle(key: String): Boolean {
        onToggle(key)
        return if (open.remove(key)) false else open.add(key)
    }

    /** Whether the entry [key] shows its result whole rather than its first lines. */
    fun showsWhole(key: String): Boolean = key in whole

    /** Shows the entry [key]'s result whole (the user asked for the lines left out). */
    fun showWhole(key: String) {
        onToggle(key)
        whole.add(key)
    }

    /** Forgets the entry [key] (it left the transcript). */
    fun forget(key: String) {
        open.remove(key)
        whole.remove(key)
    }
}
