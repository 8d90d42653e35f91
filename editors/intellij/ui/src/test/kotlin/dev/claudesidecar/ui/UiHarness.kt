package dev.claudesidecar.ui

import java.awt.Component
import java.awt.Container
import java.awt.image.BufferedImage
import java.nio.file.Path
import javax.imageio.ImageIO
import javax.swing.AbstractButton
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.SwingUtilities
import javax.swing.text.JTextComponent
import kotlin.io.path.createDirectories

// Driving Swing from a test. The stand-in model, the sandbox and the client come from core's
// test harness (its test-jar: Model, Sandbox).

object UiHarness {
    val screenshots: Path by lazy {
        Path.of(System.getProperty("sidecar.screenshots") ?: "target/screenshots").createDirectories()
    }
}

/** Runs [block] on the EDT and returns its result (at once when called on the EDT). */
fun <T> onEdt(block: () -> T): T {
    if (SwingUtilities.isEventDispatchThread()) return block()
    var result: Result<T>? = null
    SwingUtilities.invokeAndWait { result = runCatching(block) }
    return result!!.getOrThrow()
}

/** Polls [condition] on the EDT until it holds; fails with [what] and the panel's text. */
fun waitFor(what: String, timeoutMs: Long = 60_000, describe: () -> String = { "" }, condition: () -> Boolean) {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (System.currentTimeMillis() < deadline) {
        if (onEdt(condition)) return
        Thread.sleep(50)
    }
    error("timed out waiting for $what; ${onEdt(describe)}")
}

/**
 * Waits until every answer has appended the markdown it parses on another thread, and is laid
 * out, and every transcript has made the views its window wants. In rounds: the transcript
 * makes views in EDT tasks of their own after the one that applied a batch (its window follows
 * the layout, a few views per task), and a view made then starts rendering only there; one
 * round could end in between (ci26 read a chat before its last answer was drawn).
 */
fun settle() {
    repeat(SETTLE_ROUNDS) {
        waitFor("the answers to render and the transcripts' views to be made") {
            AnswerView.rendering == 0 && TranscriptView.windowsQueued == 0
        }
        onEdt { }
    }
}

private const val SETTLE_ROUNDS = 3

/**
 * Turns the mouse wheel up over [pane] by [notches], as the user does: the event goes through
 * the event queue (a view tells the user's scrolling from its own by the event being dispatched).
 */
fun wheelUp(pane: javax.swing.JScrollPane, notches: Int) = onEdt {
    val wheel = java.awt.event.MouseWheelEvent(
        pane, java.awt.event.MouseEvent.MOUSE_WHEEL, System.currentTimeMillis(), 0, 20, 20, 0, false,
        java.awt.event.MouseWheelEvent.WHEEL_UNIT_SCROLL, 3, -notches,
    )
    java.awt.Toolkit.getDefaultToolkit().systemEventQueue.postEvent(wheel)
}

/** The text [c] itself shows (labels, buttons, text and HTML panes); null for other components. */
fun shownText(c: Component): String? = when (c) {
    is MarkdownView -> c.plainText
    is JTextComponent -> c.text
    is JLabel -> c.text
    is AbstractButton -> c.actionCommand.takeIf { c is javax.swing.JToggleButton } ?: c.text
    else -> null
}

/** Every text a user sees in a component tree, in order. */
fun visibleText(root: Component): String = buildList {
    fun walk(c: Component) {
        if (!c.isVisible) return
        shownText(c)?.let(::add)
        if (c is Container) c.components.forEach(::walk)
    }
    walk(root)
}.filter { it.isNotBlank() }.joinToString("\n")

/** All components of a tree of type [T]. */
inline fun <reified T : Component> find(root: Component): List<T> = allComponents(root).filterIsInstance<T>()

fun allComponents(root: Component): List<Component> = componentTree(root).toList()

/** Paints [component] into target/screenshots/[name].png. */
fun screenshot(component: JComponent, name: String): Path {
    if (!SwingUtilities.isEventDispatchThread()) settle()
    return onEdt { UiHarness.screenshots.resolve("$name.png").also { ImageIO.write(painted(component), "png", it.toFile()) } }
}

/** [component] as it paints now. EDT only. */
fun painted(component: JComponent): BufferedImage {
    val image = BufferedImage(component.width, component.height, BufferedImage.TYPE_INT_RGB)
    val g = image.createGraphics()
    component.paint(g)
    g.dispose()
    return image
}

/**
 * The texts of [root] that read below WCAG AA (4.5:1) as painted: for each showing label,
 * button and text pane, the colour its area shows most (its background) against the pixel
 * that differs from it most (its text's darkest or lightest stroke). That pixel is the best
 * the text achieves, so a text listed here is too faint whatever its anti-aliasing. EDT only.
 */
fun lowContrast(root: JComponent): List<String> {
    val image = painted(root)
    val found = mutableListOf<String>()
    for (c in allComponents(root)) {
        val text = shownText(c)
        if (text.isNullOrBlank() || !c.isShowing || c !is JComponent) continue
        val area = SwingUtilities.convertRectangle(c.parent, c.bounds, root)
            .intersection(SwingUtilities.convertRectangle(c.parent, c.parent.let { (it as? JComponent)?.visibleRect ?: it.bounds }, root))
            .intersection(java.awt.Rectangle(0, 0, root.width, root.height))
        if (area.width < 4 || area.height < 4) continue
        val counts = HashMap<Int, Int>()
        for (y in area.y until area.y + area.height) {
            for (x in area.x until area.x + area.width) {
                counts.merge(image.getRGB(x, y) and 0xFFFFFF, 1, Int::plus)
            }
        }
        val background = counts.maxBy { it.value }.key
        val best = counts.keys.maxOf { Theme.contrast(java.awt.Color(it), java.awt.Color(background)) }
        if (best < 4.5) found += "\"${text.lines().first().take(50)}\" ${"%.2f:1 on #%06x".format(best, background)}"
    }
    return found
}
