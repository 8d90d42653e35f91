package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.PermissionMode
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The words and HTML an IDE host shows from ui: notification text, the permission modes of its settings. */
class HostTextTest {
    @Test
    fun `a message shows as written in HTML, markup escaped and line breaks kept`() {
        assertEquals(
            "Cannot open the chat: &lt;cwd&gt; &amp; &quot;x&quot;<br>line 2<br>line 3",
            Html.text("Cannot open the chat: <cwd> & \"x\"\nline 2\r\nline 3"),
        )
    }

    @Test
    fun `the settings name each mode as the chat header does, and keep an unknown value`() {
        assertEquals("Ask before edits", PermissionModes.label("default"))
        assertEquals("Accept edits", PermissionModes.label(PermissionMode.ACCEPT_EDITS.wire))
        assertEquals("Plan mode", PermissionModes.label("plan"))
        assertEquals("bypassPermissions", PermissionModes.label("bypassPermissions"))
        assertEquals("", PermissionModes.label(null))
    }
}
