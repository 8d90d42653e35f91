package dev.claudesidecar.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test

// The check of the client's own sources (scripts/lint.sh runs it, with ktlint): the packages of
// core, ui and plugin (main and test sources, the plugin's read though not compiled here) use
// each other without a cycle, and each module uses only itself and the modules before it.
// The graph and what counts as a use: PackageGraph.kt.

@DisplayName("the packages of core, ui and plugin")
class PackageCyclesTest {
    private val graph by lazy { PackageGraph.read(Harness.repoRoot.resolve("editors/intellij"), LAYERS) }

    @Test fun `every module's sources are read, and their uses of each other found`() {
        for (module in LAYERS) assertTrue(graph.files.any { it.module == module && !it.test }, "no Kotlin sources of $module read")
        assertTrue(
            graph.files.none {
                it.pkg.isEmpty()
            },
            "files without a package: ${graph.files.filter { it.pkg.isEmpty() }.map { it.path }}",
        )
        for ((from, to) in listOf("ui" to "core", "plugin" to "ui", "plugin" to "core")) {
            assertTrue(
                graph.graph["dev.claudesidecar.$from"].orEmpty().contains("dev.claudesidecar.$to"),
                "$from uses $to: the check sees it",
            )
        }
    }

    @Test fun `no package uses itself through others`() {
        val cycles = graph.cycles()
        assertTrue(cycles.isEmpty()) {
            "package cycles (break each by moving the shared piece below both sides):\n" + cycles.joinToString("\n") { graph.describe(it) }
        }
    }

    @Test fun `core uses neither ui nor plugin, and ui does not use plugin`() {
        assertEquals(emptyMap<String, Set<String>>(), graph.splitPackages(), "packages declared in more than one module")
        val violations = graph.layerViolations()
        assertTrue(violations.isEmpty()) {
            "modules used against their order ${LAYERS.joinToString(" < ")}:\n" +
                violations.joinToString("\n")
        }
    }

    companion object {
        /** The modules in order: each may use itself and those before it. */
        val LAYERS = listOf("core", "ui", "plugin")
    }
}
