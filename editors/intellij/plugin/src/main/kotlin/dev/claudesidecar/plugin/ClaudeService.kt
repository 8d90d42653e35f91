package dev.claudesidecar.plugin

import com.intellij.openapi.Disposable
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.application.EDT
import com.intellij.openapi.application.ModalityState
import com.intellij.openapi.application.asContextElement
import com.intellij.openapi.components.Service
import com.intellij.openapi.components.service
import com.intellij.openapi.diagnostic.logger
import com.intellij.openapi.project.Project
import dev.claudesidecar.core.ClientOptions
import dev.claudesidecar.core.CommandLine
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.DaemonOptions
import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.SidecarLogger
import dev.claudesidecar.core.protocol.NewChannelParams
import dev.claudesidecar.core.protocol.PermissionMode
import dev.claudesidecar.core.protocol.WarmPoolOptions
import dev.claudesidecar.ui.PanelDaemon
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import java.nio.file.Path
import kotlin.coroutines.CoroutineContext

private val LOG = logger<ClaudeService>()

/** The client's log lines in the IDE's log (idea.log); never as IDE errors: the daemon's errors are not the IDE's. */
private val IDE_LOGGER = SidecarLogger { level, message ->
    when (level) {
        SidecarLogger.Level.DEBUG -> LOG.debug(message)
        SidecarLogger.Level.INFO -> LOG.info(message)
        SidecarLogger.Level.WARN, SidecarLogger.Level.ERROR -> LOG.warn(message)
    }
}

/**
 * The project's claude-sidecar client: one [SidecarClient] (one daemon, started with the first
 * request) made from [ClaudeSettings], with the IDE's editor tools. Disposed with the project:
 * the daemon is shut down then (and killed after its grace period), and its CLIs with it.
 * [scope] is the service's coroutine scope, cancelled when the project closes.
 */
@Service(Service.Level.PROJECT)
class ClaudeService(
    private val project: Project,
    val scope: CoroutineScope,
) : Disposable {
    private val lock = Any()
    private var current: SidecarClient? = null

    /** The folder chats run in: the project's base directory. */
    val cwd: String get() = project.basePath ?: System.getProperty("user.home")

    /**
     * The client, made from the settings when first needed. Throws [SidecarException] (`where`:
     * the setting) when the settings cannot make one.
     */
    val client: SidecarClient
        get() = synchronized(lock) { current ?: create().also { current = it } }

    /**
     * The optional features the running client's daemon serves ([SidecarClient.features]); null
     * while none answered (no client yet, or no daemon started): actions stay until it says.
     */
    val features: Set<String>? get() = synchronized(lock) { current }?.features?.value

    /** What a new chat starts with: the project's folder, and the model and mode of the settings. */
    fun newChannelParams(): NewChannelParams {
        val options = ClaudeSettings.getInstance(project).state
        return NewChannelParams(
            cwd = cwd,
            model = options.model?.trim()?.ifEmpty { null },
            permissionMode = options.permissionMode?.let { PermissionMode.of(it) },
        )
    }

    /**
     * Closes the tool window's chats and ends the daemon; the next chat starts a new one with
     * the settings as they are now. EDT.
     */
    fun restartDaemon() {
        val old = synchronized(lock) { current.also { current = null } }
        ClaudeChats.reset(project)
        if (old != null) scope.launch(Dispatchers.IO) { old.shutdown() }
    }

    /**
     * Whether [restartDaemon] ends a connection to the shared daemon (the chats run on there):
     * the running client's mode, else the settings'.
     */
    fun restartReconnects(): Boolean =
        (synchronized(lock) { current?.mode } ?: ClaudeSettings.getInstance(project).mode()) == DaemonMode.SHARED

    /** The daemon's settings changed: they apply to the next daemon. EDT. */
    fun daemonSettingsChanged() {
        val running = synchronized(lock) { current?.runningDaemon != null }
        if (running) {
            val shared = restartReconnects()
            Notify.info(project, DaemonRestart.settingsApplyAfter(shared), restartAction = DaemonRestart.title(shared))
        } else {
            // No daemon runs (none yet, or it failed on the old settings): the next request uses the new ones.
            restartDaemon()
        }
    }

    override fun dispose() {
        val client = synchronized(lock) { current.also { current = null } } ?: return
        // The project closes on the EDT: the shutdown (the daemon's exit, or SIGKILL after its
        // grace period, up to 3 s) runs on a pooled thread, never blocking the UI. Should the IDE
        // exit before it ends, the daemon still goes: its stdin closes and it closes every chat.
        ApplicationManager.getApplication().executeOnPooledThread { client.close() }
    }

    private fun create(): SidecarClient {
        val settings = ClaudeSettings.getInstance(project)
        val options = settings.state
        // Empty: the mode's command (claude-sidecar --stdio or connect, from PATH).
        val command = CommandLine.split(options.daemonCommand ?: "").ifEmpty { null }
        val env = CommandLine.environment(options.env ?: "", "Environment")
        return SidecarClient(
            ClientOptions(
                daemon = DaemonOptions(
                    command = command,
                    mode = settings.mode(),
                    cwd = Path.of(cwd),
                    env = env,
                    initializationOptions = PanelDaemon.initializationOptions(
                        clientName = "intellij",
                        cliPath = options.cliPath?.trim()?.ifEmpty { null },
                        warmPool = WarmPoolOptions(cwd = cwd, size = 1),
                    ),
                    logger = IDE_LOGGER,
                ),
                editorTools = EditorTools(project).bindings,
            ),
        )
    }

    companion object {
        fun getInstance(project: Project): ClaudeService = project.service()

        /**
         * The dispatcher of the chat panels, the session list and the tool window's own
         * coroutines: the EDT at any modality. `Dispatchers.EDT` alone runs at the non-modal
         * state, so a chat would stop updating (and its permission cards stop appearing) while
         * any dialog is open, Settings or the Rewind dialog; these coroutines touch only
         * Swing components and core's client, never the IDE's models (PSI, VFS, documents).
         */
        val UI: CoroutineContext = Dispatchers.EDT + ModalityState.any().asContextElement()
    }
}
