package dev.claudesidecar.core

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

@DisplayName("the proposed content of a pending edit")
class ProposedEditTest {
    private fun input(json: String): JsonObject = JsonParser.parseString(json).asJsonObject

    @Test fun `only Write, Edit and MultiEdit name the file they edit`() {
        assertEquals("/w/a.kt", ProposedEdit.editedPath("Edit", input("""{"file_path":"/w/a.kt"}""")))
        assertEquals("/w/a.kt", ProposedEdit.editedPath("Write", input("""{"file_path":"/w/a.kt","content":""}""")))
        assertNull(ProposedEdit.editedPath("Bash", input("""{"file_path":"/w/a.kt"}""")))
        assertNull(ProposedEdit.editedPath("Edit", input("""{"file_path":3}""")))
    }

    @Test fun `Write replaces the file, existing or not`() {
        val write = input("""{"file_path":"/w/a","content":"new\n"}""")
        assertEquals("new\n", ProposedEdit.proposedContent("Write", write, "old\n"))
        assertEquals("new\n", ProposedEdit.proposedContent("Write", write, null))
        assertThrows<IllegalArgumentException> { ProposedEdit.proposedContent("Write", input("""{"file_path":"/w/a"}"""), null) }
    }

    @Test fun `Edit replaces the first occurrence, or all of them with replace_all`() {
        val text = "a = 1\nb = 1\n"
        assertEquals("a = 2\nb = 1\n", ProposedEdit.proposedContent("Edit", input("""{"old_string":"= 1","new_string":"= 2"}"""), text))
        assertEquals(
            "a = 2\nb = 2\n",
            ProposedEdit.proposedContent("Edit", input("""{"old_string":"= 1","new_string":"= 2","replace_all":true}"""), text),
        )
        // Taken literally: no regex, no "$" substitution.
        assertEquals(
            "x = \$1.\n",
            ProposedEdit.proposedContent("Edit", input("""{"old_string":"(.)","new_string":"${'$'}1."}"""), "x = (.)\n"),
        )
        // An empty old_string writes a new file (or prepends).
        assertEquals("new\n", ProposedEdit.proposedContent("Edit", input("""{"old_string":"","new_string":"new\n"}"""), null))
    }

    @Test fun `an edit that cannot apply says why`() {
        val missing = assertThrows<IllegalArgumentException> {
            ProposedEdit.proposedContent("Edit", input("""{"old_string":"nope","new_string":"x"}"""), "text")
        }
        assertTrue(missing.message!!.contains("not in the file"))
        assertThrows<IllegalArgumentException> { ProposedEdit.proposedContent("Edit", input("""{"old_string":"t"}"""), "text") }
        assertThrows<IllegalArgumentException> { ProposedEdit.proposedContent("Bash", input("{}"), "text") }
        assertThrows<IllegalArgumentException> { ProposedEdit.proposedContent("MultiEdit", input("{}"), "text") }
    }

    @Test fun `MultiEdit applies its edits in order, each to the result of the one before`() {
        val edits =
            input("""{"edits":[{"old_string":"one","new_string":"two"},{"old_string":"two","new_string":"three","replace_all":true}]}""")
        assertEquals("three three\n", ProposedEdit.proposedContent("MultiEdit", edits, "one two\n"))
    }
}
