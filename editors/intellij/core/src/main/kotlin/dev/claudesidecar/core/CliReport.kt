package dev.claudesidecar.core

import dev.claudesidecar.core.protocol.InitializeResult

/**
 * What the daemon says in `initialize` about the Claude Code CLI it will run (the facts of
 * `claude-sidecar doctor`): a line for the log, at ERROR when no CLI can run and at WARN for
 * a version the daemon's tests do not cover, so a UI can show those two to the user.
 */
data class CliReport(
    val level: SidecarLogger.Level,
    val text: String,
) {
    companion object {
        fun of(result: InitializeResult): CliReport {
            val daemon = "claude-sidecar ${result.serverInfo.version}"
            val cli = result.capabilities.experimental.claudeSidecar.cli
            cli.error?.let {
                return CliReport(SidecarLogger.Level.ERROR, "$daemon: no Claude Code CLI can run: $it (run `claude-sidecar doctor`)")
            }
            val where = (cli.path ?: "?") + (cli.source?.let { " ($it)" } ?: "")
            val version = cli.version ?: "an unknown version"
            if (cli.tested == false) {
                return CliReport(
                    SidecarLogger.Level.WARN,
                    "$daemon runs Claude Code $version from $where, which its tests do not cover " +
                        "(tested: ${cli.testedVersions.joinToString(", ")}); most things work, some may not.",
                )
            }
            return CliReport(SidecarLogger.Level.INFO, "$daemon runs Claude Code $version from $where")
        }
    }
}
