package dev.claudesidecar.ui

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import dev.claudesidecar.core.ProposedEdit
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.PermissionMode
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import dev.claudesidecar.core.protocol.RespondPermissionParams
import java.awt.Graphics
import java.awt.Graphics2D
import java.awt.RenderingHints
import javax.swing.AbstractButton
import javax.swing.JLabel
import javax.swing.JTextField

/** Sends a permission answer; [failed] gets the error message when the daemon refuses it. */
fun interface Responder {
    fun respond(answer: RespondPermissionParams, failed: (String) -> Unit)
}

/**
 * A pending permission request as a card docked above the prompt: a tool use to allow or
 * deny, an AskUserQuestion to answer ([QuestionCard]) or a plan to approve ([PlanCard]).
 * The card stays until the request is no longer pending; while an answer is on its way its
 * controls are disabled.
 */
abstract class PermissionCard(
    val request: PermissionRequestNotification,
    private val responder: Responder,
) : Column(8) {
    private val error = wrappingText("", Theme.smallFont, Theme.error).apply { isVisible = false }

    init {
        border = padding(10, 12, 10, 12)
    }

    /** Call last in a subclass's init: the error line goes under everything. */
    protected fun finish() = add(error)

    override fun paintComponent(g: Graphics) {
        val g2 = g.create() as Graphics2D
        g2.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON)
        g2.color = Theme.cardBackground
        g2.fillRoundRect(0, 0, width - 1, height - 1, 12, 12)
        g2.color = Theme.mix(Theme.accent, Theme.background, 0.45)
        g2.drawRoundRect(0, 0, width - 1, height - 1, 12, 12)
        g2.dispose()
    }

    protected fun title(text: String) = JLabel(text).apply { font = Theme.font.deriveFont(java.awt.Font.BOLD) }

    protected fun answer(decision: PermissionDecision, configure: RespondPermissionParams.() -> RespondPermissionParams = { this }) {
        setEnabledDeep(false)
        error.isVisible = false
        val params = RespondPermissionParams(channelId = "", decision = decision, requestId = request.requestId).configure()
        responder.respond(params) { message ->
            setEnabledDeep(true)
            error.text = message
            error.isVisible = true
            revalidate()
        }
    }

    private fun setEnabledDeep(enabled: Boolean) {
        componentTree(this).drop(1).filter { it is AbstractButton || it is JTextField }.forEach { it.isEnabled = enabled }
    }

    /**
     * What the user has typed in the card's fields, in layout order. Set on a card made for the
     * same request (its fields come in the same order) to carry the typing over.
     */
    var typed: List<String>
        get() = componentTree(this).filterIsInstance<JTextField>().map { it.text }.toList()
        set(texts) {
            componentTree(this).filterIsInstance<JTextField>().zip(texts.asSequence()).forEach { (field, text) -> field.text = text }
        }

    companion object {
        fun of(
            request: PermissionRequestNotification,
            cwd: String?,
            responder: Responder,
            review: ((PermissionRequestNotification) -> Unit)? = null,
        ): PermissionCard = when (request.toolName) {
            "AskUserQuestion" -> QuestionCard(request, responder)
            "ExitPlanMode" -> PlanCard(request, responder)
            else -> ToolPermissionCard(request, cwd, responder, review)
        }
    }
}

/**
 * Allow / Allow always / Deny for a tool use, with the proposed diff of an edit (and, with
 * [review], a link that shows it in the host's diff viewer).
 */
class ToolPermissionCard(
    request: PermissionRequestNotification,
    cwd: String?,
    responder: Responder,
    review: ((PermissionRequestNotification) -> Unit)? = null,
) : PermissionCard(request, responder) {
    private val reason = JTextField().apply {
        putClientProperty("JTextField.placeholderText", "Tell Claude what to do instead (optional)")
        toolTipText = "Sent with Deny"
        addActionListener { deny() }
    }

    init {
        val name = request.displayName ?: ToolRow.toolLabel(request.toolName)
        val target = ToolRow.keyArgument(request.toolName, request.input, cwd)
        add(row(title("Allow $name?"), if (target.isNotEmpty()) JLabel(target).apply { font = Theme.monoFont } else null, gap = 8))
        if (request.toolName == "Bash") {
            add(
                wrappingText(request.input.get("command")?.asString ?: "", Theme.monoFont).apply {
                    isOpaque = true
                    background = Theme.codeBackground
                    border = padding(4, 6, 4, 6)
                },
            )
        }
        val description = request.description?.takeIf { it != target && it != request.displayName }
        if (description != null) add(wrappingText(description, Theme.smallFont, Theme.muted))
        when {
            request.preview != null -> add(DiffView(request.preview!!))
            request.previewNote != null -> add(wrappingText(request.previewNote!!, Theme.smallFont, Theme.muted))
        }
        if (review != null && ProposedEdit.editedPath(request.toolName, request.input) != null) {
            add(row(linkButton("Review in the diff viewer") { review(request) }, gap = 0))
        }
        val why = listOfNotNull(request.decisionReason, request.blockedPath?.let { "Path: $it" })
        why.forEach { add(wrappingText(it, Theme.smallFont, Theme.muted)) }
        val always = describeSuggestions(request.suggestions, cwd)
        add(
            row(
                primaryButton("Allow") { answer(PermissionDecision.ALLOW) },
                if (always.isNotEmpty()) button(always) { answer(PermissionDecision.ALLOW_ALWAYS) } else null,
                button("Deny") { deny() },
            ),
        )
        add(reason)
        finish()
    }

    private fun deny() {
        val message = reason.text.trim().ifEmpty { null }
        answer(PermissionDecision.DENY) { copy(message = message) }
    }

    companion object {
        private val WHERE = mapOf(
            "session" to "for this session",
            "localSettings" to "in this project",
            "projectSettings" to "in this project (shared)",
            "userSettings" to "everywhere",
        )

        /** What "allow always" would keep, in words, from the request's suggestions ("" when none). */
        fun describeSuggestions(suggestions: List<JsonElement>, cwd: String?): String =
            suggestions.filter { it.isJsonObject }.map { it.asJsonObject }.joinToString("; ") { s ->
                val scope = WHERE[str(s, "destination")] ?: ""
                when {
                    str(s, "type") == "setMode" && str(s, "mode") == "acceptEdits" -> "Allow all edits $scope"
                    str(s, "type") == "setMode" -> "Switch to ${str(s, "mode")} mode $scope"
                    str(s, "type") == "addRules" -> {
                        val rules = s.getAsJsonArray("rules")?.filter { it.isJsonObject }?.map { rule(it.asJsonObject) }.orEmpty()
                        "Always allow ${rules.joinToString(", ")} $scope"
                    }
                    str(s, "type") == "addDirectories" -> {
                        val directories = s.getAsJsonArray("directories")?.map { relativePath(it.asString, cwd) }.orEmpty()
                        "Always allow access to ${directories.joinToString(", ")} $scope"
                    }
                    else -> "Always allow"
                }.trim()
            }

        private fun str(o: JsonObject, key: String) = o.get(key)?.takeIf { it.isJsonPrimitive }?.asString ?: ""

        /** A permission rule as the CLI writes it: `Bash(npm test)`, or the tool alone for all its uses. */
        private fun rule(rule: JsonObject): String {
            val content = str(rule, "ruleContent")
            return if (content.isEmpty()) str(rule, "toolName") else "${str(rule, "toolName")}($content)"
        }
    }
}

/** Claude's plan (ExitPlanMode) as markdown: approve it, or keep planning with feedback. */
class PlanCard(
    request: PermissionRequestNotification,
    responder: Responder,
) : PermissionCard(request, responder) {
    private val feedback = JTextField().apply {
        putClientProperty("JTextField.placeholderText", "What should change in the plan? (with Keep planning)")
    }

    init {
        add(title("Ready to code? Here is Claude’s plan:"))
        add(MarkdownView().apply { markdown = request.input.get("plan")?.takeIf { it.isJsonPrimitive }?.asString ?: "" })
        add(
            row(
                primaryButton("Approve, auto-accept edits") {
                    answer(PermissionDecision.ALLOW) { copy(mode = PermissionMode.ACCEPT_EDITS) }
                },
                button("Approve, ask before edits") { answer(PermissionDecision.ALLOW) { copy(mode = PermissionMode.DEFAULT) } },
                button("Keep planning") {
                    val message = feedback.text.trim().ifEmpty { "Keep planning: the user does not approve this plan yet." }
                    answer(PermissionDecision.DENY) { copy(message = message) }
                },
            ),
        )
        add(feedback)
        finish()
    }
}
