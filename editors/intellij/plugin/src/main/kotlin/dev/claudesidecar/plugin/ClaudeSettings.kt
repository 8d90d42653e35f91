package dev.claudesidecar.plugin

import com.intellij.openapi.components.BaseState
import com.intellij.openapi.components.Service
import com.intellij.openapi.components.SimplePersistentStateComponent
import com.intellij.openapi.components.State
import com.intellij.openapi.components.Storage
import com.intellij.openapi.components.StoragePathMacros
import com.intellij.openapi.components.service
import com.intellij.openapi.project.Project
import dev.claudesidecar.core.DaemonMode

/**
 * The project's Claude settings (Settings | Tools | Claude Sidecar), kept in the workspace file:
 * paths and environment belong to this machine, not to the shared project.
 */
@Service(Service.Level.PROJECT)
@State(name = "ClaudeSidecarSettings", storages = [Storage(StoragePathMacros.WORKSPACE_FILE)])
class ClaudeSettings : SimplePersistentStateComponent<ClaudeSettings.Options>(Options()) {
    class Options : BaseState() {
        /** "private" (`claude-sidecar --stdio`) or "shared" (`claude-sidecar connect`: chats outlive the IDE). */
        var daemonMode by string(PRIVATE)

        /** The daemon's command line ("quoted" arguments kept whole); empty: [daemonMode]'s command of `claude-sidecar`. */
        var daemonCommand by string("")

        /** The Claude Code CLI the daemon runs; empty: the one its claude-agent-sdk bundles. */
        var cliPath by string("")

        /** KEY=VALUE lines added to the daemon's environment (-KEY removes one). */
        var env by string("")

        /** The model of new chats; empty: the CLI's default. */
        var model by string("")

        /** The permission mode of new chats (a `PermissionMode` wire value). */
        var permissionMode by string("default")
    }

    /** What makes the daemon: a change applies after Restart the Daemon. */
    fun daemonKey(): List<String?> = listOf(state.daemonMode, state.daemonCommand, state.cliPath, state.env)

    /** The daemon mode the settings choose. */
    fun mode(): DaemonMode = if (state.daemonMode == SHARED) DaemonMode.SHARED else DaemonMode.PRIVATE

    companion object {
        const val PRIVATE = "private"
        const val SHARED = "shared"

        fun getInstance(project: Project): ClaudeSettings = project.service()
    }
}
