package dev.claudesidecar.core

/** How an editor's settings (one text field each) become the daemon's command and environment. */
object CommandLine {
    /** Splits a command line on whitespace, keeping "quoted" or 'quoted' arguments whole (the quotes go). */
    fun split(line: String): List<String> = Regex("\"([^\"]*)\"|'([^']*)'|(\\S+)").findAll(line).map { m ->
        m.groups[1]?.value ?: m.groups[2]?.value ?: m.value
    }.toList()

    /**
     * `KEY=VALUE` lines as an environment: blank lines and `#` comments are skipped, a line
     * `KEY=` sets an empty value, a line `-KEY` removes the variable (null). Throws
     * [SidecarException] (`where` = [setting]) naming the first line that is neither.
     */
    fun environment(text: String, setting: String = "env"): Map<String, String?> {
        val env = LinkedHashMap<String, String?>()
        text.lines().map { it.trim() }.forEachIndexed { i, line ->
            when {
                line.isEmpty() || line.startsWith("#") -> Unit
                line.startsWith("-") && NAME.matches(line.substring(1)) -> env[line.substring(1)] = null
                line.contains('=') && NAME.matches(line.substringBefore('=').trim()) ->
                    env[line.substringBefore('=').trim()] = line.substringAfter('=')
                else -> throw SidecarException("$setting, line ${i + 1}: write KEY=VALUE (or -KEY to unset), not \"$line\"", setting)
            }
        }
        return env
    }

    private val NAME = Regex("[A-Za-z_][A-Za-z0-9_]*")
}
