package dev.claudesidecar.plugin

import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.Project
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.protocol.ChannelState
import dev.claudesidecar.ui.ChatPanel
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.launch

// The actions of plugin.xml (Tools | Claude, the tool window's title bar, shortcuts). Each one
// finds its chat and calls core or the tool window; none holds logic of its own.

/** An action on the chat the user works with ([ClaudeChats.activePanel]); disabled without one. */
abstract class ChatAction :
    AnAction(),
    DumbAware {
    override fun getActionUpdateThread() = ActionUpdateThread.EDT

    override fun update(e: AnActionEvent) {
        val panel = e.project?.let { ClaudeChats.activePanel(it) }
        val chat = panel?.chat
        e.presentation.isEnabled = panel != null && chat != null && !chat.closed && enabled(panel, chat)
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val panel = ClaudeChats.activePanel(project) ?: return
        perform(project, panel, panel.chat ?: return)
    }

    protected open fun enabled(panel: ChatPanel, chat: Chat): Boolean = true

    protected abstract fun perform(project: Project, panel: ChatPanel, chat: Chat)

    /** Runs a request of the chat in the project's scope; a failure is a notification. */
    protected fun request(project: Project, what: String, block: suspend () -> Unit) {
        ClaudeService.getInstance(project).scope.launch {
            try {
                block()
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                Notify.error(project, what, e)
            }
        }
    }
}

/** A project action that needs no chat. */
abstract class ProjectAction :
    AnAction(),
    DumbAware {
    override fun getActionUpdateThread() = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) {
        e.presentation.isEnabled = e.project != null
    }
}

class NewChatAction : ProjectAction() {
    override fun actionPerformed(e: AnActionEvent) {
        ClaudeChats.newChat(e.project ?: return)
    }
}

class SessionsAction : ProjectAction() {
    override fun actionPerformed(e: AnActionEvent) {
        ClaudeChats.showSessions(e.project ?: return)
    }
}

/**
 * Restart the Daemon, named by what it does in each mode. The shared daemon is not this IDE's to
 * restart: the action ends this IDE's connection (its chats run on in the daemon, to be
 * attached again) and makes a new one.
 */
class RestartDaemonAction : ProjectAction() {
    override fun update(e: AnActionEvent) {
        super.update(e)
        val shared = e.project?.let { ClaudeService.getInstance(it).restartReconnects() } == true
        e.presentation.text = DaemonRestart.title(shared)
        e.presentation.description = DaemonRestart.description(shared)
    }

    override fun actionPerformed(e: AnActionEvent) {
        ClaudeService.getInstance(e.project ?: return).restartDaemon()
    }
}

/** The words of [RestartDaemonAction] in each mode: the action, the settings' notification and its button. */
object DaemonRestart {
    fun title(shared: Boolean): String = if (shared) "Reconnect to the Shared Daemon" else "Restart the Daemon"

    fun description(shared: Boolean): String = if (shared) {
        "Close this IDE's Claude tabs (the chats run on in the shared daemon) and connect again with the current settings"
    } else {
        "Close the Claude chats and start the daemon anew with the current settings"
    }

    /** Said when the daemon's settings changed while it runs. */
    fun settingsApplyAfter(shared: Boolean): String = if (shared) {
        "The new daemon settings apply after reconnecting to the shared daemon (this IDE's Claude tabs close; the chats run on there)."
    } else {
        "The new daemon settings apply after restarting the daemon (this closes the chats)."
    }
}

/** Stops the running turn (it ends as interrupted). */
class InterruptAction : ChatAction() {
    override fun enabled(panel: ChatPanel, chat: Chat): Boolean =
        panel.chatState.status.state.let { it == ChannelState.RUNNING || it == ChannelState.AWAITING_PERMISSION }

    override fun perform(project: Project, panel: ChatPanel, chat: Chat) = request(project, "Cannot interrupt Claude") { chat.interrupt() }
}

/** The chat's whole conversation continued in a new tab, on a new session. */
class ForkAction : ChatAction() {
    override fun enabled(panel: ChatPanel, chat: Chat): Boolean = chat.hasConversation && chat.sessionId != null

    override fun perform(project: Project, panel: ChatPanel, chat: Chat) {
        ClaudeChats.fork(project, chat)
    }
}
