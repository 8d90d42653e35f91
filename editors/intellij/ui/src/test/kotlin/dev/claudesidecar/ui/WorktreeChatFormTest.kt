package dev.claudesidecar.ui

import com.formdev.flatlaf.FlatLightLaf
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance

/** "New chat in worktree…"'s form: the worktree's name comes from the task's first words, as in every client. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorktreeChatFormTest {
    @BeforeAll
    fun laf() {
        onEdt { FlatLightLaf.setup() }
    }

    @Test
    fun `a name is the task's first four words, lowercased, other characters one dash`() {
        assertEquals("fix-the-login-form", WorktreeChatForm.nameFrom("Fix the login form!"))
        assertEquals("add-the-feature-please", WorktreeChatForm.nameFrom("Add the feature, please: now"))
        assertEquals("port-v2-1-api", WorktreeChatForm.nameFrom("  Port   v2.1 API_client  "))
        assertEquals(
            "ber-caf-fix",
            WorktreeChatForm.nameFrom("Über café fix"),
            "letters outside a-z separate words, as in VS Code and Neovim",
        )
        assertEquals("", WorktreeChatForm.nameFrom("?! …"))
    }

    @Test
    fun `the name follows the task as it is typed`() = onEdt {
        val form = WorktreeChatForm()
        form.task.text = "Fix the login"
        assertEquals("fix-the-login", form.name.text)
        form.task.append(" form! And the signup page")

        assertEquals("fix-the-login-form", form.name.text)
        val request = form.request()
        assertEquals("fix-the-login-form", request.worktree.name)
        assertEquals("Fix the login form! And the signup page", request.firstPrompt)
        assertEquals("head", request.worktree.baseRef)
    }

    @Test
    fun `a name the user typed stays when the task changes`() = onEdt {
        val form = WorktreeChatForm()
        form.task.text = "Fix the login form"
        form.name.text = "login"
        form.task.text = "Fix the login form and the signup page"

        assertEquals("login", form.name.text)
        assertEquals("login", form.request().worktree.name)
    }

    @Test
    fun `without a task nothing is sent and the daemon picks the name`() = onEdt {
        val request = WorktreeChatForm().request()

        assertNull(request.firstPrompt)
        assertNull(request.worktree.name)
    }
}
