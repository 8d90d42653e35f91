package dev.claudesidecar.core.transcript

/**
 * What one [Transcript.apply] changed, by entry key (one of [Transcript.keys]): entries [added],
 * entries [updated] in place, and [reordered] when an entry moved (a history went in front,
 * a queued prompt was taken up).
 */
class TranscriptChange internal constructor() {
    val added = LinkedHashSet<String>()
    val updated = LinkedHashSet<String>()
    var reordered = false
        internal set

    val isEmpty: Boolean get() = added.isEmpty() && updated.isEmpty() && !reordered
}
