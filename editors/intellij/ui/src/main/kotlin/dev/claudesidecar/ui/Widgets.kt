package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Component
import java.awt.Container
import java.awt.Cursor
import java.awt.Font
import java.awt.Insets
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
fun wrappingText(text: String, font: Font = Theme.font, colour: Color = Theme.foreground) = JTextArea(text).apply {
    lineWrap = true
    wrapStyleWord = true
    isEditable = false
    isOpaque = false
    border = null
    this.font = font
    foreground = colour
    (caret as? DefaultCaret)?.updatePolicy = DefaultCaret.NEVER_UPDATE
}

fun mutedLabel(text: String, font: Font = Theme.smallFont) = JLabel(text).apply {
    this.font = font
    foreground = Theme.muted
}

/** The button of the expected answer: the accent colour, whatever the look and feel. */
fun primaryButton(text: String, action: () -> Unit) = JButton(text).apply {
    stylePrimary(this)
    putClientProperty("JButton.buttonType", "roundRect")
    addActionListener { action() }
}

/** The accent colours of [button]; again after a new look and feel, which resets them. */
fun stylePrimary(button: JButton) {
    button.background = Theme.accent
    button.foreground = Color.WHITE
}

fun button(text: String, action: () -> Unit) = JButton(text).apply { addActionListener { action() } }

/** A borderless text button, like the IDE's links in tool windows. */
fun linkButton(text: String, action: () -> Unit) = JButton(text).apply {
    isBorderPainted = false
    isContentAreaFilled = false
    isFocusPainted = false
    margin = Insets(0, 0, 0, 0)
    foreground = Theme.accent
    cursor = Cursor.getPredefinedCursor(Cursor.HAND_CURSOR)
    addActionListener { action() }
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
