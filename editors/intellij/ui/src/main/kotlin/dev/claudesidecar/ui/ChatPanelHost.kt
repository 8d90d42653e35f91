package dev.claudesidecar.ui

import dev.claudesidecar.core.Chat
import dev.claudesidecar.core.protocol.PermissionRequestNotification

/**
 * What the host of a [ChatPanel] shows better than the panel itself: an IDE's own diff viewer.
 * The defaults offer nothing, and the panel shows only its own views (the standalone app).
 */
interface ChatPanelHost {
    /** Whether the permission card of a pending edit (Write, Edit, MultiEdit) offers [reviewEdit]. */
    val reviewsEdits: Boolean get() = false

    /** Shows the pending edit [request] of [chat]: the file now against the file as the edit would leave it. */
    fun reviewEdit(chat: Chat, request: PermissionRequestNotification) = Unit

    /** Whether the chat's file updates offer [openFileUpdate]. */
    val opensFileUpdates: Boolean get() = false

    /** Shows the file update [seq] of [chat] (its contents are in [Chat.fileContents]) before and after. */
    fun openFileUpdate(chat: Chat, seq: Int) = Unit

    /**
     * Called on the EDT just before Claude may read or write the files: a prompt goes out, a
     * permission is answered. An IDE saves its unsaved documents here, so that the CLI reads
     * what the user sees and its writes meet no unsaved changes (no file-cache conflict).
     */
    fun beforeAgentActs() = Unit

    companion object {
        val NONE: ChatPanelHost = object : ChatPanelHost {}
    }
}
