package dev.claudesidecar.plugin

import com.intellij.notification.NotificationAction
import com.intellij.notification.NotificationGroupManager
import com.intellij.notification.NotificationType
import com.intellij.openapi.ide.CopyPasteManager
import com.intellij.openapi.options.ShowSettingsUtil
import com.intellij.openapi.project.Project
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.ui.Html
import java.awt.datatransfer.StringSelection

/** Balloons of the "Claude Sidecar" notification group (plugin.xml). */
object Notify {
    private const val GROUP = "Claude Sidecar"
    private val SETTINGS = setOf("daemonCommand", "daemonMode", "Environment")

    /** [restartAction]: the title of a button that runs Restart the Daemon ([DaemonRestart.title]), if any. */
    fun info(project: Project, text: String, restartAction: String? = null) =
        show(project, text, NotificationType.INFORMATION, false, restartAction)

    fun warn(project: Project, text: String) = show(project, text, NotificationType.WARNING, false, null)

    /**
     * An error; one a setting can fix ([SidecarException.where]) gets a button that opens the
     * settings. A daemon that does not fit the plugin ([SidecarException.mismatch]) is said as
     * the daemon says it (which side to upgrade, and how), with a button that copies the
     * daemon's upgrade command.
     */
    fun error(project: Project, what: String, e: Throwable) {
        val mismatch = (e as? SidecarException)?.mismatch
        if (mismatch != null) return show(project, mismatch.message, NotificationType.ERROR, false, null, mismatch.command)
        val settings = e is SidecarException && e.where in SETTINGS
        show(project, "$what: ${e.message ?: e.javaClass.simpleName}", NotificationType.ERROR, settings, null)
    }

    private fun show(
        project: Project,
        text: String,
        type: NotificationType,
        settingsAction: Boolean,
        restartAction: String?,
        copyCommand: String? = null,
    ) {
        // Notification content is HTML: a message (a path with <…>, an error with & or a stack
        // line) shows as written, its line breaks kept.
        val notification = NotificationGroupManager.getInstance().getNotificationGroup(GROUP).createNotification(Html.text(text), type)
        if (settingsAction) {
            notification.addAction(
                NotificationAction.createSimpleExpiring("Open settings") {
                    ShowSettingsUtil.getInstance().showSettingsDialog(project, ClaudeConfigurable::class.java)
                },
            )
        }
        if (copyCommand != null) {
            notification.addAction(
                NotificationAction.createSimple("Copy command") {
                    CopyPasteManager.getInstance().setContents(StringSelection(copyCommand))
                },
            )
        }
        if (restartAction != null) {
            notification.addAction(
                NotificationAction.createSimpleExpiring(restartAction) {
                    ClaudeService.getInstance(project).restartDaemon()
                },
            )
        }
        notification.notify(project)
    }
}
