package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.CliInfo
import dev.claudesidecar.core.protocol.Experimental
import dev.claudesidecar.core.protocol.InitializeResult
import dev.claudesidecar.core.protocol.ServerCapabilities
import dev.claudesidecar.core.protocol.ServerInfo
import dev.claudesidecar.core.protocol.SidecarFeatures
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class CliReportTest {
    private fun result(cli: CliInfo) = InitializeResult(
        capabilities = ServerCapabilities(
            Experimental(
                SidecarFeatures(
                    cli = cli,
                    clientRequests = emptyList(),
                    features = emptyList(),
                    ignoredOptions = emptyList(),
                    methods = emptyList(),
                    notifications = emptyList(),
                    oldestClientProtocol = 1,
                    protocolVersion = 1,
                ),
            ),
        ),
        serverInfo = ServerInfo("claude-sidecar", "0.1.0"),
    )

    private val pinned = CliInfo(listOf("2.1.233", "2.1.330"), null, "/opt/claude", "PATH", true, "2.1.330")

    @Test
    fun `names the daemon, the CLI version and where it was found`() {
        assertEquals(
            CliReport(SidecarLogger.Level.INFO, "claude-sidecar 0.1.0 runs Claude Code 2.1.330 from /opt/claude (PATH)"),
            CliReport.of(result(pinned)),
        )
    }

    @Test
    fun `warns about a version the tests do not cover, naming those they do`() {
        val report = CliReport.of(result(pinned.copy(version = "2.0.1", tested = false)))
        assertEquals(SidecarLogger.Level.WARN, report.level)
        assertTrue(report.text.contains("2.0.1") && report.text.contains("(tested: 2.1.233, 2.1.330)"), report.text)
    }

    @Test
    fun `is an error when no CLI can run`() {
        val report = CliReport.of(result(CliInfo(emptyList(), "no Claude Code CLI found", null, null, null, null)))
        assertEquals(SidecarLogger.Level.ERROR, report.level)
        assertTrue(report.text.contains("no Claude Code CLI found") && report.text.contains("doctor"), report.text)
    }
}
