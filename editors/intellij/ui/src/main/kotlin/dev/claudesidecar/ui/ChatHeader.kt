package dev.claudesidecar.ui

import dev.claudesidecar.core.protocol.ChannelInfo
import dev.claudesidecar.core.protocol.ContextReading
import dev.claudesidecar.core.protocol.ModelInfo
import dev.claudesidecar.core.protocol.PermissionMode
import java.awt.BorderLayout
import java.awt.Dimension
import java.util.Locale
import javax.swing.BorderFactory
import javax.swing.DefaultListCellRenderer
import javax.swing.JComboBox
import javax.swing.JLabel
import javax.swing.JList
import javax.swing.JPanel
import javax.swing.JProgressBar
import kotlin.math.roundToInt

/**
 * The chat's header: the model and permission-mode pickers (what the channel's CLI offers,
 * `claude/channelInfo`), how full the context window is and what the chat has cost (the
 * daemon's figures: the channel's info when it opens, then each `claude/turnEnded`).
 */
class ChatHeader(
    private val onModel: (String) -> Unit,
    private val onMode: (PermissionMode) -> Unit,
) : JPanel(BorderLayout()) {
    private val models = JComboBox<ModelInfo>().apply {
        toolTipText = "Model"
        renderer = object : DefaultListCellRenderer() {
            override fun getListCellRendererComponent(list: JList<*>?, value: Any?, index: Int, selected: Boolean, focus: Boolean) =
                super.getListCellRendererComponent(list, (value as? ModelInfo)?.displayName ?: "", index, selected, focus)
        }
    }
    private val modes = JComboBox(MODES.keys.toTypedArray()).apply {
        toolTipText = "Permission mode: when Claude asks before using a tool"
        renderer = object : DefaultListCellRenderer() {
            override fun getListCellRendererComponent(list: JList<*>?, value: Any?, index: Int, selected: Boolean, focus: Boolean) =
                super.getListCellRendererComponent(list, MODES[value] ?: "", index, selected, focus)
        }
    }
    private val meter = JProgressBar(0, 100).apply {
        preferredSize = Dimension(60, 6)
        isVisible = false
    }
    private val meterLabel = mutedLabel("")
    private val costLabel = mutedLabel("").apply { toolTipText = "What this chat has cost so far" }

    /** Shown while the shared daemon's connection is made again (the chat runs on there). */
    val reconnectingLabel = JLabel("Reconnecting…").apply {
        toolTipText = "The connection to the shared daemon dropped; the chat goes on there and is caught up when connected again"
        isVisible = false
    }

    /** Set while the pickers are filled in code, so that no request goes out for it. */
    private var filling = false

    init {
        isOpaque = false
        restyle()
        // The pickers take what the meter leaves and shrink in a narrow window (their text cut
        // short), rather than being laid over the meter: the meter and cost always show whole.
        for (picker in listOf(models, modes)) picker.minimumSize = Dimension(MIN_PICKER_WIDTH, 0)
        add(row(models, modes), BorderLayout.CENTER)
        add(row(reconnectingLabel, meterLabel, meter, costLabel).apply { border = padding(0, 8, 0, 0) }, BorderLayout.EAST)
        models.addActionListener { if (!filling) (models.selectedItem as? ModelInfo)?.let { onModel(it.value) } }
        modes.addActionListener { if (!filling) (modes.selectedItem as? PermissionMode)?.let(onMode) }
        models.isEnabled = false
        modes.isEnabled = false
    }

    /** Takes the colours and fonts of the look and feel now in use. */
    fun restyle() {
        border = BorderFactory.createCompoundBorder(BorderFactory.createMatteBorder(0, 0, 1, 0, Theme.border), padding(6, 10, 6, 10))
        for (label in listOf(meterLabel, costLabel)) {
            label.font = Theme.smallFont
            label.foreground = Theme.muted
        }
        reconnectingLabel.font = Theme.smallFont.deriveFont(java.awt.Font.BOLD)
        reconnectingLabel.foreground = Theme.warning
    }

    /** Shows or hides the reconnecting mark. */
    fun showReconnecting(reconnecting: Boolean) {
        reconnectingLabel.isVisible = reconnecting
        revalidate()
    }

    /** Shows what the channel offers and uses now ([model] and [mode] from the latest status when known). */
    fun show(info: ChannelInfo?, model: String?, mode: String?) {
        filling = true
        try {
            if (info != null) {
                val offered = info.models
                if (offered.map { it.value } != (0 until models.itemCount).map { models.getItemAt(it).value }) {
                    models.removeAllItems()
                    offered.forEach { models.addItem(it) }
                }
                val current = model ?: info.model
                offered.firstOrNull { it.value == current || it.resolvedModel == current }?.let { models.selectedItem = it }
                // JComboBox.setEnabled repaints even when nothing changes, and this runs on every event.
                if (models.isEnabled != offered.isNotEmpty()) models.isEnabled = offered.isNotEmpty()
                if (!modes.isEnabled) modes.isEnabled = true
            }
            PermissionMode.of(mode ?: info?.permissionMode ?: "")?.takeIf { it in MODES }?.let { modes.selectedItem = it }
        } finally {
            filling = false
        }
    }

    /** Shows the context meter ([usage]: none known yet hides it) and the cost so far (none when 0). */
    fun showTotals(usage: ContextReading?, costUsd: Double) {
        val percent = usage?.percentage?.roundToInt()?.coerceIn(0, 100) ?: 0
        meter.value = percent
        meter.isVisible = usage != null
        meterLabel.text = if (usage != null) "$percent% context" else ""
        val tip = usage?.let { String.format(Locale.ROOT, "%,d of %,d tokens", it.totalTokens, it.maxTokens) }
        meter.toolTipText = tip
        meterLabel.toolTipText = tip
        costLabel.text = if (costUsd > 0) String.format(Locale.ROOT, "$%.2f", costUsd) else ""
    }

    private companion object {
        const val MIN_PICKER_WIDTH = 72
        val MODES = PermissionModes.LABELS
    }
}

/** The permission modes a user picks from, in words: the chat header's picker and an IDE's settings. */
object PermissionModes {
    /** In the picker's order (bypassPermissions needs the daemon's opt-in: not offered here). */
    val LABELS: Map<PermissionMode, String> = linkedMapOf(
        PermissionMode.DEFAULT to "Ask before edits",
        PermissionMode.ACCEPT_EDITS to "Accept edits",
        PermissionMode.PLAN to "Plan mode",
        PermissionMode.AUTO to "Auto",
    )

    /** The words for a mode's wire value ([PermissionMode.wire]); the value itself when it is not offered. */
    fun label(wire: String?): String = PermissionMode.of(wire ?: "")?.let { LABELS[it] } ?: wire.orEmpty()
}
