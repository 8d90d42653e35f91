package dev.claudesidecar.ui

import dev.claudesidecar.core.SidecarClient
import dev.claudesidecar.core.SidecarException
import dev.claudesidecar.core.protocol.SessionSummary
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.swing.Swing
import kotlin.coroutines.CoroutineContext

/**
 * The stored sessions of a folder (`claude/listSessions`), newest first; double-click or
 * Enter resumes one through [onOpen]. Titles wrap at the list's width (never cut off with
 * "…"). [uiContext]: the EDT dispatcher of its requests. A host calls [load] again when a
 * turn ended (a new session appears, an old one moves up); the list loads again by itself
 * when the daemon has read a long session it listed before reading it whole.
 */
class SessionList(
    private val client: SidecarClient,
    private val cwd: String,
    uiContext: CoroutineContext = Dispatchers.Swing,
    onOpen: (SessionSummary) -> Unit,
) : ChoiceList<SessionSummary>("Sessions in ${cwd.substringAfterLast('/')}", uiContext, onOpen) {
    override val emptyText = "No stored sessions yet."

    init {
        scope.launch { client.sessionsChanged.collect { if (it.cwd == cwd) load() } }
    }

    override suspend fun fetch(): List<SessionSummary> = client.listSessions(cwd)

    override fun failedText(e: SidecarException) = "Cannot list the sessions: ${e.message}"

    override fun title(item: SessionSummary) = titleOf(item)

    override fun facts(item: SessionSummary): String {
        val branch = item.gitBranch?.let { "  ·  $it" } ?: ""
        return "${item.updatedAt.take(16).replace('T', ' ')}  ·  ${countOf(item)}$branch"
    }

    override fun tooltip(item: SessionSummary) = item.firstPrompt.takeIf { it.isNotBlank() && it != titleOf(item) }

    companion object {
        /** Its message count; none yet for a long session the daemon has not read whole. */
        fun countOf(session: SessionSummary): String =
            if (session.partial == true) "not counted yet" else "${session.messageCount} messages"

        /**
         * A session's title, whole: the daemon cuts a title made from the first prompt short
         * ("…"); the list wraps the prompt itself instead.
         */
        fun titleOf(session: SessionSummary): String {
            session.customTitle?.let { return it }
            val cut = session.title.removeSuffix("…").trimEnd()
            return when {
                session.title.isBlank() -> session.firstPrompt
                session.title.endsWith("…") && session.firstPrompt.startsWith(cut) -> session.firstPrompt
                else -> session.title
            }
        }
    }
}
