package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.Entry
import dev.claudesidecar.core.protocol.NoticeEntry
import dev.claudesidecar.core.protocol.PromptEntry
import dev.claudesidecar.core.protocol.TextEntry
import dev.claudesidecar.core.protocol.ThinkingEntry
import dev.claudesidecar.core.protocol.ToolEntry
import dev.claudesidecar.core.protocol.TurnEntry
import dev.claudesidecar.core.protocol.TurnOutcome
import dev.claudesidecar.core.protocol.orUnknown
import dev.claudesidecar.core.transcript.Transcript
import dev.claudesidecar.core.transcript.TranscriptChange
import dev.claudesidecar.core.transcript.id
import dev.claudesidecar.core.transcript.parentId
import java.awt.Dimension
import java.awt.EventQueue
import java.awt.Point
import java.awt.event.InputEvent
import javax.swing.JComponent
import javax.swing.JScrollPane
import javax.swing.ScrollPaneConstants
import javax.swing.SwingUtilities
import javax.swing.Timer

/**
 * The transcript's entries, top to bottom, in a scroll pane that follows the end while the
 * user is there; a sub-agent's entries sit inside the Agent/Task call that started them. Only
 * what a change names is redrawn; a streaming entry is redrawn at most every
 * [STREAM_RENDER_MS] however fast its deltas come. EDT only.
 *
 * Windowed: a transcript of more than [wholeUpTo] entries (at the top level) has views only
 * for the entries on screen and [MARGIN_SCREENS] screens above and below; the others are
 * one spacer above and one below, as tall as their entries were drawn (or, never drawn, are
 * guessed to be). Views are made as the user scrolls to them and dropped once they are
 * [KEEP_SCREENS] screens away, so a layout costs the same at a hundred entries and at a
 * hundred thousand. Either way a task makes the views of what is on screen first and only
 * as many as [MAKE_BUDGET_NS] allows, the rest in the tasks after it: no task makes a
 * screenful of views at once. What the user looks at stays in place while views are made or grow above
 * it and while older pages go in front: the first entry in sight keeps its distance from the
 * top of the view. When the chat has older entries than those loaded (the daemon pages its
 * conversation), scrolling within a screen of the top asks [loadOlder] for the page before,
 * one at a time, the row at the top saying "Loading earlier messages…" until [olderSettled].
 */
class TranscriptView(
    private val transcript: Transcript,
    private val context: ViewContext,
    private val loadOlder: () -> Unit = {},
    wholeUpTo: Int = WHOLE_UP_TO,
) {
    /** Up to this many entries (at the top level) every one is drawn (a benchmark of drawing all sets it very high). */
    internal var wholeUpTo: Int = wholeUpTo

    /** How long (ns) a task makes views beyond the first before it leaves the rest to the next (a test sets 0: one view a task). */
    internal var makeBudgetNs: Long = MAKE_BUDGET_NS

    /** A top-level entry of the transcript (with what is nested in it): its view when made, and its height. */
    private class Slot(val key: String) {
        var view: EntryView? = null

        /** Its height and the gap after it as last drawn (or guessed when [guessed]) at [heightsWidth]; 0 when it shows nothing, -1 until guessed. */
        var extent = -1
        var guessed = true

        /** Its place: its index in [slots] is `order - slots[0].order` (an older page's slots go in front, numbered below). */
        var order = 0
    }

    private val column = ScrollableColumn(GAP).apply { border = padding(12, 14, 12, 14) }
    private val views = HashMap<String, EntryView>()

    /** The tool rows and thoughts the user opened: kept here, as their views come and go. */
    private val opened = OpenedEntries()
    private val slots = ArrayList<Slot>()

    /** The slots' extents by index, and their running sums (the windowing reads them at every scroll). */
    private val heights = SlotHeights()

    /** The width the extents are for (-1: none yet, or to be guessed again). */
    private var heightsWidth = -1
    private val slotOf = HashMap<String, Slot>()

    /** The keys of the entries nested in each Agent/Task call that is shown, in order. */
    private val nested = HashMap<String, MutableList<String>>()

    /** The Agent/Task calls not in the transcript that entries at the top level belong to (an older page may bring one). */
    private val parentsAbsent = HashSet<String>()

    /** How many entries were put into slots and looked at for "Interrupted" marks (a test checks a page costs its own entries). */
    internal var entriesPlaced = 0L
    internal var entriesMarked = 0L

    /** How many times an entry's view was made or drawn anew (a test checks a page equal to the one shown draws nothing). */
    internal var entriesDrawn = 0L

    /** The slots whose views are in the column: an index range of [slots] (empty: none). */
    private var made = IntRange.EMPTY

    /** "Interrupted" said by another entry of the exchange (see [markInterrupts]), by key. */
    private val saidElsewhere = HashMap<String, Boolean>()
    private val streaming = LinkedHashSet<String>()
    private val renderTimer = Timer(STREAM_RENDER_MS) { flushStreaming() }.apply { isRepeats = false }
    private val above = Spacer()
    private val below = Spacer()
    private val loadingRow = mutedLabel(OLDER_HINT).apply { isVisible = false }

    /** The last page asked for did not come: the next is asked for once the user scrolls. */
    private var olderFailed = false

    /** Whether a page of older entries was asked for and has not come yet. */
    var loadingOlder = false
        private set

    /** Whether a streaming entry's latest text still waits for the render timer (a test waits for it to be drawn). */
    internal val drawPending: Boolean get() = streaming.isNotEmpty()

    /** How many entries have a view now (what the window holds; a test checks it stays small). */
    internal val viewCount: Int get() = views.size

    val scrollPane = JScrollPane(column).apply {
        border = null
        horizontalScrollBarPolicy = ScrollPaneConstants.HORIZONTAL_SCROLLBAR_NEVER
        verticalScrollBar.unitIncrement = 24
        viewport.isOpaque = false
        isOpaque = false
    }

    /** Whether the view keeps the end in sight: until the user scrolls away from it, and again once back. */
    private var following = true
    private var scrolledTo = 0

    /** The entry the view holds in place when the content above it changes, and its distance from the view's top. */
    private var anchorKey: String? = null
    private var anchorOffset = 0
    private var adjusting = false
    private var windowQueued = false

    /** Shown while the conversation has no entry: what to do first. */
    private val hint = wrappingText(EMPTY_HINT, Theme.font, Theme.muted).apply {
        border = padding(24, 0, 0, 0)
        isFocusable = false
    }

    init {
        opened.onToggle = ::holdInPlace
        scrollPane.verticalScrollBar.model.addChangeListener { onScroll() }
        scrollPane.viewport.addChangeListener { onViewport() }
        place()
        arrangeColumn()
    }

    /** Whether the entry [key] is drawn and at least partly in sight. */
    internal fun inSight(key: String): Boolean {
        val c = views[key]?.component ?: return false
        if (!c.isShowing) return false
        val box = SwingUtilities.convertRectangle(c.parent, c.bounds, column)
        return box.height > 0 && box.intersects(scrollPane.viewport.viewRect)
    }

    /** Keeps the end in sight again (the user sent a prompt: its turn is what they look at). */
    fun followEnd() {
        following = true
        if (made.isEmpty() || made.last != slots.lastIndex) updateWindow()
        val bar = scrollPane.verticalScrollBar
        bar.value = bar.maximum - bar.visibleAmount
        scrolledTo = bar.value
    }

    /** Shows what [change] did to the transcript. */
    fun show(change: TranscriptChange) {
        if (change.isEmpty) return
        val drawn = ArrayList<String>()
        for (key in change.removed) {
            dropView(key)
            opened.forget(key)
        }
        for (key in change.updated) {
            val entry = transcript.entry(key) ?: continue
            val view = views[key]
            if (view == null) {
                // Not drawn: its height is guessed again from what it says now.
                slotOf[key]?.let { if (it.guessed) guessExtent(it, indexOf(it)) }
                continue
            }
            if (isStreaming(entry)) {
                streaming += key
                if (!renderTimer.isRunning) renderTimer.start()
            } else {
                streaming -= key
                view.update(entry)
                entriesDrawn++
                drawn += key
            }
        }
        val moved = change.added.isNotEmpty() || change.reordered || change.removed.isNotEmpty()
        // An older page only: its entries go above, those placed stay as they are (the cost is the page's, not the chat's).
        val inFront = moved && hint.parent == null && !change.reordered && change.removed.isEmpty() &&
            change.added.size == change.inFront.size && placeInFront(change.inFront)
        // New entries at the end only (a turn going on): their slots go after the others.
        val atEnd = moved && !inFront && hint.parent == null && !change.reordered && change.removed.isEmpty() &&
            change.inFront.isEmpty() && placeAtEnd(change.added)
        if ((moved && !inFront && !atEnd) || hint.parent != null) place()
        if (inFront && drawn.isEmpty()) {
            markInterrupts(change.inFront.size)
        } else if (atEnd || (!moved && drawn.isNotEmpty())) {
            markTail(change.added + drawn)
        } else if (drawn.isNotEmpty() || moved) {
            markInterrupts()
        }
        if (moved) {
            updateWindow()
        } else if (drawn.isNotEmpty()) {
            relayout()
        }
        // A delta of a streaming entry changes nothing on screen until the timer draws it.
    }

    /**
     * The page of older entries asked for came ([read]: shown, or about to be) or could not be
     * read; then none is asked for again until the user scrolls.
     */
    fun olderSettled(read: Boolean) {
        loadingOlder = false
        olderFailed = !read
        showLoadingRow()
        queueWindow()
    }

    /** Draws every entry again in the look and feel now in use (its colours and fonts). */
    fun restyle() {
        hint.font = Theme.font
        hint.foreground = Theme.muted
        loadingRow.font = Theme.smallFont
        loadingRow.foreground = Theme.muted
        streaming.clear()
        views.clear()
        for (slot in slots) slot.view = null
        heightsWidth = -1
        made = IntRange.EMPTY
        column.removeAll()
        place()
        markInterrupts()
        updateWindow()
    }

    /**
     * Puts the transcript's entries into slots, in transcript order: one per top-level entry,
     * a sub-agent's entries nested under their Agent/Task call (at the top level when that
     * call is not in the transcript). Views are made only for the slots in the window.
     */
    private fun place() {
        val keys = transcript.keys
        val order = ArrayList<Slot>(keys.size)
        val known = HashMap<String, Slot>(keys.size * 2)
        nested.clear()
        parentsAbsent.clear()
        for (key in keys) {
            if (!atTopLevel(key)) continue
            val slot = slotOf[key] ?: Slot(key)
            known[key] = slot
            order += slot
        }
        // Views of entries no longer at the top level (now nested, or gone) are made again where they belong.
        val wasMade = if (made.isEmpty()) emptySet() else slots.subList(made.first, made.last + 1).mapTo(HashSet()) { it.key }
        for (key in wasMade) if (key !in known) slotOf[key]?.view = null
        slotOf.clear()
        slotOf.putAll(known)
        slots.clear()
        slots += order
        for (i in slots.indices) {
            val slot = slots[i]
            slot.order = i
            if (slot.extent < 0) guessExtent(slot)
        }
        heights.reset(slots.size) { slots[it].extent }
        var first = -1
        var last = -1
        for (i in slots.indices) {
            if (slots[i].key in wasMade && slots[i].view != null) {
                if (first < 0) first = i
                last = i
            }
        }
        made = if (first < 0) IntRange.EMPTY else first..last
        // Views not in one run (an entry gone from between them) are all kept, the run filled in.
        for (i in made) ensureMade(slots[i])
        views.keys.removeIf { transcript.entry(it) == null }
    }

    /**
     * Sorts the entry [key] in: true when it is shown at the top level (it needs a slot);
     * false when it is gone, or nested in the tool call of an Agent/Task ([nested]).
     */
    private fun atTopLevel(key: String): Boolean {
        entriesPlaced++
        val entry = transcript.entry(key) ?: return false
        val parentId = entry.parentId()
        val parent = parentId?.takeIf { transcript.entry(it) is ToolEntry }
        if (parent != null) {
            nested.getOrPut(parent) { mutableListOf() } += key
            return false
        }
        if (parentId != null) parentsAbsent += parentId
        return true
    }

    /**
     * Puts the entries of an older page ([keys], now the transcript's first) into slots above
     * the others, which keep theirs; false (nothing done) when the page holds the Agent/Task
     * call of entries shown at the top level: they move into it, as [place] puts them.
     */
    private fun placeInFront(keys: List<String>): Boolean {
        if (keys.any { it in parentsAbsent }) return false
        val added = ArrayList<Slot>(keys.size)
        for (key in keys) {
            if (atTopLevel(key)) added += Slot(key).also { slotOf[key] = it }
        }
        val firstOrder = slots.firstOrNull()?.order ?: 0
        added.forEachIndexed { i, slot ->
            slot.order = firstOrder - added.size + i
            guessExtent(slot)
        }
        slots.addAll(0, added)
        heights.insertFront(added.size) { added[it].extent }
        if (!made.isEmpty()) made = made.first + added.size..made.last + added.size
        return true
    }

    /**
     * Puts the new entries [keys], now the transcript's last, into slots after the others,
     * which keep theirs, or into the Agent/Task call they belong to (drawn into its row when it
     * has a view); false (nothing done) when they are not the last, or one of them is the
     * Agent/Task call of entries shown at the top level: then [place] sorts everything in.
     */
    private fun placeAtEnd(keys: Collection<String>): Boolean {
        if (keys.isEmpty() || slots.isEmpty() || keys.any { it in parentsAbsent }) return false
        if (transcript.keysFromEnd.take(keys.size).toList().asReversed() != keys.toList()) return false
        var next = slots.last().order + 1
        val added = ArrayList<Slot>(keys.size)
        for (key in keys) {
            if (atTopLevel(key)) {
                added += Slot(key).also { slot ->
                    slot.order = next++
                    guessExtent(slot)
                    slotOf[key] = slot
                }
            } else {
                val parent = transcript.entry(key)?.parentId() ?: continue
                views[parent]?.let { arrangeNested(parent, it) }
            }
        }
        slots.addAll(added)
        heights.append(added.size) { added[it].extent }
        return true
    }

    /** Makes [slot]'s view (and those of the entries nested in it) unless made. */
    private fun ensureMade(slot: Slot) {
        val view = slot.view ?: viewOf(slot.key)?.also { slot.view = it } ?: return
        arrangeNested(slot.key, view)
    }

    /** The view of the entry [key], made now if it has none. */
    private fun viewOf(key: String): EntryView? {
        views[key]?.let { return it }
        val entry = transcript.entry(key) ?: return null
        entriesDrawn++
        return entryView(key, entry, context, opened).also { view ->
            views[key] = view
            saidElsewhere[key]?.let { (view as? InterruptMark)?.saidElsewhere = it }
        }
    }

    /** Puts the views of what is nested under [key] into [view] (an Agent/Task call's row), in order. */
    private fun arrangeNested(key: String, view: EntryView) {
        val inner = nested[key] ?: return
        val row = view as? ToolRow ?: return
        val components = inner.mapNotNull { child -> viewOf(child)?.also { arrangeNested(child, it) }?.component }
        arrange(row.children, components)
    }

    /** Forgets the view of [key] and of what is nested in it (its slot is dropped, or its entry is gone). */
    private fun dropView(key: String) {
        views.remove(key)
        streaming -= key
        nested[key]?.forEach(::dropView)
    }

    /** Puts [components] into [container] in this order, moving only those out of place. */
    private fun arrange(container: java.awt.Container, components: List<JComponent>) {
        components.forEachIndexed { i, c -> if (i >= container.componentCount || container.getComponent(i) !== c) container.add(c, i) }
        while (container.componentCount > components.size) container.remove(components.size)
    }

    /** The column's components: the loading row, the spacer above, the views of [made], the spacer below (or the hint). */
    private fun arrangeColumn() {
        measure()
        if (slots.isEmpty()) {
            arrange(column, listOf(hint))
            return
        }
        val components = ArrayList<JComponent>(made.count() + 3)
        // There while older entries exist: it comes and goes with a page going in, never alone.
        loadingRow.isVisible = transcript.hasOlder || loadingOlder
        components += loadingRow
        components += above
        for (i in made) slots[i].view?.let { components += it.component }
        components += below
        arrange(column, components)
        above.sizeTo(extentOf(0, if (made.isEmpty()) slots.size else made.first))
        below.sizeTo(if (made.isEmpty()) 0 else extentOf(made.last + 1, slots.size))
    }

    /** The height of the slots [from] until [to], with the gaps between them. */
    private fun extentOf(from: Int, to: Int): Int = (heights.between(from, to) - GAP).coerceAtLeast(0)

    /** [slot]'s index in [slots]. */
    private fun indexOf(slot: Slot): Int = slot.order - slots[0].order

    /**
     * The slots' extents at the width the column has now: every one guessed again when the
     * width changed (or a restyle asked for it), then those of the views drawn at it measured.
     */
    private fun measure() {
        val width = innerWidth()
        if (width != heightsWidth) {
            heightsWidth = width
            for (i in slots.indices) guessExtent(slots[i], i)
        }
        for (i in made) measure(i)
    }

    /** Slot [i]'s extent as drawn, when its view is laid out at the column's width. */
    private fun measure(i: Int) {
        val slot = slots[i]
        val c = slot.view?.component ?: return
        if (c.parent !== column || c.width != heightsWidth || heightsWidth <= 0) return
        slot.extent = if (c.isVisible) c.height + GAP else 0
        slot.guessed = false
        heights[i] = slot.extent
    }

    /** Guesses [slot]'s extent from its entry at [heightsWidth] (noted at [index] once it has one). */
    private fun guessExtent(slot: Slot, index: Int = -1) {
        slot.extent = guess(transcript.entry(slot.key), heightsWidth.coerceAtLeast(0)) + GAP
        slot.guessed = true
        if (index >= 0) heights[index] = slot.extent
    }

    private fun innerWidth(): Int {
        val insets = column.insets
        return (column.width - insets.left - insets.right).coerceAtLeast(0)
    }

    /** Where the first slot's top is in the column: below its padding and the loading row. */
    private fun slotsTop(): Int = column.insets.top + if (loadingRow.isVisible) loadingRow.preferredSize.height + GAP else 0

    /**
     * Makes the views of the slots on screen and [MARGIN_SCREENS] screens around it, drops those
     * further than [KEEP_SCREENS] screens, lays the column out at once and puts the anchor entry
     * back where it was on screen (or the end, while following). Every slot is made while
     * there are at most [wholeUpTo]. Views the task had no time for are made in the next.
     */
    private fun updateWindow() {
        if (adjusting) return
        adjusting = true
        var partly = false
        try {
            val viewport = scrollPane.viewport
            val screen = viewport.extentSize.height.coerceAtLeast(1)
            if (slots.isEmpty()) {
                made = IntRange.EMPTY
                arrangeColumn()
            } else if (innerWidth() == 0) {
                // Nothing laid out yet (no width to measure at): the last entries (all of a short chat), from the end.
                val from = if (slots.size <= wholeUpTo) 0 else (slots.size - FIRST_SLOTS).coerceAtLeast(0)
                val wanted = from until slots.size
                partly = fill(wanted, wanted, slots.lastIndex)
                arrangeColumn()
            } else {
                measure()
                val total = slotsTop() + heights.total
                val viewTop = if (following) (total - screen).coerceAtLeast(0) else anchorTop() ?: viewport.viewPosition.y
                val want = range(viewTop - screen * MARGIN_SCREENS, viewTop + screen * (1 + MARGIN_SCREENS))
                val keep = range(viewTop - screen * KEEP_SCREENS, viewTop + screen * (1 + KEEP_SCREENS))
                val wanted = if (slots.size <= wholeUpTo) {
                    // Few entries are all drawn (in a few tasks: the screen first).
                    slots.indices
                } else if (!made.isEmpty() && made.first <= want.last + 1 && want.first <= made.last + 1) {
                    minOf(want.first, made.first.coerceAtLeast(keep.first))..maxOf(want.last, made.last.coerceAtMost(keep.last))
                } else {
                    want
                }
                val sight = range(viewTop, viewTop + screen)
                partly = fill(sight, wanted, startOf(sight))
                arrangeColumn()
            }
            scrollPane.validate()
            // The spacers from the heights the views now drawn have, then the view back in place.
            arrangeColumn()
            scrollPane.validate()
            restorePosition()
            column.repaint()
        } finally {
            adjusting = false
        }
        // The views left to make around the screen: in the next task (what the user looks at is drawn).
        if (partly) queueWindow()
        nearTop()
    }

    /**
     * Makes [made] the slots around [start] within [wanted] ([makeAround]), dropping the views
     * of the others; whether some of [wanted] were left for the next task.
     */
    private fun fill(sight: IntRange, wanted: IntRange, start: Int): Boolean {
        for (i in made) if (i !in wanted) dropSlot(i)
        val next = makeAround(sight, wanted, start)
        for (i in made) if (i !in next) dropSlot(i)
        made = next
        return next != wanted
    }

    /**
     * Makes views outward from the slot [start]: first those of the slots in [sight], then the
     * others up to [wanted], below and above in turn. Slots with a view are taken always, slots
     * without one while the task has taken less than [makeBudgetNs]: a wheel turn that jumps
     * screens, or a chat opened on a cold JVM, draws what the user looks at over a few tasks
     * (from the entry held in place, or the end) instead of holding the EDT until all is made.
     * Returns the slots that have their views now, in one run.
     */
    private fun makeAround(sight: IntRange, wanted: IntRange, start: Int): IntRange {
        val deadline = System.nanoTime() + makeBudgetNs
        var fresh = false

        // A slot with a view is taken always; one without, while there is time (the first of a task always).
        fun take(i: Int): Boolean {
            if (slots[i].view == null) {
                if (fresh && System.nanoTime() > deadline) return false
                fresh = true
            }
            ensureMade(slots[i])
            return true
        }
        var first = start.coerceIn(wanted)
        var last = first
        take(first)
        var downward = true
        for (bound in listOf(sight, wanted)) {
            var up = true
            var down = true
            while (up || down) {
                up = up && first > bound.first && first > wanted.first
                down = down && last < bound.last && last < wanted.last
                if (down && (downward || !up)) {
                    if (take(last + 1)) last++ else down = false
                } else if (up) {
                    if (take(first - 1)) first-- else up = false
                }
                downward = !downward
            }
        }
        return first..last
    }

    /** The slot the views are made from: the end while following, else the anchor entry when in [sight]. */
    private fun startOf(sight: IntRange): Int {
        if (following) return sight.last
        val anchor = anchorKey?.let(slotOf::get)?.let(::indexOf)
        return if (anchor != null && anchor in sight) anchor else sight.first
    }

    private fun dropSlot(index: Int) {
        val slot = slots[index]
        val view = slot.view ?: return
        measure(index) // its height as drawn, kept for the spacer
        slot.view = null
        views.remove(slot.key)
        streaming -= slot.key
        nested[slot.key]?.forEach(::dropView)
        view.component.parent?.remove(view.component)
    }

    /** The slots that reach into the column's rows [from] to [to]. */
    private fun range(from: Int, to: Int): IntRange {
        val base = slotsTop()
        val first = heights.rowBelow(from - base)
        return first..maxOf(first, heights.rowReaching(to - base))
    }

    /** Where the view's top goes for the anchor entry to keep its distance from it; null without one. */
    private fun anchorTop(): Int? {
        val slot = anchorKey?.let(slotOf::get) ?: return null
        return slotsTop() + heights.top(indexOf(slot)) - anchorOffset
    }

    /**
     * Notes which entry stays in place when the content above it changes, and its distance
     * from the view's top: the first whose top is in sight (an entry cut at the top may still
     * grow, drawn off the EDT, without moving what is read below it), else the one cut at the
     * top when it fills the view. None while the view shows a spacer only (the user scrolled
     * past the entries drawn): then the view keeps its position in the column.
     */
    private fun noteAnchor() {
        anchorKey = null
        if (slots.isEmpty() || made.isEmpty()) return
        val viewport = scrollPane.viewport
        val top = viewport.viewPosition.y
        val bottom = top + viewport.extentSize.height
        var cut: Slot? = null
        for (i in made) {
            val c = slots[i].view?.component ?: continue
            if (!c.isVisible || c.parent !== column || c.y + c.height <= top) continue
            if (c.y >= bottom) break
            if (c.y < top) {
                if (cut == null) cut = slots[i]
                continue
            }
            anchorKey = slots[i].key
            anchorOffset = c.y - top
            return
        }
        val partly = cut ?: return
        val c = partly.view?.component ?: return
        anchorKey = partly.key
        anchorOffset = c.y - top
    }

    /**
     * The user opens or closes the entry [key]: the slot it is in (its own, or its Agent call's)
     * becomes the anchor, so that what it shows or hides goes below its header, which stays
     * under the pointer (an anchor further down would push an opened row up out of sight).
     */
    private fun holdInPlace(key: String) {
        var c: java.awt.Component = views[key]?.component ?: return
        while (c.parent != null && c.parent !== column) c = c.parent
        if (c.parent !== column || made.isEmpty()) return
        val slot = made.firstOrNull { slots[it].view?.component === c }?.let(slots::get) ?: return
        anchorKey = slot.key
        anchorOffset = c.y - scrollPane.viewport.viewPosition.y
    }

    /** Puts the view where the anchor entry is where it was on screen; at the end while following. */
    private fun restorePosition() {
        val viewport = scrollPane.viewport
        val room = (column.height - viewport.extentSize.height).coerceAtLeast(0)
        val c = if (following) null else anchorKey?.let(slotOf::get)?.view?.component?.takeIf { it.parent === column }
        if (!following && c == null) return noteAnchor()
        val y = if (c == null) room else (c.y - anchorOffset).coerceIn(0, room)
        if (viewport.viewPosition.y != y) viewport.viewPosition = Point(0, y)
        scrolledTo = scrollPane.verticalScrollBar.value
        // The anchor put back where it was stays the anchor: a view just made above it (an older
        // page's, still being drawn) may come into sight, and its growing must not move it.
        if (c == null || c.y - y != anchorOffset) noteAnchor()
    }

    /**
     * The viewport moved or changed size. The user's scrolling (an input event) moves the
     * anchor with it; a move of the layout's own (views made or grown above) is undone, the
     * anchor entry kept in place. Either way the window follows in a task of its own.
     */
    private fun onViewport() {
        if (adjusting) return
        val user = EventQueue.getCurrentEvent() is InputEvent
        if (user) olderFailed = false
        if (user || following) {
            noteAnchor()
        } else {
            val c = anchorKey?.let(slotOf::get)?.view?.component
            if (c != null && c.parent === column) {
                val y = (c.y - anchorOffset).coerceIn(0, (column.height - scrollPane.viewport.extentSize.height).coerceAtLeast(0))
                if (y != scrollPane.viewport.viewPosition.y) {
                    adjusting = true
                    try {
                        scrollPane.viewport.viewPosition = Point(0, y)
                    } finally {
                        adjusting = false
                    }
                }
            }
        }
        queueWindow()
    }

    /** Updates the window in a task of its own (after the layout or scroll under way), once however often asked. */
    private fun queueWindow() {
        if (windowQueued) return
        windowQueued = true
        windowsQueued++
        SwingUtilities.invokeLater {
            windowQueued = false
            windowsQueued--
            if (needsWindow()) updateWindow() else nearTop()
        }
    }

    /** Whether the views made no longer cover the screen and its margins (or cover far more). */
    private fun needsWindow(): Boolean {
        if (slots.size <= wholeUpTo) return made.count() != slots.size
        if (made.isEmpty()) return true
        val viewport = scrollPane.viewport
        val screen = viewport.extentSize.height
        val top = viewport.viewPosition.y
        val first = slots[made.first].view?.component ?: return true
        val last = slots[made.last].view?.component ?: return true
        val coveredFrom = if (made.first == 0) Int.MIN_VALUE else first.y
        val coveredTo = if (made.last == slots.lastIndex) Int.MAX_VALUE else last.y + last.height
        val tooFar = first.y + first.height < top - screen * KEEP_SCREENS || last.y > top + screen * (1 + KEEP_SCREENS)
        return coveredFrom > top - screen * MARGIN_SCREENS / 2 || coveredTo < top + screen * (1 + MARGIN_SCREENS / 2) || tooFar
    }

    /** Asks for the page before the loaded entries when the view is within a screen of the top. */
    private fun nearTop() {
        if (!transcript.hasOlder || loadingOlder || olderFailed || slots.isEmpty()) return
        val viewport = scrollPane.viewport
        if (viewport.viewPosition.y > viewport.extentSize.height * LOAD_SCREENS) return
        loadingOlder = true
        showLoadingRow()
        loadOlder()
    }

    /** The row above the entries says whether older ones are being read; its height stays (nothing below moves). */
    private fun showLoadingRow() {
        loadingRow.text = if (loadingOlder) LOADING_OLDER else OLDER_HINT
    }

    /**
     * "Interrupted" is said once per exchange (a prompt and what follows it): by its footer,
     * which reads how the turn ended; while it has none (a turn still ending, a stored session
     * without its footers), by the first aborted answer or interrupt notice in it. With
     * [inFront], an older page of that many entries went in front: only the exchanges from the
     * top to the first one wholly after the page are read again (the others are as they were);
     * with [keys], those only (whole exchanges, in order).
     */
    private fun markInterrupts(inFront: Int? = null, keys: Sequence<String>? = null) {
        if (inFront == null && keys == null) saidElsewhere.clear()
        val exchange = mutableListOf<Entry>()
        fun mark() {
            val footer = exchange.lastOrNull { it is TurnEntry } as TurnEntry?
            var said = footer?.outcome.orUnknown() == TurnOutcome.INTERRUPTED
            for (entry in exchange.filter(::saysInterrupted)) {
                val key = entry.id()
                saidElsewhere[key] = said
                (views[key] as? InterruptMark)?.saidElsewhere = said
                said = true
            }
            exchange.clear()
        }
        var index = 0
        for (key in keys ?: transcript.keysInOrder) {
            val entry = transcript.entry(key) ?: continue
            if (entry is PromptEntry && entry.parentId == null) {
                mark()
                if (inFront != null && index >= inFront) return
            }
            entriesMarked++
            index++
            exchange += entry
        }
        mark()
    }

    /**
     * Reads "Interrupted" marks again for the exchanges at the end, back to the one holding the
     * earliest of [changed] (entries added at the end or drawn anew): a turn going on costs its
     * own exchange, not the whole chat.
     */
    private fun markTail(changed: Collection<String>) {
        val pending = HashSet(changed)
        val tail = ArrayList<String>()
        for (key in transcript.keysFromEnd) {
            tail += key
            pending -= key
            val entry = transcript.entry(key)
            if (pending.isEmpty() && entry is PromptEntry && entry.parentId == null) break
        }
        markInterrupts(keys = tail.asReversed().asSequence())
    }

    private fun saysInterrupted(entry: Entry) =
        (entry is TextEntry && entry.aborted == true) || (entry is NoticeEntry && entry.subtype == "interrupted")

    private fun isStreaming(entry: Entry) =
        (entry is TextEntry && entry.streaming == true) || (entry is ThinkingEntry && entry.streaming == true)

    private fun flushStreaming() {
        if (streaming.isEmpty()) return
        for (key in streaming.toList().also { streaming.clear() }) {
            val entry = transcript.entry(key) ?: continue
            views[key]?.update(entry)
            entriesDrawn++
        }
        // A text's own changes repaint what they touch, and a moved or resized view repaints
        // its place: repainting the whole column would paint every visible line each time.
        column.revalidate()
    }

    private fun atEnd(): Boolean {
        val bar = scrollPane.verticalScrollBar
        return bar.value + bar.visibleAmount >= bar.maximum - FOLLOW_SLACK
    }

    /**
     * Keeps the end in sight while [following]: the bar's model changes when someone scrolls
     * (its value: the user, or this view) and when the entries grow or shrink (its maximum),
     * which they also do in EDT tasks after a change (an answer rendered a segment at a time).
     */
    private fun onScroll() {
        val bar = scrollPane.verticalScrollBar
        if (bar.value != scrolledTo) {
            scrolledTo = bar.value
            // Only the user (wheel, scroll bar, keys: an input event) takes the view away from
            // the end; a move of the layout's own (views made again after a theme switch, a
            // text's caret scrolling its ancestors) is undone while following.
            if (EventQueue.getCurrentEvent() is InputEvent) {
                following = atEnd()
            } else if (following && !atEnd()) {
                bar.value = bar.maximum - bar.visibleAmount
            }
        } else if (following && bar.value + bar.visibleAmount < bar.maximum) {
            bar.value = bar.maximum - bar.visibleAmount
        }
    }

    private fun relayout() {
        column.revalidate()
        column.repaint()
    }

    /** Stands for the slots not drawn: as tall as they are, nothing painted. */
    private class Spacer : JComponent() {
        private var tall = 0

        fun sizeTo(height: Int) {
            isVisible = height > 0
            if (height == tall) return
            tall = height
            revalidate()
        }

        override fun getPreferredSize() = Dimension(0, tall)

        override fun getMinimumSize() = preferredSize
    }

    companion object {
        const val STREAM_RENDER_MS = 60

        /** How many transcript views have an update of their window queued (EDT only): tests wait for none. */
        internal var windowsQueued = 0
            private set

        /** What an empty chat says. */
        const val EMPTY_HINT =
            "Ask Claude to explain, change or review the code of this folder. Enter sends, Shift+Enter starts a new line, Esc stops Claude."

        /** What the top of the transcript says while an older page is read. */
        const val LOADING_OLDER = "Loading earlier messages…"

        /** What the top of the transcript says while older entries exist, not being read. */
        const val OLDER_HINT = "Earlier messages: scroll up to read them"

        /** Up to this many entries (at the top level) every one is drawn; more are windowed. */
        const val WHOLE_UP_TO = 60

        /** Screens above and below the one in sight whose entries are drawn. */
        private const val MARGIN_SCREENS = 2

        /** Screens away from the one in sight beyond which drawn entries are dropped. */
        private const val KEEP_SCREENS = 4

        /** How long (ns) a task makes views beyond the screen before it leaves the rest to the next. */
        private const val MAKE_BUDGET_NS = 8_000_000L

        /** Screens from the top within which the page before is read. */
        private const val LOAD_SCREENS = 1

        /** The last entries drawn before the view has a width to measure them at. */
        private const val FIRST_SLOTS = 40

        /** Pixels between entries. */
        private const val GAP = 10

        /** How close to the end (pixels) still counts as "at the end": a new line keeps following. */
        private const val FOLLOW_SLACK = 48

        /** A rough height for an entry never drawn (at [width]): its spacer's share until it is drawn. */
        private fun guess(entry: Entry?, width: Int): Int {
            val perLine = (width / 7).coerceAtLeast(20)
            fun lines(text: String): Int {
                var lines = 1
                var run = 0
                for (ch in text) {
                    if (ch == '\n' || ++run >= perLine) {
                        lines++
                        run = 0
                    }
                }
                return lines
            }
            return when (entry) {
                is PromptEntry -> 16 + 18 * lines(entry.text)
                is TextEntry -> 20 * lines(entry.text)
                is ThinkingEntry -> 20
                is ToolEntry -> 22
                is TurnEntry -> 24
                is NoticeEntry -> 18
                null -> 0
            }
        }
    }
}
