package dev.claudesidecar.core

import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.invariantSeparatorsPathString
import kotlin.io.path.isRegularFile
import kotlin.io.path.readText
import kotlin.io.path.relativeTo

// The package graph of the IntelliJ client's Kotlin sources (core, ui and plugin, main and test),
// read from their text as madge reads the VS Code client's: no compiler, so the plugin, which is
// not built here, is read too (PackageCyclesTest checks it, run by scripts/lint.sh).
//
// A file uses a package by an import (`as` and `*` ones too) or by a fully qualified name in its
// code; comments and string literals do not count, nor do uses within the package. A package's
// test sources are a node of their own, `P (test)`: they compile after the main sources, which
// cannot use them, so a test reaching into a package above its own closes no cycle of the main
// code. A use from a test file goes to `P (test)` when the name it uses is declared in P's test
// sources only, else to `P`.

/** A Kotlin source file: its [module] (`core`, `ui`, `plugin`), its [path] from editors/intellij, whether a [test] source. */
class SourceFile(
    val module: String,
    val path: String,
    val test: Boolean,
    val text: String,
) {
    /** The text with comments and the insides of string and character literals blanked (string templates kept). */
    val code: String by lazy { KotlinText.code(text) }

    /** The package the file declares (`""`: none). */
    val pkg: String by lazy { KotlinText.PACKAGE.find(code)?.groupValues?.get(1) ?: "" }

    private val lineStarts: List<Int> by lazy { listOf(0) + text.indices.filter { text[it] == '\n' }.map { it + 1 } }

    /** The number of the line at [offset] (from 1). */
    fun lineAt(offset: Int): Int = lineStarts.binarySearch(offset).let { if (it >= 0) it + 1 else -it - 1 }
}

/** A use of package [pkg] at [line] of [file]: of its top-level [name] (null: the package itself, `*`), written as [text]. */
data class Reference(
    val file: SourceFile,
    val line: Int,
    val pkg: String,
    val name: String?,
    val text: String,
) {
    override fun toString() = "${file.path}:$line $text"
}

/** The graph of the packages of [files]; [layers] are the modules in order: each may use itself and those before it. */
class PackageGraph(
    val files: List<SourceFile>,
    private val layers: List<String>,
) {
    /** The packages the files declare. */
    val packages: Set<String> = files.map { it.pkg }.toSet()

    /** The top-level names each package declares, in its main (false) and its test (true) sources. */
    private val declared: Map<Pair<String, Boolean>, Set<String>> = files.groupBy { it.pkg to it.test }
        .mapValues { (_, sources) -> sources.flatMap { KotlinText.topLevelNames(it.code) }.toSet() }

    /** Each use of another package, by file. */
    val references: Map<SourceFile, List<Reference>> = files.associateWith(::referencesOf)

    /** Each edge between two nodes with the references that make it, in file order. */
    val edges: Map<Pair<String, String>, List<Reference>> = buildMap<Pair<String, String>, MutableList<Reference>> {
        for ((file, refs) in references) {
            for (ref in refs) {
                for (to in targets(ref)) {
                    val from = node(file.pkg, file.test)
                    if (to != from) getOrPut(from to to) { mutableListOf() } += ref
                }
            }
        }
    }

    /** The nodes each node uses. */
    val graph: Map<String, Set<String>> = edges.keys.groupBy({ it.first }) { it.second }.mapValues { it.value.toSet() }

    /** One cycle per knot of packages ([Cycles.find]). */
    fun cycles(): List<List<String>> = Cycles.find(graph)

    /** [cycle] on one line, then each of its edges with the first reference that makes it. */
    fun describe(cycle: List<String>): String = buildString {
        append(cycle.joinToString(" -> "))
        for ((from, to) in cycle.zipWithNext()) {
            val refs = edges.getValue(from to to)
            append("\n    $from -> $to: ${refs.first()}")
            if (refs.size > 1) append(" (and ${refs.size - 1} more)")
        }
    }

    /** The packages declared in more than one module, with those modules (a package lives in one module). */
    fun splitPackages(): Map<String, Set<String>> =
        files.groupBy({ it.pkg }) { it.module }.mapValues { it.value.toSet() }.filterValues { it.size > 1 }

    /** Each use of a package in a module its file's module must not use (one after it in [layers]). */
    fun layerViolations(): List<String> {
        val moduleOf = files.associate { it.pkg to it.module }
        return references.values.flatten().mapNotNull { ref ->
            val used = moduleOf[ref.pkg] ?: return@mapNotNull null
            val allowed = layers.take(layers.indexOf(ref.file.module) + 1)
            if (used in allowed) null else "${ref.file.module} must not use $used: $ref"
        }
    }

    /** A package's node: its main sources (`P`) or its test sources (`P (test)`). */
    fun node(pkg: String, test: Boolean): String = if (test) "$pkg (test)" else pkg

    /** The nodes [ref] uses: in a test file, the test node of the package whose test sources alone declare the name. */
    private fun targets(ref: Reference): List<String> {
        if (!ref.file.test) return listOf(ref.pkg)
        val inTests = declared[ref.pkg to true].orEmpty()
        val inMain = declared[ref.pkg to false].orEmpty()
        return when {
            ref.name == null -> listOfNotNull(ref.pkg, node(ref.pkg, true).takeIf { inTests.isNotEmpty() })
            ref.name in inTests && ref.name !in inMain -> listOf(node(ref.pkg, true))
            else -> listOf(ref.pkg)
        }
    }

    /** [file]'s uses of other packages of these files: its imports, then the qualified names in its code. */
    private fun referencesOf(file: SourceFile): List<Reference> {
        val refs = mutableListOf<Reference>()
        val rest = StringBuilder(file.code)
        fun blank(range: IntRange) = range.forEach { if (rest[it] != '\n') rest.setCharAt(it, ' ') }
        KotlinText.PACKAGE.find(file.code)?.let { blank(it.range) }
        for (match in KotlinText.IMPORT.findAll(file.code)) {
            blank(match.range)
            val path = match.groupValues[1]
            val star = match.groupValues[2].isNotEmpty()
            val (pkg, name) = resolve(path) ?: continue
            val text = "import $path" + if (star) ".*" else ""
            refs += Reference(file, file.lineAt(match.range.first), pkg, if (star && pkg == path) null else name, text)
        }
        for (match in KotlinText.QUALIFIED.findAll(rest)) {
            val (pkg, name) = resolve(match.value) ?: continue
            refs += Reference(file, file.lineAt(match.range.first), pkg, name, match.value)
        }
        return refs.filter { it.pkg != file.pkg }
    }

    /** The package a dotted [path] names or starts with (the longest of [packages]), and the name after it. */
    private fun resolve(path: String): Pair<String, String?>? {
        val pkg = packages.filter { it.isNotEmpty() && (path == it || path.startsWith("$it.")) }.maxByOrNull { it.length } ?: return null
        return pkg to path.removePrefix(pkg).removePrefix(".").substringBefore('.').ifEmpty { null }
    }

    companion object {
        /** The Kotlin files under `<module>/src` of each module of [layers] in [root] (editors/intellij). */
        fun read(root: Path, layers: List<String>): PackageGraph {
            val files = layers.flatMap { module ->
                val src = root.resolve(module).resolve("src")
                if (!Files.isDirectory(src)) return@flatMap emptyList()
                Files.walk(src).use { paths ->
                    paths.filter { it.isRegularFile() && it.toString().endsWith(".kt") }.sorted().toList().map { path ->
                        val relative = path.relativeTo(root).invariantSeparatorsPathString
                        SourceFile(module, relative, relative.startsWith("$module/src/test/"), path.readText())
                    }
                }
            }
            return PackageGraph(files, layers)
        }
    }
}

/** Cycles in a directed graph. */
object Cycles {
    /**
     * One cycle per knot of [graph] (a strongly connected component of two or more nodes, or a node
     * using itself): the shortest through the knot's first node in sorted order, which starts and
     * ends it (`a -> b -> a` is `[a, b, a]`). Sorted by that first node; empty when [graph] has no cycle.
     */
    fun find(graph: Map<String, Set<String>>): List<List<String>> {
        // Tarjan's strongly connected components.
        val index = mutableMapOf<String, Int>()
        val low = mutableMapOf<String, Int>()
        val stack = ArrayDeque<String>()
        val components = mutableListOf<Set<String>>()
        fun connect(v: String) {
            index[v] = index.size
            low[v] = index.getValue(v)
            stack.addLast(v)
            for (w in graph[v].orEmpty().sorted()) {
                if (w !in index) {
                    connect(w)
                    low[v] = minOf(low.getValue(v), low.getValue(w))
                } else if (w in stack) {
                    low[v] = minOf(low.getValue(v), index.getValue(w))
                }
            }
            if (low[v] == index[v]) {
                val component = mutableSetOf<String>()
                do {
                    val w = stack.removeLast()
                    component += w
                } while (w != v)
                components += component
            }
        }
        for (v in (graph.keys + graph.values.flatten()).sorted()) if (v !in index) connect(v)
        return components.filter { it.size > 1 || it.single() in graph[it.single()].orEmpty() }
            .map { shortestCycle(graph, it) }
            .sortedBy { it.first() }
    }

    /** The shortest cycle through the first node of [component] (breadth first, within the component). */
    private fun shortestCycle(graph: Map<String, Set<String>>, component: Set<String>): List<String> {
        val start = component.min()
        val previous = mutableMapOf<String, String>()
        val queue = ArrayDeque(listOf(start))
        while (queue.isNotEmpty()) {
            val v = queue.removeFirst()
            for (w in graph[v].orEmpty().sorted()) {
                if (w == start) return generateSequence(v) { previous[it] }.toList().reversed() + start
                if (w in component && w !in previous) {
                    previous[w] = v
                    queue.addLast(w)
                }
            }
        }
        error("no cycle through $start")
    }
}

/** What the graph reads of Kotlin's syntax. */
object KotlinText {
    /** The `package` line (in [code]). */
    val PACKAGE = Regex("""^[ \t]*package[ \t]+((?:\w+\.)*\w+)""", RegexOption.MULTILINE)

    /** An `import` line: the dotted path, then `.*` for a star import (an `as` alias is left out). */
    val IMPORT = Regex("""^[ \t]*import[ \t]+((?:\w+\.)*\w+)(\.\*)?""", RegexOption.MULTILINE)

    /** A dotted name not after a dot (`a.b.C`, `a.b.C.d()`); which are packages, the graph decides. */
    val QUALIFIED = Regex("""(?<![\w.])[a-z_]\w*(?:\.\w+)+""")

    /** A top-level declaration (at the start of a line, as ktlint lays them out) and its name (after a receiver). */
    private val DECLARATION = Regex(
        """^(?:@[\w.]+(?:\([^)\n]*\))?[ \t]+)*""" +
            """(?:(?:public|private|internal|protected|expect|actual|abstract|final|open|sealed|data|enum|annotation|value|""" +
            """inline|const|lateinit|suspend|operator|infix|tailrec|external|fun)[ \t]+)*""" +
            """(?:class|interface|object|fun|val|var|typealias)[ \t]+(?:<[^>\n]*>[ \t]*)?(?:[\w.<>?, *]+\.)?`?(\w+)""",
        RegexOption.MULTILINE,
    )

    /** The names [code] declares at its top level. */
    fun topLevelNames(code: String): Set<String> = DECLARATION.findAll(code).map { it.groupValues[1] }.toSet()

    /**
     * [text] with its comments (nested block comments too) and the insides of its string and
     * character literals replaced by spaces, line breaks kept (so offsets and lines stay); the
     * code of a string template (`${...}`) is kept.
     */
    fun code(text: String): String = Blanker(text).run()

    private class Blanker(private val text: String) {
        private val out = StringBuilder(text)

        fun run(): String {
            scanCode(0, inTemplate = false)
            return out.toString()
        }

        private fun blank(from: Int, until: Int) {
            for (i in from until minOf(until, text.length)) if (text[i] != '\n') out.setCharAt(i, ' ')
        }

        /** Reads code from [start] to the end, or to the `}` that closes a template; returns the index after it. */
        private fun scanCode(start: Int, inTemplate: Boolean): Int {
            var i = start
            var depth = 0
            while (i < text.length) {
                val c = text[i]
                when {
                    text.startsWith("//", i) -> i = text.indexOf('\n', i).let { if (it < 0) text.length else it }.also { blank(i, it) }
                    text.startsWith("/*", i) -> i = blockComment(i).also { blank(i, it) }
                    text.startsWith("\"\"\"", i) -> i = scanString(i + 3, raw = true)
                    c == '"' -> i = scanString(i + 1, raw = false)
                    c == '\'' -> {
                        var j = i + 1
                        while (j < text.length && text[j] != '\'' && text[j] != '\n') j += if (text[j] == '\\') 2 else 1
                        blank(i + 1, j)
                        i = j + 1
                    }
                    c == '`' -> i = text.indexOf('`', i + 1).let { if (it < 0) text.length else it + 1 }
                    c == '{' -> {
                        depth++
                        i++
                    }
                    c == '}' -> {
                        if (inTemplate && depth == 0) return i + 1
                        depth--
                        i++
                    }
                    else -> i++
                }
            }
            return i
        }

        /** The index after the block comment at [start], which may hold others. */
        private fun blockComment(start: Int): Int {
            var nesting = 0
            var i = start
            while (i < text.length) {
                when {
                    text.startsWith("/*", i) -> {
                        nesting++
                        i += 2
                    }
                    text.startsWith("*/", i) -> {
                        i += 2
                        if (--nesting == 0) return i
                    }
                    else -> i++
                }
            }
            return i
        }

        /** Blanks a string literal's inside from [start] (after its opening quotes) but for its templates' code; the index after it. */
        private fun scanString(start: Int, raw: Boolean): Int {
            var i = start
            while (i < text.length) {
                when {
                    raw && text.startsWith("\"\"\"", i) -> {
                        var end = i + 3
                        while (end < text.length && text[end] == '"') end++ // `""""`: the first quotes are the string's
                        blank(i, end - 3)
                        return end
                    }
                    !raw && text[i] == '"' -> return i + 1
                    !raw && text[i] == '\\' -> {
                        blank(i, i + 2)
                        i += 2
                    }
                    text.startsWith("\${", i) -> i = scanCode(i + 2, inTemplate = true)
                    else -> {
                        blank(i, i + 1)
                        i++
                    }
                }
            }
            return i
        }
    }
}
