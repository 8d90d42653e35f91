package dev.claudesidecar.core.transcript

import dev.claudesidecar.core.protocol.ProtocolJson
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.MethodSource

// Every stream recorded from the real CLI (tests/data/streams), as a client receives it, gives
// the entries the daemon's reference store gives (tests/conversation/test_client_streams.py).

class GoldenStreamsTest {
    @Test
    fun `there are recorded streams to play`() {
        assertTrue(Fixtures.names.size >= 9, "streams: ${Fixtures.names}")
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    fun `the entries of a recorded stream are the golden ones`(name: String) {
        val entries = ProtocolJson.gson.toJsonTree(Fixtures.play(name).entries)
        assertEquals(Fixtures.expectedEntries(name), entries)
    }

    companion object {
        @JvmStatic
        fun streams(): List<String> = Fixtures.names
    }
}
