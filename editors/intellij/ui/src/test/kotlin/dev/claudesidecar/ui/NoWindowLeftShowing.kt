package dev.claudesidecar.ui

import org.junit.jupiter.api.extension.AfterAllCallback
import org.junit.jupiter.api.extension.ExtensionContext
import java.awt.Dialog
import java.awt.Window

/**
 * Fails a test class that leaves a window showing, and closes that window. The ui tests share
 * one JVM and one display: a window left over takes the focus and the input of every class
 * after it (a modal message box shown while an app closed made 14 tests of later classes fail,
 * in an order of classes that only CI's file system gave). Failing the class that left it
 * names the culprit whatever the order. Registered for every class (junit-platform.properties);
 * it runs after the class's own `@AfterAll`.
 */
class NoWindowLeftShowing : AfterAllCallback {
    override fun afterAll(context: ExtensionContext) {
        // What the class's closing queued (a message box a cancelled task would show) runs first.
        repeat(2) { onEdt { } }
        val left = onEdt {
            Window.getWindows().filter { it.isShowing }.map { window ->
                window.dispose()
                describe(window)
            }
        }
        check(left.isEmpty()) { "${context.displayName} left windows showing (closed now): ${left.joinToString()}" }
    }

    private fun describe(window: Window): String {
        val kind = if (window is Dialog && window.isModal) "modal ${window.javaClass.simpleName}" else window.javaClass.simpleName
        val title = (window as? Dialog)?.title ?: (window as? java.awt.Frame)?.title
        return "$kind \"$title\": ${visibleText(window).take(200).replace('\n', ' ')}"
    }
}
