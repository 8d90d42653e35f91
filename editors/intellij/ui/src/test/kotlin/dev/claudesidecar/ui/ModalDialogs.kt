package dev.claudesidecar.ui

import java.awt.Window
import javax.swing.JButton
import javax.swing.JDialog
import javax.swing.SwingUtilities
import javax.swing.text.JTextComponent

// Going through modal dialogs as a user does, from a test thread. A modal dialog runs its own
// event loop inside the click that opened it: the click is queued (clickLater), the test
// waits for the dialog to show (awaitDialog), works in it on the EDT, then presses a button.

/** Clicks [button] without waiting for the click to end (it may open a modal dialog). */
fun clickLater(button: JButton) = SwingUtilities.invokeLater { button.doClick() }

/** The showing dialog titled one of [titles], once one shows; fails naming the dialogs showing instead. */
fun awaitDialog(vararg titles: String, timeoutMs: Long = 60_000): JDialog {
    fun showing() = Window.getWindows().filterIsInstance<JDialog>().filter { it.isShowing }
    var found: JDialog? = null
    val what = "a dialog titled " + titles.joinToString(" or ") { "\"$it\"" }
    waitFor(what, timeoutMs, describe = { "showing: ${showing().map { it.title }}" }) {
        found = showing().firstOrNull { it.title in titles }
        found != null
    }
    return found!!
}

/** The button of [dialog] that reads [text]. */
fun buttonOf(dialog: JDialog, text: String): JButton = onEdt { find<JButton>(dialog.contentPane).single { it.text == text } }

/** Presses [dialog]'s button [text] and waits until the dialog no longer shows. */
fun press(dialog: JDialog, text: String) {
    clickLater(buttonOf(dialog, text))
    waitFor("\"${dialog.title}\" to close after $text") { !dialog.isShowing }
}

/** The text a message dialog shows (its text, not its buttons). */
fun messageOf(dialog: JDialog): String = onEdt { find<JTextComponent>(dialog.contentPane).joinToString("\n") { it.text } }
