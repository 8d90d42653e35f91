package dev.claudesidecar.plugin

import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.application.EDT
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.popup.JBPopupFactory
import com.intellij.ui.SimpleListCellRenderer
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.DaemonMode
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.ui.ChatPanel
import dev.claudesidecar.ui.RunningChats
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

// The shared daemon's actions (plugin.xml): attach to a chat running there, end a chat for
// every editor. The lists and the rules are core's and ui's.

/**
 * Lists the chats running in the shared daemon (folder, state, model, attached editors) and
 * opens the chosen one in a tab: its conversation so far, then live. With the private daemon
 * a notification says to choose the shared one in the settings.
 */
class AttachAction : ProjectAction() {
    /** Hidden once the daemon said it serves no `attach` (a private daemon, or one from before it). */
    override fun update(e: AnActionEvent) {
        super.update(e)
        val features = e.project?.let { ClaudeService.getInstance(it).features }
        e.presentation.isVisible = features == null || "attach" in features
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val service = ClaudeService.getInstance(project)
        service.scope.launch {
            try {
                val client = service.client
                val channels = client.runningChats()
                withContext(Dispatchers.EDT) {
                    if (channels.isEmpty()) return@withContext Notify.info(project, "No Claude chat is running in the shared daemon.")
                    JBPopupFactory.getInstance()
                        .createPopupChooserBuilder(channels)
                        .setTitle("Attach to a Running Claude Chat")
                        .setRenderer(
                            SimpleListCellRenderer.create<ChannelSummary>("") { channel ->
                                "${RunningChats.title(
                                    channel,
                                )}  —  ${RunningChats.facts(channel, client.chatOf(channel.channelId) != null)}"
                            },
                        )
                        .setItemChosenCallback { channel -> ClaudeChats.attach(project, channel) }
                        .createPopup()
                        .showCenteredInCurrentWindow(project)
                }
            } catch (e: CancellationException) {
                throw e
            } catch (e: SidecarException) {
                Notify.error(project, "Cannot attach to a running chat", e)
            }
        }
    }
}

/**
 * Ends the active chat (its CLI stops, for every editor attached to it) and closes its tab.
 * Closing a tab only detaches with the shared daemon: the chat runs on there.
 */
class EndChatAction : ChatAction() {
    override fun perform(project: Project, panel: ChatPanel, chat: Chat) = request(project, "Cannot end the chat") {
        chat.close()
        withContext(Dispatchers.EDT) { ClaudeChats.closeTab(project, panel) }
    }
}

/** Whether the project's chats run in the shared daemon (closing a tab then detaches). */
fun sharedDaemon(project: Project): Boolean = ClaudeSettings.getInstance(project).mode() == DaemonMode.SHARED
