package dev.claudesidecar.plugin

import com.intellij.openapi.options.BoundConfigurable
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.DialogPanel
import com.intellij.ui.SimpleListCellRenderer
import com.intellij.ui.dsl.builder.AlignX
import com.intellij.ui.dsl.builder.COLUMNS_LARGE
import com.intellij.ui.dsl.builder.bindItem
import com.intellij.ui.dsl.builder.bindText
import com.intellij.ui.dsl.builder.columns
import com.intellij.ui.dsl.builder.panel
import com.intellij.ui.dsl.builder.rows
import dev.claudesidecar.ui.PermissionModes

/** Settings | Tools | Claude Sidecar: the project's [ClaudeSettings]. */
class ClaudeConfigurable(private val project: Project) : BoundConfigurable("Claude Sidecar") {
    private val settings get() = ClaudeSettings.getInstance(project)

    override fun createPanel(): DialogPanel {
        val options = settings.state
        return panel {
            group("Daemon") {
                buttonsGroup("Chats run in:") {
                    row {
                        radioButton(
                            "A private daemon of this project (claude-sidecar --stdio): they end with the IDE",
                            ClaudeSettings.PRIVATE,
                        )
                    }
                    row {
                        radioButton("The shared daemon (claude-sidecar connect): they outlive the IDE", ClaudeSettings.SHARED)
                            .comment("Closing a tab detaches (Attach to a Running Chat opens it again); End Chat ends it")
                    }
                }.bind({ options.daemonMode ?: ClaudeSettings.PRIVATE }, { options.daemonMode = it })
                row("Command:") {
                    textField().columns(COLUMNS_LARGE)
                        .bindText({ options.daemonCommand ?: "" }, { options.daemonCommand = it.trim() })
                        .comment(
                            "Empty: <code>claude-sidecar --stdio</code> or <code>claude-sidecar connect</code> from PATH. " +
                                "E.g. <code>/path/to/.venv/bin/claude-sidecar connect</code>, <code>ssh devbox claude-sidecar connect</code>",
                        )
                }
                row("Claude Code CLI:") {
                    textField().columns(COLUMNS_LARGE)
                        .bindText({ options.cliPath ?: "" }, { options.cliPath = it.trim() })
                        .comment("Empty: the CLI bundled with the daemon's claude-agent-sdk")
                }
                row("Environment:") {
                    textArea().rows(4).align(AlignX.FILL)
                        .bindText({ options.env ?: "" }, { options.env = it })
                        .comment(
                            "One <code>KEY=VALUE</code> per line; <code>-KEY</code> removes a variable. Applies after Restart the Daemon (with the shared daemon: Reconnect to the Shared Daemon).",
                        )
                }
            }
            group("New Chats") {
                row("Model:") {
                    textField().columns(COLUMNS_LARGE)
                        .bindText({ options.model ?: "" }, { options.model = it.trim() })
                        .comment("Empty: the CLI's default; the chat header switches it for one chat")
                }
                row("Permission mode:") {
                    // The words of the chat header's picker, not the wire values.
                    comboBox(PERMISSION_MODES, SimpleListCellRenderer.create("") { PermissionModes.label(it) }).bindItem(
                        { options.permissionMode ?: "default" },
                        { options.permissionMode = it ?: "default" },
                    )
                }
            }
        }
    }

    override fun apply() {
        val before = settings.daemonKey()
        super.apply()
        if (settings.daemonKey() != before) ClaudeService.getInstance(project).daemonSettingsChanged()
    }

    companion object {
        /** The modes a new chat may start in (bypassPermissions needs the daemon's consent: not offered). */
        val PERMISSION_MODES = listOf("default", "acceptEdits", "plan")
    }
}
