package dev.claudesidecar.ui

import dev.claudesidecar.core.Harness
import dev.claudesidecar.core.Model
import dev.claudesidecar.core.Sandbox
import dev.claudesidecar.core.assertAllGone
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.TestMethodOrder
import java.awt.Color
import java.awt.Rectangle
import java.awt.Robot
import java.awt.event.InputEvent
import java.awt.event.KeyEvent
import java.awt.image.BufferedImage
import java.nio.file.Files
import java.nio.file.Path
import java.util.Properties
import java.util.concurrent.TimeUnit
import java.util.jar.Attributes
import java.util.jar.JarFile
import java.util.jar.JarOutputStream
import java.util.jar.Manifest
import java.util.zip.ZipEntry
import javax.imageio.ImageIO
import kotlin.io.path.createDirectories
import kotlin.io.path.exists
import kotlin.io.path.inputStream
import kotlin.io.path.name
import kotlin.io.path.outputStream
import kotlin.io.path.readText
import kotlin.io.path.writeText

/**
 * The standalone app as released: one jar (ui/target/app/claude-sidecar-ui-VERSION.jar, built
 * by `package`), started with `java -jar` as a process of its own, as a user starts it. It finds
 * `claude-sidecar` on PATH and runs the real daemon and CLI against the stand-in model, under
 * Xvfb. The test types and clicks through the X server (java.awt.Robot) and sees the window
 * through the screen and through [AppProbe], a Java agent that reports what the window shows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class AppJarIT {
    private val jar: Path = Path.of(System.getProperty("sidecar.appJar") ?: error("sidecar.appJar is not set (run through Maven)"))
    private val java: String = Path.of(System.getProperty("java.home"), "bin", "java").toString()
    private lateinit var model: Model
    private lateinit var sandbox: Sandbox
    private lateinit var robot: Robot
    private lateinit var app: Process
    private lateinit var shownFile: Path
    private val pids = mutableSetOf<Long>()

    @BeforeAll
    fun start() {
        check(jar.exists()) { "$jar is missing: `mvn package` in editors/intellij builds it" }
        model = Model.start("/app-scenario.json")
        sandbox = Sandbox(model)
        sandbox.workspace.resolve("hello.py").writeText("print('hello')\n")
        robot = Robot()
    }

    @AfterAll
    fun stop() {
        if (::app.isInitialized && app.isAlive) {
            app.destroy()
            app.waitFor(10, TimeUnit.SECONDS)
        }
        assertAllGone(pids)
        if (::sandbox.isInitialized) sandbox.close()
        if (::model.isInitialized) model.close()
    }

    @Test
    @Order(1)
    fun `the jar names the app as its main class and holds every class it runs, unsigned`() {
        JarFile(jar.toFile()).use { file ->
            val manifest = file.manifest.mainAttributes
            assertEquals(App::class.java.name, manifest.getValue(Attributes.Name.MAIN_CLASS))
            assertEquals("true", manifest.getValue(Attributes.Name.MULTI_RELEASE), "the dependencies' Java 9+ classes apply")
            val names = file.entries().asSequence().map { it.name }.toSet()
            // One class of each: ui, core, Kotlin, coroutines (Swing), lsp4j, Gson, commonmark (tables), FlatLaf.
            val needed = listOf(
                "dev/claudesidecar/ui/App.class",
                "dev/claudesidecar/core/SidecarClient.class",
                "kotlin/Unit.class",
                "kotlinx/coroutines/swing/SwingDispatcher.class",
                "org/eclipse/lsp4j/jsonrpc/Launcher.class",
                "com/google/gson/Gson.class",
                "org/commonmark/parser/Parser.class",
                "org/commonmark/ext/gfm/tables/TablesExtension.class",
                "com/formdev/flatlaf/FlatLightLaf.class",
            )
            assertEquals(emptyList<String>(), needed.filter { it !in names }, "classes missing from the jar")
            val signatures = names.filter { Regex("""META-INF/[^/]+\.(SF|DSA|RSA|EC)""").matches(it) }
            assertEquals(emptyList<String>(), signatures, "a dependency's signature does not sign the merged jar")
            val mainDispatchers = file.getInputStream(file.getEntry("META-INF/services/kotlinx.coroutines.internal.MainDispatcherFactory"))
                .bufferedReader().readText()
            assertTrue(mainDispatchers.contains("kotlinx.coroutines.swing.SwingDispatcherFactory"), mainDispatchers)
        }
    }

    @Test
    @Order(2)
    fun `java -jar with an unknown option prints the usage and exits with 2`() {
        val run = ProcessBuilder(java, "-jar", jar.toString(), "--no-such-option").redirectErrorStream(true).start()
        val output = run.inputStream.bufferedReader().readText()
        assertTrue(run.waitFor(60, TimeUnit.SECONDS))
        assertEquals(2, run.exitValue(), output)
        assertTrue(output.contains("usage: java -jar ${jar.name} "), "the usage names the jar: $output")
    }

    @Test
    @Order(3)
    fun `started with java -jar, it runs claude-sidecar from PATH and shows a chat whose prompt has the focus`() {
        val bin = Harness.consoleScript
        check(bin.name == "claude-sidecar") { "the app looks for claude-sidecar on PATH; $bin is named otherwise" }
        launch(path = "${bin.parent}:${System.getenv("PATH")}")

        val shown =
            awaitShown("the chat to open with the focus in its prompt") { it["chatOpen"] == "true" && it["promptFocused"] == "true" }
        assertEquals("Claude — ${sandbox.workspace.fileName}", shown["title"])
        assertTrue(shown.text().contains(TranscriptView.EMPTY_HINT), shown.text())
        val daemon = app.children().toList().map { it.info().commandLine().orElse("") }
        assertTrue(daemon.any { it.contains("$bin --stdio") }, "the app's daemon: $daemon")
        notePids()
        val screen = capture("jar-1-empty", shown)
        assertTrue(isWindow(screen), "the screen shows the app's light window where it says it is")
    }

    @Test
    @Order(4)
    fun `a prompt typed into the jar's window and sent with Enter is answered there`() {
        val prompt = awaitShown("the prompt") { it["prompt"] != null }.rect("prompt")
        robot.mouseMove(prompt.x + prompt.width / 2, prompt.y + prompt.height / 2)
        robot.mousePress(InputEvent.BUTTON1_DOWN_MASK)
        robot.mouseRelease(InputEvent.BUTTON1_DOWN_MASK)
        type("please explain hello.py")
        awaitShown("the typed prompt") { it["promptText"] == "please explain hello.py" }
        press(KeyEvent.VK_ENTER)
        // The answer, then the turn's footer with its duration: the turn has ended.
        val shown = awaitShown("the answer") {
            it.text().contains("prints a greeting") && Regex("""\d+\.\d s""").containsMatchIn(it.text())
        }
        assertEquals("", shown["promptText"], "Enter sent the prompt and emptied the area")
        assertTrue(shown.text().contains("please explain hello.py"), shown.text())
        notePids()
        val after = capture("jar-2-answer", shown)
        assertTrue(isWindow(after), "the app's window is still on screen")
        // Where the transcript is, the screen showed the empty chat's hint; now it shows the turn.
        val transcript = shown.rect("transcript")
        val frame = shown.rect("bounds")
        fun transcriptOf(image: BufferedImage) =
            image.getSubimage(transcript.x - frame.x, transcript.y - frame.y, transcript.width, transcript.height)
        val before = ImageIO.read(UiHarness.screenshots.resolve("jar-1-empty.png").toFile())
        assertTrue(differ(transcriptOf(before), transcriptOf(after)), "the screen's transcript shows the turn, not the empty chat")
        // The CLI the daemon ran stored the session under the app's HOME: the whole chain ran.
        val stored = Files.walk(sandbox.home.resolve(".claude/projects")).use { files ->
            files.filter { it.name.endsWith(".jsonl") }.toList().joinToString("\n") { it.readText() }
        }
        assertTrue(stored.contains("please explain hello.py") && stored.contains("prints a greeting"), stored.take(2000))
    }

    @Test
    @Order(5)
    fun `ending the app ends its daemon and the CLIs`() {
        notePids()
        assertTrue(pids.size >= 2, "the daemon and a CLI ran: $pids")
        app.destroy()
        assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the app ended")
        assertAllGone(pids)
    }

    @Test
    @Order(6)
    fun `started without claude-sidecar on PATH, it says which command did not start and that --daemon sets it`() {
        launch(path = sandbox.root.resolve("bin-without-claude-sidecar").createDirectories().toString())
        val shown = awaitShown("the error") { it.getProperty("dialogs", "").contains("Cannot open the chat") }
        val dialog = shown.getProperty("dialogs")
        assertTrue(dialog.contains("cannot start the daemon `claude-sidecar --stdio`"), dialog)
        assertTrue(dialog.contains("the --daemon option sets the daemon's command"), dialog)
        app.destroy()
        assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the app ended")
    }

    /**
     * Starts the app's jar with `java -jar` on the sandbox's folder, in its environment (its
     * HOME, the stand-in model) with [path] as PATH, and [AppProbe] reporting the window.
     */
    private fun launch(path: String) {
        shownFile = sandbox.root.resolve("shown-${System.nanoTime()}.properties")
        val builder = ProcessBuilder(java, "-javaagent:${probeJar()}=$shownFile", "-jar", jar.toString(), "--cwd", sandbox.cwd)
            .redirectErrorStream(true)
            .redirectOutput(sandbox.root.resolve("app.log").toFile())
        val env = builder.environment()
        for ((key, value) in sandbox.env) if (value == null) env.remove(key) else env[key] = value
        env["PATH"] = path
        app = builder.start()
    }

    /** The agent jar of [AppProbe] (with the harness it uses), made from the test classes. */
    private fun probeJar(): Path {
        val classes = Path.of(AppProbe::class.java.protectionDomain.codeSource.location.toURI())
        val dir = classes.resolve("dev/claudesidecar/ui")
        val manifest = Manifest().apply {
            mainAttributes[Attributes.Name.MANIFEST_VERSION] = "1.0"
            mainAttributes.putValue("Premain-Class", AppProbe::class.java.name)
        }
        val probe = sandbox.root.resolve("app-probe.jar")
        JarOutputStream(probe.outputStream(), manifest).use { out ->
            Files.list(dir).use { files ->
                files.filter { it.name.startsWith("AppProbe") || it.name.startsWith("UiHarness") }.forEach { file ->
                    out.putNextEntry(ZipEntry(classes.relativize(file).joinToString("/")))
                    file.inputStream().use { it.copyTo(out) }
                    out.closeEntry()
                }
            }
        }
        return probe
    }

    /** Waits until the app's window, as [AppProbe] last reported it, meets [condition]; fails with it and the app's output. */
    private fun awaitShown(what: String, timeoutMs: Long = 60_000, condition: (Properties) -> Boolean): Properties {
        val deadline = System.currentTimeMillis() + timeoutMs
        var last = Properties()
        while (System.currentTimeMillis() < deadline) {
            check(app.isAlive) { "the app ended (exit ${app.exitValue()}): ${log()}" }
            if (shownFile.exists()) last = Properties().apply { shownFile.inputStream().use { load(it) } }
            if (condition(last)) return last
            Thread.sleep(50)
        }
        error("timed out waiting for $what; the window showed $last; the app wrote: ${log()}")
    }

    private fun log() = sandbox.root.resolve("app.log").takeIf { it.exists() }?.readText()?.takeLast(4000) ?: ""

    private fun Properties.text() = getProperty("text", "")

    private fun Properties.rect(key: String): Rectangle =
        getProperty(key).split(",").map(String::toInt).let { (x, y, w, h) -> Rectangle(x, y, w, h) }

    /** The app's process and its descendants (the daemon, the CLIs) as they are now. */
    private fun notePids() {
        pids += app.pid()
        pids += app.descendants().map { it.pid() }.toList()
    }

    /** Types [text] (lower-case letters, spaces and dots) key by key, through the X server. */
    private fun type(text: String) {
        for (c in text) {
            press(
                when (c) {
                    in 'a'..'z' -> KeyEvent.VK_A + (c - 'a')
                    ' ' -> KeyEvent.VK_SPACE
                    '.' -> KeyEvent.VK_PERIOD
                    else -> error("no key for '$c'")
                },
            )
        }
    }

    private fun press(key: Int) {
        robot.keyPress(key)
        robot.keyRelease(key)
    }

    /** The screen where the app's window is, into target/screenshots/[name].png. */
    private fun capture(name: String, shown: Properties): BufferedImage {
        val image = robot.createScreenCapture(shown.rect("bounds"))
        ImageIO.write(image, "png", UiHarness.screenshots.resolve("$name.png").toFile())
        return image
    }

    /** Whether [image] shows a light window: most of it one light colour (the theme's background), with text on it. */
    private fun isWindow(image: BufferedImage): Boolean {
        val counts = HashMap<Int, Int>()
        for (y in 0 until image.height) for (x in 0 until image.width) counts.merge(image.getRGB(x, y) and 0xFFFFFF, 1, Int::plus)
        val (background, count) = counts.maxBy { it.value }
        val light = Theme.contrast(Color(background), Color.BLACK) > 15
        val dark = counts.keys.any { Theme.contrast(Color(it), Color(background)) > 7 }
        return light && count > image.width * image.height / 4 && dark
    }

    private fun differ(a: BufferedImage, b: BufferedImage): Boolean = a.width != b.width || a.height != b.height ||
        (0 until a.height).any { y -> (0 until a.width).any { x -> a.getRGB(x, y) != b.getRGB(x, y) } }
}
