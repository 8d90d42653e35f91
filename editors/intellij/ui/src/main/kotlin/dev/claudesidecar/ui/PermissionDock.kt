package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.PermissionRequestNotification
import java.awt.KeyboardFocusManager
import javax.swing.AbstractButton
import javax.swing.JScrollBar
import javax.swing.SwingUtilities

/**
 * The cards of the pending permission requests, oldest first, docked above the prompt; [review]
 * (when given) shows a pending edit in the host's diff viewer.
 */
class PermissionDock(
    private val cwd: () -> String?,
    private val responder: Responder,
    private val review: ((PermissionRequestNotification) -> Unit)? = null,
) : ScrollableColumn(8) {
    private val cards = LinkedHashMap<String, PermissionCard>()

    init {
        border = padding(0, 12, 8, 12)
        isVisible = false
    }

    /**
     * Makes the cards of [pending] again, in the look and feel now in use, keeping what the user
     * had typed in them (a card is made alike for the same request: its fields come in the same
     * order). Chosen options are not kept: choosing one may already have answered.
     */
    fun restyle(pending: Map<String, PermissionRequestNotification>) {
        val typed = cards.mapValues { (_, card) -> card.typed }
        cards.values.forEach(::remove)
        cards.clear()
        show(pending)
        for ((id, card) in cards) card.typed = typed[id].orEmpty()
    }

    /**
     * Where Tab from the prompt goes in the oldest card: its primary button (Allow, Approve)
     * when enabled, else its first button (a question's first option); null without cards.
     * A diff's scroll bar buttons do not count.
     */
    fun firstButton(): AbstractButton? {
        val card = cards.values.firstOrNull() ?: return null
        val buttons = componentTree(card).filterIsInstance<AbstractButton>()
            .filter {
                it.isEnabled && it.isShowing && it.isFocusable &&
                    SwingUtilities.getAncestorOfClass(JScrollBar::class.java, it) == null
            }
            .toList()
        return buttons.firstOrNull { it.getClientProperty(PRIMARY) == true } ?: buttons.firstOrNull()
    }

    /** Whether a component of a card has the keyboard focus. */
    fun hasFocusedDescendant(): Boolean =
        KeyboardFocusManager.getCurrentKeyboardFocusManager().focusOwner?.let { SwingUtilities.isDescendingFrom(it, this) } == true

    /** Shows a card per pending request; true when cards came or went. */
    fun show(pending: Map<String, PermissionRequestNotification>): Boolean {
        val gone = cards.keys - pending.keys
        for (id in gone) remove(cards.remove(id))
        val added = pending.filterKeys { it !in cards }
        for ((id, request) in added) cards[id] = PermissionCard.of(request, cwd(), responder, review).also { add(it) }
        isVisible = cards.isNotEmpty()
        val changed = gone.isNotEmpty() || added.isNotEmpty()
        if (changed) {
            revalidate()
            repaint()
        }
        return changed
    }
}
