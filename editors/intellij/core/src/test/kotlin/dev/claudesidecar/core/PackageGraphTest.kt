package dev.claudesidecar.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test

@DisplayName("the package graph check, on made-up sources")
class PackageGraphTest {
    private fun file(path: String, text: String, module: String = path.substringBefore('/')) =
        SourceFile(module, path, path.startsWith("$module/src/test/"), text.trimIndent())

    @Test fun `a cycle is found and named from its first package, one per knot`() {
        val graph = mapOf(
            "a" to setOf("b"),
            "b" to setOf("c"),
            "c" to setOf("a", "d"),
            "d" to setOf("e"),
            "e" to setOf("d"),
            "f" to setOf("a"),
        )
        assertEquals(listOf(listOf("a", "b", "c", "a"), listOf("d", "e", "d")), Cycles.find(graph))
    }

    @Test fun `the shortest cycle through the first package is named, a self-use is a cycle, a tree is none`() {
        assertEquals(listOf(listOf("a", "c", "a")), Cycles.find(mapOf("a" to setOf("b", "c"), "b" to setOf("c"), "c" to setOf("a"))))
        assertEquals(listOf(listOf("a", "a")), Cycles.find(mapOf("a" to setOf("a"))))
        assertEquals(emptyList<List<String>>(), Cycles.find(mapOf("a" to setOf("b", "c"), "b" to setOf("c"), "c" to emptySet())))
    }

    @Test fun `imports and qualified names make a cycle, named with where each use is`() {
        val graph = PackageGraph(
            listOf(
                file(
                    "m/src/main/kotlin/p/a/A.kt",
                    """
                    package p.a

                    import p.b.B

                    class A(val b: B)
                    """,
                ),
                file(
                    "m/src/main/kotlin/p/b/B.kt",
                    """
                    package p.b

                    class B {
                        fun a(): p.a.A? = null
                    }
                    """,
                ),
            ),
            listOf("m"),
        )
        assertEquals(listOf(listOf("p.a", "p.b", "p.a")), graph.cycles())
        assertEquals(
            """
            p.a -> p.b -> p.a
                p.a -> p.b: m/src/main/kotlin/p/a/A.kt:3 import p.b.B
                p.b -> p.a: m/src/main/kotlin/p/b/B.kt:4 p.a.A
            """.trimIndent(),
            graph.describe(graph.cycles().single()),
        )
    }

    @Test fun `comments, strings and uses within a package do not count, but string templates, star and as imports do`() {
        val graph = PackageGraph(
            listOf(
                file(
                    "m/src/main/kotlin/p/a/A.kt",
                    """
                    package p.a

                    import p.b.*
                    import p.c.C as Sea

                    /* p.x.X /* nested: p.x.X */ p.x.X */
                    // p.x.X
                    val s = "p.x.X \" p.x.X ${'$'}s" + '"' + ""${'"'}p.x.X "p.x.X" ""${'"'}
                    val t = "${'$'}{p.d.D.name} ${'$'}{"p.x.X"}"
                    val u = p.a.Other
                    """,
                ),
                file("m/src/main/kotlin/p/b/B.kt", "package p.b"),
                file("m/src/main/kotlin/p/c/C.kt", "package p.c"),
                file("m/src/main/kotlin/p/d/D.kt", "package p.d"),
                file("m/src/main/kotlin/p/x/X.kt", "package p.x"),
            ),
            listOf("m"),
        )
        assertEquals(mapOf("p.a" to setOf("p.b", "p.c", "p.d")), graph.graph)
    }

    @Test fun `a test source's use goes to the test sources when the name is declared there only`() {
        val graph = PackageGraph(
            listOf(
                file("m/src/main/kotlin/p/a/A.kt", "package p.a\n\nclass A"),
                file("m/src/main/kotlin/p/b/B.kt", "package p.b\n\nimport p.a.A\n\nfun A.b() = 1"),
                file("m/src/test/kotlin/p/a/Harness.kt", "package p.a\n\nimport p.b.b\n\nobject Harness\n\nfun helper() = A().b()"),
                file("m/src/test/kotlin/p/b/BTest.kt", "package p.b\n\nimport p.a.A\nimport p.a.Harness\nimport p.a.helper"),
            ),
            listOf("m"),
        )
        assertEquals(
            mapOf("p.b" to setOf("p.a"), "p.a (test)" to setOf("p.b"), "p.b (test)" to setOf("p.a", "p.a (test)")),
            graph.graph,
        )
        assertEquals(emptyList<List<String>>(), graph.cycles(), "a test using a package above its own closes no cycle of the main code")
    }

    @Test fun `a module using a module after it is named, as is a package split across modules`() {
        val graph = PackageGraph(
            listOf(
                file("low/src/main/kotlin/p/low/L.kt", "package p.low\n\nimport p.high.H\n\nval x = p.high.H()"),
                file("high/src/main/kotlin/p/high/H.kt", "package p.high\n\nimport p.low.L"),
                file("high/src/test/kotlin/p/low/T.kt", "package p.low"),
            ),
            listOf("low", "high"),
        )
        assertEquals(
            listOf(
                "low must not use high: low/src/main/kotlin/p/low/L.kt:3 import p.high.H",
                "low must not use high: low/src/main/kotlin/p/low/L.kt:5 p.high.H",
            ),
            graph.layerViolations(),
        )
        assertEquals(mapOf("p.low" to setOf("low", "high")), graph.splitPackages())
    }

    @Test fun `top-level names are read past modifiers, annotations, type parameters and receivers`() {
        val code = KotlinText.code(
            """
            @file:JvmName("X")
            package p

            @JvmInline value class Id(val v: String)
            private data class Pair2(val a: Int)
            fun interface Listener { fun on() }
            enum class E { A }
            internal fun <T> List<T>.second(): T = this[1]
            val String.shout: String get() = uppercase()
            const val N = 1
            typealias Ids = List<Id>
            object O {
                fun notTopLevel() = 1
            }
            """.trimIndent(),
        )
        assertEquals(setOf("Id", "Pair2", "Listener", "E", "second", "shout", "N", "Ids", "O"), KotlinText.topLevelNames(code))
    }

    @Test fun `blanking keeps offsets and line breaks`() {
        val text = "val a = \"x\ny\" // c\n/* d\n */ val b = 'q'"
        val code = KotlinText.code(text)
        assertEquals(text.length, code.length)
        assertEquals(text.indices.filter { text[it] == '\n' }, code.indices.filter { code[it] == '\n' })
        assertEquals(listOf("val a = \" ", " \"     ", "    ", "    val b = ' '"), code.lines())
    }
}
