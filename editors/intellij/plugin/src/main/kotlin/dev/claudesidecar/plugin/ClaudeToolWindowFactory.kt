package dev.claudesidecar.plugin

import com.intellij.openapi.actionSystem.ActionManager
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.Project
import com.intellij.openapi.wm.ToolWindow
import com.intellij.openapi.wm.ToolWindowFactory

/**
 * The "Claude" tool window: the project's stored sessions in a first, fixed tab, and a tab per
 * chat (a ui [dev.claudesidecar.ui.ChatPanel]); New Chat, Interrupt, Fork, Rewind and Sessions
 * in its title bar. The first chat opens with the window.
 */
class ClaudeToolWindowFactory :
    ToolWindowFactory,
    DumbAware {
    override fun createToolWindowContent(project: Project, toolWindow: ToolWindow) {
        val actions = ActionManager.getInstance()
        toolWindow.setTitleActions(
            listOf(
                "ClaudeSidecar.NewChat",
                "ClaudeSidecar.Interrupt",
                "ClaudeSidecar.Fork",
                "ClaudeSidecar.Rewind",
                "ClaudeSidecar.Sessions",
            )
                .mapNotNull { actions.getAction(it) },
        )
        ClaudeChats.addSessionsTab(project, toolWindow)
        ClaudeChats.newChatTab(project, toolWindow, activate = false)
    }
}
