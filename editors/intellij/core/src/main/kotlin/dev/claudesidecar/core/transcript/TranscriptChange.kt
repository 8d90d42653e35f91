package dev.claudesidecar.core.transcript

/**
 * What one [Transcript.apply] changed, by entry key (one of [Transcript.keys]): entries [added],
 * entries [updated] in place, entries [removed] (older than the last page a chat is shown
 * afresh from), and [reordered] when an entry moved (a history went in front, a queued prompt
 * was taken up). An older page put in front of all the others, which stay as they were, is
 * [inFront] (its keys, also [added]), not [reordered]: a view adds its entries above and
 * leaves the rest as it is.
 */
class TranscriptChange internal constructor() {
    val added = LinkedHashSet<String>()
    val updated = LinkedHashSet<String>()
    val removed = LinkedHashSet<String>()
    var reordered = false
        internal set

    private var front: List<String> = emptyList()

    /** The keys of the entries that went in front of all the others, in order (an older page), none moved. */
    val inFront: List<String> get() = front

    internal fun putInFront(keys: Collection<String>) {
        front = keys.toList() + front
    }

    val isEmpty: Boolean get() = added.isEmpty() && updated.isEmpty() && removed.isEmpty() && !reordered

    /**
     * Adds what [later], applied after this one, changed: together they say what a view drawing
     * the transcript once after both must draw. Each key is named once: an entry added and then
     * updated is added (a view makes it from its latest state).
     */
    fun include(later: TranscriptChange) {
        removed -= later.added
        added -= later.removed
        updated -= later.removed
        removed += later.removed
        added += later.added
        for (key in later.updated) if (key !in added) updated += key
        reordered = reordered || later.reordered
        // A later page goes in front of an earlier one; an entry put in front and then removed is not there.
        if (later.inFront.isNotEmpty() || later.removed.isNotEmpty()) front = (later.inFront + front).filter { it !in later.removed }
    }
}
