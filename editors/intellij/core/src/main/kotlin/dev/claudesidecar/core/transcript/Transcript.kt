package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.ChatEvent
import dev.claudesidecar.core.protocol.DeltaNotification
import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.EntryNotification
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.NoticeLevel
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.orUnknown

/**
 * A chat's conversation as the daemon computes it (docs/protocol.md, "The conversation"),
 * kept as the daemon sends it: `claude/entry` replaces the entry with its id (or adds it),
 * `claude/delta` appends to its `entryId`, queued prompts are listed last and one the CLI
 * takes up moves to the end. A stored history or a channel's transcript goes in front; the
 * client's own notices go at the end, or before the running turn when they are about it. A
 * transcript that is the last page of a longer conversation shows the chat afresh from that
 * page ([hasOlder]); older pages ([ChatEvent.OlderEntries]) then go in front, each entry
 * once. What else a view shows is in [ChatState].
 *
 * Not thread-safe: apply events and read on one thread (the EDT in the ui).
 */
class Transcript {
    /** The entries not queued, by key; [order] holds their keys in order (an older page goes in front without moving the rest). */
    private val placed = HashMap<String, Entry>()
    private val order = ArrayDeque<String>()
    private val queuedMap = LinkedHashMap<String, Entry>()
    private var change = TranscriptChange()

    /** A `claude/getTranscript` snapshot covers the notifications up to this `seq`. */
    private var snapshotSeq = 0
    private var nextNotice = 1

    /** The `seq` of the notification that last changed each entry of this channel. */
    private val changedAt = HashMap<String, Int>()

    /** Whether the conversation has entries older than [entries] (a page of it not read yet). */
    var hasOlder = false
        private set

    /**
     * Whether the entries are a resumed chat's stored last page ([ChatEvent.Preview]) shown
     * while its channel starts: the channel's transcript replaces them when it comes.
     */
    var previewing = false
        private set

    /**
     * The `before` of the stored session's page older than the entries shown, while they are
     * its pages ([ChatEvent.Preview], [ChatEvent.OlderHistory]) and it has one; null once a
     * channel's page took their place (the channel pages its own: [Chat.loadOlder][dev.claudesidecar.core.Chat.loadOlder]).
     */
    var storedCursor: String? = null
        private set

    /** The entries in order, queued prompts last. */
    val entries: List<Entry> get() = order.map(placed::getValue) + queuedMap.values

    /** The key of each of [entries], in the same order. */
    val keys: List<String> get() = order + queuedMap.keys

    /** The keys of [keys] read lazily, nothing copied: a view reads the first few of a long chat for what it costs. */
    val keysInOrder: Sequence<String> get() = order.asSequence() + queuedMap.keys.asSequence()

    /** The keys of [keys] from the last one backwards, read lazily: a view reads the end of a long chat for what it costs. */
    val keysFromEnd: Sequence<String> get() = queuedMap.keys.reversed().asSequence() + order.asReversed().asSequence()

    /** The entry with [key], or null. */
    fun entry(key: String): Entry? = placed[key] ?: queuedMap[key]

    /** Applies one event of the chat, in order; returns what changed. */
    fun apply(event: ChatEvent): TranscriptChange {
        change = TranscriptChange()
        when (event) {
            is ChatEvent.Notification -> when (val params = event.params) {
                is EntryNotification -> if (params.seq > snapshotSeq) params.entry.orUnknown()?.let { upsert(it, params.seq) }
                is DeltaNotification -> if (params.seq > snapshotSeq) append(params)
            }
            is ChatEvent.History -> {
                putFirst(event.history.entries)
                for (warning in event.history.warnings) notice(NoticeLevel.WARN, "history: $warning")
            }
            is ChatEvent.Preview -> {
                putFirst(event.page.entries)
                hasOlder = event.page.hasMore
                storedCursor = event.page.nextCursor.takeIf { event.page.hasMore }
                previewing = true
            }
            is ChatEvent.Transcript -> {
                val page = event.transcript
                // The last page of a longer conversation (what is shown of the rest went before
                // it), or the channel's page after the stored one: what it lacks is not there.
                if (page.hasMore || previewing) dropOlderThan(page.entries, page.seq)
                putFirst(page.entries, page.seq)
                snapshotSeq = page.seq
                hasOlder = page.hasMore
                previewing = false
                storedCursor = null
            }
            is ChatEvent.OlderEntries -> {
                putOlder(event.page.entries, event.page.seq)
                hasOlder = event.page.hasMore
            }
            is ChatEvent.OlderHistory -> {
                // No channel numbers its entries: none changed after the page was read.
                putOlder(event.page.entries, 0)
                hasOlder = event.page.hasMore
                storedCursor = event.page.nextCursor.takeIf { event.page.hasMore }
            }
            is ChatEvent.Notice -> notice(NoticeLevel.valueOf(event.level.name), event.text, beforeTurn = event.beforeTurn)
            is ChatEvent.Bound -> {
                // A new channel numbers its notifications from 1 again (a new daemon's may have the old one's id).
                snapshotSeq = 0
                changedAt.clear()
                // The stored page shown still has older entries: the channel's page, next, says so again.
                if (!previewing) hasOlder = false
            }
            is ChatEvent.UserMessage -> Unit // its prompt entry comes from the daemon
            is ChatEvent.Connection -> Unit // the chat's status (ChatState) shows it
        }
        return change
    }

    /**
     * Shows a prompt the user sent before the chat's channel opened, as queued, under the
     * conversation; it is sent with [id] as its uuid once the channel opens, and the daemon's
     * entry of that id takes its place. A channel's page does not drop it (queued prompts are
     * not the page's).
     */
    fun waiting(id: String, text: String): TranscriptChange {
        change = TranscriptChange()
        upsert(PromptEntry(id = id, text = text, queued = true))
        return change
    }

    /**
     * The chat's channel did not open: a notice of [text] says so at the end, and each prompt
     * of [notSent] (shown [waiting]) stays, after it, as a prompt no longer queued: it will not
     * be sent, and its text is still there to take again.
     */
    fun openFailed(text: String, notSent: Collection<String>): TranscriptChange {
        change = TranscriptChange()
        notice(NoticeLevel.ERROR, text)
        for (id in notSent) (queuedMap[id] as? PromptEntry)?.let { upsert(it.copy(queued = null)) }
        return change
    }

    /**
     * Adds a notice of this client's at the end (with [beforeTurn], before the prompt of the
     * turn still running, if one is), as part of the change the last [apply] returned; returns
     * its key.
     */
    fun notice(level: NoticeLevel, text: String, subtype: String = CLIENT_NOTICE, beforeTurn: Boolean = false): String {
        val entry = NoticeEntry(id = "client:${nextNotice++}", level = level, subtype = subtype, text = text)
        val turn = if (beforeTurn) runningTurnPrompt() else null
        if (turn == null) {
            upsert(entry)
        } else {
            placed[entry.id] = entry
            order.add(order.indexOf(turn), entry.id)
            change.added += entry.id
            change.reordered = true
        }
        return entry.id
    }

    /**
     * The key of the prompt of the turn still running: the last prompt of the main
     * conversation (not a sub-agent's) with no turn footer after it; null when the last turn ended.
     */
    private fun runningTurnPrompt(): String? {
        for (key in order.asReversed()) {
            val entry = placed.getValue(key)
            if (entry is TurnEntry) return null
            if (entry is PromptEntry && entry.parentId == null) return entry.id
        }
        return null
    }

    /** Puts [entry] in (at the end when new); [was] is what the transcript held under its key. An equal entry is no change. */
    private fun upsert(entry: Entry, seq: Int = 0, was: Entry? = entry(entry.id())) {
        val key = entry.id()
        if (entry is PromptEntry && entry.queued == true) {
            queuedMap[key] = entry
        } else {
            // A queued prompt the CLI took up moves to the end.
            if (queuedMap.remove(key) != null) change.reordered = true
            if (placed.put(key, entry) == null) order.addLast(key)
        }
        when {
            was == null -> change.added += key
            was != entry -> change.updated += key
        }
        if (seq > 0) changedAt[key] = seq
    }

    private fun append(delta: DeltaNotification) {
        val key = delta.entryId ?: return
        val updated = when (val entry = placed[key]) {
            is TextEntry -> entry.copy(text = entry.text + delta.text)
            is ThinkingEntry -> entry.copy(text = entry.text + delta.text)
            is ToolEntry -> entry.copy(partialInput = entry.partialInput.orEmpty() + delta.text)
            else -> return
        }
        placed[key] = updated
        changedAt[key] = delta.seq
        change.updated += key
    }

    /**
     * Puts [entries] (a stored history, or a channel's transcript as of [seq]) in front of those
     * kept, replacing those with the same id, except one a notification after [seq] changed.
     * Entries kept as they were, in the order they were, are no change (a channel's page equal
     * to the stored one shown while it started draws nothing again).
     */
    private fun putFirst(entries: List<Entry>, seq: Int? = null) {
        val keptOrder = order.toList()
        val kept = HashMap(placed)
        placed.clear()
        order.clear()
        for (entry in entries) {
            val id = entry.orUnknown()?.id() ?: continue
            val newer = seq != null && (changedAt[id] ?: 0) > seq
            if (!newer) {
                upsert(entry, was = kept[id] ?: queuedMap[id])
            } else {
                kept[id]?.let { if (placed.put(id, it) == null) order.addLast(id) }
            }
        }
        for (id in keptOrder) if (placed.putIfAbsent(id, kept.getValue(id)) == null) order.addLast(id)
        if (order != keptOrder) change.reordered = true
    }

    /**
     * Puts an older page (as of [seq]) in front. Its entries are new here (the daemon's cursor
     * reads each once): they go in front of the others, which stay as they are, for what the
     * page holds whatever the length of the chat ([TranscriptChange.inFront]). A page naming
     * an entry already here (a daemon reading it again) goes in as [putFirst] does.
     */
    private fun putOlder(entries: List<Entry>, seq: Int) {
        val page = LinkedHashMap<String, Entry>()
        for (entry in entries) {
            val known = entry.orUnknown() ?: continue
            val id = known.id()
            if (id in page || entry(id) != null || (known is PromptEntry && known.queued == true)) return putFirst(entries, seq)
            page[id] = known
        }
        placed.putAll(page)
        for (id in page.keys.reversed()) order.addFirst(id)
        change.added += page.keys
        change.putInFront(page.keys)
    }

    /**
     * Drops the channel's entries that are neither in [page] (the last page of the conversation
     * as of [seq]) nor changed after [seq]: they are older than the page (its cursor reads them
     * again) or gone. The client's own notices stay.
     */
    private fun dropOlderThan(page: List<Entry>, seq: Int) {
        val inPage = page.mapNotNullTo(HashSet()) { it.orUnknown()?.id() }
        val dropped = order.filter { key ->
            key !in inPage && !key.startsWith(CLIENT_NOTICE_PREFIX) && (changedAt[key] ?: 0) <= seq
        }
        for (key in dropped) {
            placed.remove(key)
            changedAt.remove(key)
        }
        if (dropped.isNotEmpty()) order.removeAll(dropped.toHashSet())
        if (dropped.isNotEmpty()) change.removed += dropped
    }

    companion object {
        /** The subtype of the notices this client adds (a daemon restart, a failed request). */
        const val CLIENT_NOTICE = "client"

        /** How the keys of this client's notices start. */
        private const val CLIENT_NOTICE_PREFIX = "client:"
    }
}
