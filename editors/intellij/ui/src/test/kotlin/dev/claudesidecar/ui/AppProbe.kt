package dev.claudesidecar.ui

import java.awt.Frame
import java.awt.KeyboardFocusManager
import java.awt.Rectangle
import java.awt.Window
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.util.Properties
import javax.swing.JDialog
import javax.swing.JFrame
import javax.swing.JScrollPane
import kotlin.io.path.outputStream

/**
 * A Java agent that lets a test see the app it started as a separate process (`java
 * -javaagent:probe.jar=FILE -jar claude-sidecar-ui-VERSION.jar …`, [AppJarIT]): every 100 ms
 * it writes what the app's window shows to FILE, a properties file (see [snapshot]). It only
 * reads Swing; the keys and clicks come from outside, through the X server, as a user's do.
 */
object AppProbe {
    @JvmStatic
    fun premain(file: String) {
        val out = Path.of(file)
        val part = out.resolveSibling("${out.fileName}.part")
        val thread = Thread({
            while (true) {
                runCatching { onEdt(::snapshot) }.getOrNull()?.let { shown ->
                    part.outputStream().use { shown.store(it, null) }
                    // The test never reads half a snapshot.
                    Files.move(part, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
                }
                Thread.sleep(100)
            }
        }, "app-probe")
        thread.isDaemon = true
        thread.start()
    }

    /**
     * The showing app window: `title`, `bounds` (on screen), `text` (every text it shows, as
     * [visibleText]), `dialogs` (each showing dialog's title and texts), and of the selected chat: `chatOpen` (its chat is attached), `transcript`
     * and `prompt` (their bounds on screen), `promptText`, `promptFocused`. Null before the
     * window shows. EDT only.
     */
    private fun snapshot(): Properties? {
        val frame = Frame.getFrames().firstOrNull { it is JFrame && it.isShowing } as JFrame? ?: return null
        val shown = Properties()
        shown["title"] = frame.title
        shown["bounds"] = bounds(Rectangle(frame.locationOnScreen, frame.size))
        shown["text"] = visibleText(frame.rootPane)
        shown["dialogs"] = Window.getWindows().filterIsInstance<JDialog>().filter { it.isShowing }
            .joinToString("\n\n") { "${it.title}\n${visibleText(it.rootPane)}" }
        val panel = find<ChatPanel>(frame.rootPane).firstOrNull { it.isShowing } ?: return shown
        val prompt = panel.prompt.text
        val transcript = find<JScrollPane>(panel).first { it.viewport.view is ScrollableColumn && it.viewport.view !is PermissionDock }
        shown["transcript"] = bounds(Rectangle(transcript.locationOnScreen, transcript.size))
        shown["chatOpen"] = (panel.chat != null).toString()
        shown["prompt"] = bounds(Rectangle(prompt.locationOnScreen, prompt.size))
        shown["promptText"] = prompt.text
        shown["promptFocused"] = (KeyboardFocusManager.getCurrentKeyboardFocusManager().focusOwner === prompt).toString()
        return shown
    }

    private fun bounds(r: Rectangle) = "${r.x},${r.y},${r.width},${r.height}"
}
