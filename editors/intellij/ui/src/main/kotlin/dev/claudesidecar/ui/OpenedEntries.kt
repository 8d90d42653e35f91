package dev.claudesidecar.ui

/**
 * Which entries the user opened to their details (a tool row's input and result, a thought's
 * text), by entry key. It belongs to the transcript, not to an entry's view: a windowed
 * transcript drops the views of entries far from the screen and makes them again when the
 * user scrolls back (and a theme switch makes every view again), and an opened row must come
 * back open. EDT only.
 */
class OpenedEntries {
    private val open = HashSet<String>()

    /** Whether the entry [key] shows its details. */
    fun isOpen(key: String): Boolean = key in open

    /** Opens the entry [key] when closed, closes it when open; returns whether it is open now. */
    fun toggle(key: String): Boolean = if (open.remove(key)) false else open.add(key)

    /** Forgets the entry [key] (it left the transcript). */
    fun forget(key: String) {
        open.remove(key)
    }
}
