package dev.claudesidecar.plugin

import com.intellij.openapi.project.Project
import com.intellij.openapi.util.Key
import com.intellij.openapi.wm.ToolWindow
import com.intellij.openapi.wm.ToolWindowManager
import com.intellij.ui.components.JBLabel
import com.intellij.ui.content.Content
import com.intellij.ui.content.ContentFactory
import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.ChatListener
import dev.claudesidecar.core.protocol.ChannelSummary
import dev.claudesidecar.core.protocol.SessionSummary
import dev.claudesidecar.ui.ChatPanel
import dev.claudesidecar.ui.SessionList
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.util.concurrent.atomic.AtomicBoolean
import javax.swing.JComponent

/**
 * The tabs of the Claude tool window, as the standalone app (ui's `App`) keeps them: a
 * [ChatPanel] per chat and a [SessionList]. Closing a tab closes its chat; with the shared
 * daemon it detaches (the chat runs on there: Attach to a Running Chat opens it again, End
 * Chat ends it). EDT only.
 */
object ClaudeChats {
    const val TOOL_WINDOW_ID = "Claude"
    private const val SESSIONS_TITLE = "Sessions"

    fun toolWindow(project: Project): ToolWindow? = ToolWindowManager.getInstance(project).getToolWindow(TOOL_WINDOW_ID)

    /** The chat the user works with: the selected tab's, else the last chat tab. */
    fun activePanel(project: Project): ChatPanel? {
        val manager = toolWindow(project)?.contentManagerIfCreated ?: return null
        (manager.selectedContent?.component as? ChatPanel)?.let { return it }
        return manager.contents.mapNotNull { it.component as? ChatPanel }.lastOrNull()
    }

    /** A new chat in a new tab; its panel at once (the chat attaches when the daemon has opened it). */
    fun newChat(project: Project, activate: Boolean = true): ChatPanel? {
        val window = toolWindow(project) ?: return null
        if (window.contentManagerIfCreated == null) {
            // The window's first use: its factory makes the content, with a first chat.
            window.contentManager
            if (activate) window.activate(null)
            return activePanel(project)
        }
        return newChatTab(project, window, activate)
    }

    /** A new chat tab in [window] (whose content exists). */
    fun newChatTab(project: Project, window: ToolWindow, activate: Boolean): ChatPanel? {
        val number = window.contentManager.contents.count { it.component is ChatPanel } + 1
        return open(project, window, "Chat $number", activate) { service, listener ->
            service.client.openChat(service.newChannelParams(), listener)
        }
    }

    /**
     * A stored session resumed in a new tab (its history first); a session already open in a
     * tab (or being opened) selects that tab: two live chats on one session would diverge.
     */
    fun resume(project: Project, session: SessionSummary): ChatPanel? {
        val window = toolWindow(project) ?: return null
        val manager = window.contentManager
        manager.contents.firstOrNull { content -> sessionOf(content) == session.sessionId }?.let { open ->
            manager.setSelectedContent(open, true)
            window.activate { (open.component as? ChatPanel)?.prompt?.text?.requestFocusInWindow() }
            return open.component as? ChatPanel
        }
        return open(
            project,
            window,
            SessionList.titleOf(session).ifBlank { "Resumed" },
            true,
            session.sessionId,
        ) { service, listener ->
            service.client.resumeChat(service.cwd, session.sessionId, service.newChannelParams(), listener)
        }
    }

    /** The session of a chat tab: its chat's, or the one it is opening to resume. */
    private fun sessionOf(content: Content): String? = (content.component as? ChatPanel)?.chat?.sessionId ?: content.getUserData(RESUMING)

    private val RESUMING = Key.create<String>("claude.resuming")

    /** [chat] forked into a new tab: a new session with its whole conversation. */
    fun fork(project: Project, chat: Chat): ChatPanel? =
        open(project, toolWindow(project), "Fork", true) { service, listener -> service.client.forkChat(chat, null, listener) }

    /** A chat running in the shared daemon ([channel]) in a new tab, or its tab when it is open here. */
    fun attach(project: Project, channel: ChannelSummary): ChatPanel? {
        val window = toolWindow(project) ?: return null
        val shown = ClaudeService.getInstance(project).client.chatOf(channel.channelId)
        window.contentManagerIfCreated?.contents?.firstOrNull { shown != null && (it.component as? ChatPanel)?.chat === shown }?.let {
            window.contentManager.setSelectedContent(it, true)
            window.activate(null)
            return it.component as ChatPanel
        }
        return open(project, window, channel.cwd.substringAfterLast('/'), true) { service, listener ->
            service.client.attachChat(channel, listener)
        }
    }

    /** Closes the tab of [panel] (its chat detaches or closes as the tab's closing does). */
    fun closeTab(project: Project, panel: ChatPanel) {
        val manager = toolWindow(project)?.contentManagerIfCreated ?: return
        manager.contents.firstOrNull { it.component === panel }?.let { manager.removeContent(it, true) }
    }

    /** Shows the sessions tab (made again when missing) and reloads it. */
    fun showSessions(project: Project) {
        val window = toolWindow(project) ?: return
        window.activate {
            val manager = window.contentManager
            val content = manager.contents.firstOrNull { it.displayName == SESSIONS_TITLE } ?: addSessionsTab(project, window)
            manager.setSelectedContent(content, true)
            (content.component as? SessionList)?.load()
        }
    }

    private fun sessionsList(window: ToolWindow): SessionList? =
        window.contentManagerIfCreated?.contents?.firstNotNullOfOrNull { it.component as? SessionList }

    /** Adds the sessions tab first, listing the sessions of the project's folder. */
    fun addSessionsTab(project: Project, window: ToolWindow): Content {
        val service = ClaudeService.getInstance(project)
        val component: JComponent = try {
            SessionList(service.client, service.cwd, ClaudeService.UI) { session -> resume(project, session) }.also { it.load() }
        } catch (e: Exception) {
            Notify.error(project, "Cannot start Claude", e)
            JBLabel("Claude cannot start: ${e.message}")
        }
        val content = ContentFactory.getInstance().createContent(component, SESSIONS_TITLE, false)
        content.isCloseable = false
        content.setDisposer { (component as? SessionList)?.dispose() }
        window.contentManager.addContent(content, 0)
        return content
    }

    /** Closes every tab (their chats with them) and adds the sessions tab anew: after the daemon's restart. */
    fun reset(project: Project) {
        val window = toolWindow(project) ?: return
        val manager = window.contentManagerIfCreated ?: return
        manager.removeAllContents(true)
        addSessionsTab(project, window)
    }

    private fun open(
        project: Project,
        window: ToolWindow?,
        title: String,
        activate: Boolean,
        resuming: String? = null,
        start: suspend (ClaudeService, ChatListener) -> Chat,
    ): ChatPanel? {
        window ?: return null
        val service = ClaudeService.getInstance(project)
        val panel = ChatPanel(IdeChatHost(project), ClaudeService.UI)
        // A turn's end changes the stored sessions: the Sessions tab shows them as they are now.
        panel.onTurnEnded = { sessionsList(window)?.load() }
        val content = ContentFactory.getInstance().createContent(panel, title.take(24), false)
        content.isCloseable = true
        panel.onTitleChanged = { content.displayName = panel.tabTitle(title.take(24)) }
        content.putUserData(RESUMING, resuming)
        val closed = AtomicBoolean(false)
        content.setDisposer {
            closed.set(true)
            panel.dispose()
            panel.chat?.let { chat -> service.scope.launch { runCatching { if (sharedDaemon(project)) chat.detach() else chat.close() } } }
        }
        window.contentManager.addContent(content)
        window.contentManager.setSelectedContent(content, true)
        if (activate) window.activate(null)
        // The panel shows every event; the IDE reloads the files Claude changed.
        val listener = ChatListener { event ->
            panel.listener.onEvent(event)
            DiffViews.refreshChangedFile(project, event)
        }
        service.scope.launch(ClaudeService.UI) {
            try {
                val chat = withContext(Dispatchers.IO) { start(service, listener) }
                if (closed.get()) {
                    withContext(Dispatchers.IO) { chat.close() }
                    return@launch
                }
                panel.attach(chat)
                panel.prompt.text.requestFocusInWindow()
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                Notify.error(project, "Cannot open the chat", e)
                if (closed.get() || project.isDisposed) return@launch
                // The stored page and the prompts written while it started stay, marked not sent; an empty tab goes.
                if (panel.worthKeeping) {
                    content.putUserData(RESUMING, null) // resuming the session again opens a new tab
                    panel.openFailed(
                        e.message ?: e.toString(),
                        resuming?.let { sessionId -> { before -> service.client.storedPage(service.cwd, sessionId, before) } },
                    )
                } else {
                    window.contentManager.removeContent(content, true)
                }
            }
        }
        return panel
    }
}
