package dev.claudesidecar.ui

import java.awt.Color
import java.awt.Font
import java.awt.GraphicsEnvironment
import javax.swing.UIManager

/**
 * Colours and fonts of the chat, derived from the look and feel in use (IntelliJ's Light or
 * Darcula inside the IDE, FlatLaf in the standalone app), so the panel follows the theme.
 * Read at render time: a theme switch takes effect on the next render.
 */
object Theme {
    val background: Color get() = UIManager.getColor("Panel.background") ?: Color.WHITE
    val foreground: Color get() = UIManager.getColor("Label.foreground") ?: Color.BLACK
    val dark: Boolean get() = luminance(background) < 0.5

    val font: Font get() = UIManager.getFont("Label.font") ?: Font(Font.SANS_SERIF, Font.PLAIN, 13)
    val smallFont: Font get() = font.deriveFont(font.size2D - 1f)

    /** The first installed of the fonts IDEs use for code. */
    val monoFamily: String by lazy {
        val installed = GraphicsEnvironment.getLocalGraphicsEnvironment().availableFontFamilyNames.toSet()
        listOf("JetBrains Mono", "Menlo", "Consolas", "DejaVu Sans Mono", "Liberation Mono").firstOrNull { it in installed }
            ?: Font.MONOSPACED
    }
    val monoFont: Font get() = Font(monoFamily, Font.PLAIN, font.size - 1)

    /** Secondary text (footers, notes): readable, but quieter than the answer. */
    val muted: Color get() = readable(mix(foreground, background, 0.4))
    val border: Color get() = UIManager.getColor("Component.borderColor") ?: mix(foreground, background, 0.8)
    val codeBackground: Color get() = mix(foreground, background, if (dark) 0.92 else 0.955)
    val cardBackground: Color get() = mix(foreground, background, if (dark) 0.95 else 0.975)
    val userBackground: Color get() = mix(accent, background, if (dark) 0.82 else 0.9)
    val accent: Color get() = UIManager.getColor("Component.accentColor") ?: Color(0x3574F0)

    /** Link text: the accent, darkened or lightened until it reads on the panel. */
    val link: Color get() = readable(accent)
    val error: Color get() = readable(if (dark) Color(0xF75464) else Color(0xC7222D))
    val warning: Color get() = readable(if (dark) Color(0xE0A33A) else Color(0x9A6700))
    val success: Color get() = readable(if (dark) Color(0x5FB865) else Color(0x1B7532))

    // The diff colours of IntelliJ's own diff viewer (inserted / deleted lines).
    val addedBackground: Color get() = if (dark) Color(0x294436) else Color(0xDDF6E3)
    val removedBackground: Color get() = if (dark) Color(0x5A2E2E) else Color(0xFBE4E4)
    val hunkForeground: Color get() = if (dark) Color(0x8FB1E3) else Color(0x2F5FAF)

    /**
     * [colour] moved towards the foreground just enough to read at WCAG AA on the panel (with
     * room for the slightly different card and code backgrounds): themes with a soft
     * foreground leave little room (Darcula's #bbbbbb on #3c3f41 is 5.5:1 itself).
     */
    fun readable(colour: Color): Color {
        var t = 0.0
        var out = colour
        while (contrast(out, background) < READABLE && t < 1.0) {
            t += 0.1
            out = mix(colour, foreground, t)
        }
        return out
    }

    /** The WCAG contrast ratio of two colours (1 to 21). */
    fun contrast(a: Color, b: Color): Double {
        val (hi, lo) = listOf(relativeLuminance(a), relativeLuminance(b)).sortedDescending()
        return (hi + 0.05) / (lo + 0.05)
    }

    private const val READABLE = 5.0

    private fun relativeLuminance(c: Color): Double {
        fun channel(v: Int) = (v / 255.0).let { if (it <= 0.03928) it / 12.92 else Math.pow((it + 0.055) / 1.055, 2.4) }
        return 0.2126 * channel(c.red) + 0.7152 * channel(c.green) + 0.0722 * channel(c.blue)
    }

    fun hex(color: Color) = "#%02x%02x%02x".format(color.red, color.green, color.blue)

    /** [a] moved towards [b] by [t] (0: a, 1: b). */
    fun mix(a: Color, b: Color, t: Double): Color = Color(
        (a.red + (b.red - a.red) * t).toInt(),
        (a.green + (b.green - a.green) * t).toInt(),
        (a.blue + (b.blue - a.blue) * t).toInt(),
    )

    private fun luminance(c: Color) = (0.2126 * c.red + 0.7152 * c.green + 0.0722 * c.blue) / 255
}
