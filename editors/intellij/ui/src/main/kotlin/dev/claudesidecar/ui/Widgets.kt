package dev.claudesidecar.ui

import java.awt.BasicStroke
import java.awt.Color
import java.awt.Component
import java.awt.Container
import java.awt.Cursor
import java.awt.Font
import java.awt.Graphics
import java.awt.Graphics2D
import java.awt.Insets
import java.awt.RenderingHints
import javax.swing.BorderFactory
import javax.swing.Box
import javax.swing.BoxLayout
import javax.swing.JButton
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JPanel
import javax.swing.JTextArea
import javax.swing.text.DefaultCaret

// Small building blocks shared by the chat's views, so they look alike.

/** Read-only text that wraps at word boundaries and can be selected and copied. */
fun wrappingText(text: String, font: Font = Theme.font, colour: Color = Theme.foreground) = JTextArea().apply {
    // Before the text goes in: a caret that follows the text scrolls every viewport around it
    // to the text's end once it shows (the transcript would jump to some earlier entry).
    (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
    this.text = text
    lineWrap = true
    wrapStyleWord = true
    isEditable = false
    isOpaque = false
    border = null
    this.font = font
    foreground = colour
}

fun mutedLabel(text: String, font: Font = Theme.smallFont) = JLabel(text).apply {
    this.font = font
    foreground = Theme.muted
}

/**
 * A button that shows a focus ring of its own when it has the keyboard focus: the look and
 * feel's ring is the accent colour, which does not show on an accent button (and a link
 * button has none), so Tab through a card would not show where the focus is.
 */
open class ChatButton(text: String) : JButton(text) {
    override fun paint(g: Graphics) {
        super.paint(g)
        if (!isFocusOwner) return
        val g2 = g.create() as Graphics2D
        g2.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON)
        g2.stroke = BasicStroke(2f)
        // Inside the button's bounds (a parent may clip anything outside): the text's colour
        // reads on the button's own background, the accent on a flat link.
        g2.color = if (isContentAreaFilled) foreground else Theme.accent
        g2.drawRoundRect(2, 2, width - 5, height - 5, 8, 8)
        g2.dispose()
    }
}

/** The client property that marks a [primaryButton]. */
const val PRIMARY = "claude.primary"

/** The button of the expected answer: the accent colour, whatever the look and feel. */
fun primaryButton(text: String, action: () -> Unit) = ChatButton(text).apply {
    putClientProperty(PRIMARY, true)
    stylePrimary(this)
    putClientProperty("JButton.buttonType", "roundRect")
    addActionListener { action() }
}

/** The accent colours of [button]; again after a new look and feel, which resets them. */
fun stylePrimary(button: JButton) {
    button.background = Theme.accent
    button.foreground = Color.WHITE
}

fun button(text: String, action: () -> Unit) = ChatButton(text).apply { addActionListener { action() } }

/** A borderless text button, like the IDE's links in tool windows. */
fun linkButton(text: String, action: () -> Unit): JButton = LinkButton(text).apply {
    isBorderPainted = false
    isContentAreaFilled = false
    isFocusPainted = false
    margin = Insets(0, 0, 0, 0)
    cursor = Cursor.getPredefinedCursor(Cursor.HAND_CURSOR)
    addActionListener { action() }
}

/** [linkButton]'s button: its colour reads on the panel in every theme (a new look and feel
 * calls updateUI, which would otherwise leave the old theme's colour). */
private class LinkButton(text: String) : ChatButton(text) {
    override fun updateUI() {
        super.updateUI()
        foreground = Theme.link
    }
}

/** A left-aligned row of components (buttons, labels), flush with the column's left edge. */
fun row(vararg components: JComponent?, gap: Int = 6) = JPanel().apply {
    layout = BoxLayout(this, BoxLayout.X_AXIS)
    isOpaque = false
    components.filterNotNull().forEachIndexed { i, c ->
        if (i > 0) add(Box.createHorizontalStrut(gap))
        add(c)
    }
    add(Box.createHorizontalGlue())
}

/** [root] and every component inside it, depth first, in layout order. */
fun componentTree(root: Component): Sequence<Component> = sequence {
    yield(root)
    if (root is Container) root.components.forEach { yieldAll(componentTree(it)) }
}

fun padding(top: Int, left: Int, bottom: Int, right: Int) = BorderFactory.createEmptyBorder(top, left, bottom, right)

/** A path relative to the chat's folder when it is inside it. */
fun relativePath(path: String, cwd: String?): String = if (cwd != null && path.startsWith("$cwd/")) path.removePrefix("$cwd/") else path
