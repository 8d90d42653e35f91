package dev.claudesidecar.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

@DisplayName("the daemon command and environment settings")
class CommandLineTest {
    @Test fun `a command line splits on spaces, quoted arguments whole`() {
        assertEquals(listOf("claude-sidecar", "--stdio"), CommandLine.split("  claude-sidecar   --stdio "))
        assertEquals(
            listOf("/opt/my tools/claude-sidecar", "--stdio", "a b"),
            CommandLine.split("\"/opt/my tools/claude-sidecar\" --stdio 'a b'"),
        )
        assertEquals(emptyList<String>(), CommandLine.split("   "))
    }

    @Test fun `environment lines set, empty or unset variables`() {
        val env = CommandLine.environment("# proxy\nHTTPS_PROXY=http://p:3128\n\nEMPTY=\n-ANTHROPIC_API_KEY\nX = a=b\n")
        assertEquals(mapOf("HTTPS_PROXY" to "http://p:3128", "EMPTY" to "", "ANTHROPIC_API_KEY" to null, "X" to " a=b"), env)
    }

    @Test fun `a line that is not KEY=VALUE is reported with its number`() {
        val e = assertThrows<SidecarException> { CommandLine.environment("A=1\nnot a variable", "Environment") }
        assertEquals("Environment", e.where)
        assertEquals(true, e.message!!.contains("line 2"))
    }
}
