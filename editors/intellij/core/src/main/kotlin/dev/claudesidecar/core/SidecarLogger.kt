package dev.claudesidecar.core

/** Where the client's log lines go (the IDE's log, a test's stderr, ...). Called from any thread. */
fun interface SidecarLogger {
    fun log(level: Level, message: String)

    enum class Level { DEBUG, INFO, WARN, ERROR }

    companion object {
        val NONE: SidecarLogger = SidecarLogger { _, _ -> }

        /** The level of one of the daemon's stderr lines (`<date> <time> LEVEL logger: message`). */
        fun daemonLineLevel(line: String): Level =
            when (Regex("""^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) """).find(line)?.groupValues?.get(1)) {
                "ERROR", "CRITICAL" -> Level.ERROR
                "WARNING" -> Level.WARN
                "INFO" -> Level.INFO
                // Tracebacks and other unprefixed lines belong to the record before them.
                else -> Level.DEBUG
            }
    }
}
