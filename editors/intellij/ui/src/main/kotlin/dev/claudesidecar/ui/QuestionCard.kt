package dev.claudesidecar.ui

import com.google.gson.JsonObject
import dev.claudesidecar.core.protocol.PermissionDecision
import dev.claudesidecar.core.protocol.PermissionRequestNotification
import javax.swing.JButton
import javax.swing.JTextField
import javax.swing.JToggleButton
import javax.swing.SwingConstants
import javax.swing.event.DocumentEvent
import javax.swing.event.DocumentListener

/**
 * An AskUserQuestion: each question with its options as buttons (several may be chosen for a
 * multiSelect question) and a field for an own answer. One single-choice question is
 * answered by its click; otherwise Submit sends every answer. Answers are keyed by the full
 * question text, several labels joined with ", " (docs/protocol.md, respondPermission).
 */
class QuestionCard(
    request: PermissionRequestNotification,
    responder: Responder,
) : PermissionCard(request, responder) {
    private class Question(
        val text: String,
        val multiSelect: Boolean,
        val options: List<JToggleButton>,
        val own: JTextField,
    ) {
        fun answer(): String? {
            val chosen = options.filter { it.isSelected }.map { it.actionCommand } + listOfNotNull(own.text.trim().ifEmpty { null })
            return chosen.joinToString(", ").ifEmpty { null }
        }
    }

    private val questions: List<Question>
    private val submit: JButton = primaryButton("Submit") { send() }

    init {
        val raw = request.input.getAsJsonArray("questions")?.filter { it.isJsonObject }?.map { it.asJsonObject } ?: emptyList()
        val oneClick = raw.size == 1 && raw[0].get("multiSelect")?.asBoolean != true
        add(title(if (raw.size > 1) "Claude has some questions" else "Claude has a question"))
        questions = raw.map { q -> question(q, oneClick) }
        if (!oneClick) {
            add(row(submit, button("Skip") { skip() }))
        } else {
            add(row(button("Skip") { skip() }))
        }
        refresh()
        finish()
    }

    private fun question(q: JsonObject, oneClick: Boolean): Question {
        fun s(o: JsonObject, key: String) = o.get(key)?.takeIf { it.isJsonPrimitive }?.asString ?: ""
        val text = s(q, "question")
        val multiSelect = q.get("multiSelect")?.asBoolean == true
        val header = s(q, "header")
        val prefix = if (header.isEmpty()) "" else "$header: "
        add(wrappingText(prefix + text + if (multiSelect) "  (choose any)" else ""))
        val own = JTextField().apply {
            putClientProperty("JTextField.placeholderText", if (multiSelect) "Something else (optional)" else "Or type your own answer")
        }
        val options = (q.getAsJsonArray("options")?.filter { it.isJsonObject }?.map { it.asJsonObject } ?: emptyList()).map { option ->
            val label = s(option, "label")
            val description = s(option, "description")
            val muted = "<font color='${Theme.hex(Theme.muted)}'>${Markdown.escape(description)}</font>"
            val html = "<html><b>${Markdown.escape(label)}</b>&nbsp;&nbsp;$muted</html>"
            JToggleButton(if (description.isEmpty()) label else html).apply {
                actionCommand = label
                horizontalAlignment = SwingConstants.LEFT
                toolTipText = description.ifEmpty { null }
            }
        }
        val question = Question(text, multiSelect, options, own)
        for (option in options) {
            option.addActionListener {
                if (!multiSelect) {
                    options.filter { it !== option }.forEach { it.isSelected = false }
                    own.text = ""
                }
                if (oneClick && option.isSelected) send() else refresh()
            }
            add(option)
        }
        own.document.addDocumentListener(object : DocumentListener {
            override fun insertUpdate(e: DocumentEvent) = typed()
            override fun removeUpdate(e: DocumentEvent) = typed()
            override fun changedUpdate(e: DocumentEvent) = typed()
            private fun typed() {
                if (!multiSelect && own.text.isNotBlank()) options.forEach { it.isSelected = false }
                refresh()
            }
        })
        own.addActionListener { if (questions.any { it.answer() != null }) send() }
        add(own)
        return question
    }

    private fun refresh() {
        submit.isEnabled = questions.any { it.answer() != null }
    }

    private fun send() {
        val answers = questions.mapNotNull { q -> q.answer()?.let { q.text to it } }.toMap()
        answer(PermissionDecision.ALLOW) { copy(answers = answers) }
    }

    private fun skip() = answer(PermissionDecision.DENY) { copy(message = "The user did not answer the questions.") }
}
