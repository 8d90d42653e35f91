"""The frame writer sends every frame once, in the order of the calls, and stops on a
broken stream without raising into the code that queued the frame."""

from __future__ import annotations

import asyncio
import io

import pytest
from claude_sidecar.runtime.stdout import FrameWriter


class Stream(io.BytesIO):
    """A client stream that counts its writes and can break."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.broken = False

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.writes += 1
        return super().write(data)


async def test_queued_frames_leave_together_before_the_loop_waits() -> None:
    stream, errors = Stream(), list[OSError | ValueError]()
    writer = FrameWriter(stream, errors.append)

    for n in range(10):
        writer.queue(b"frame %d;" % n)
    assert stream.getvalue() == b""
    await asyncio.sleep(0)

    assert stream.getvalue() == b"".join(b"frame %d;" % n for n in range(10))
    assert stream.writes == 1
    assert errors == []


async def test_a_long_burst_goes_out_in_parts_while_it_is_routed() -> None:
    stream = Stream()
    writer = FrameWriter(stream, lambda error: None)

    for n in range(1000):
        writer.queue(b"%d;" % n)
    written_during_the_burst = stream.writes
    await asyncio.sleep(0)

    assert written_during_the_burst >= 2
    assert stream.getvalue() == b"".join(b"%d;" % n for n in range(1000))


async def test_a_direct_write_follows_what_was_queued_before_it() -> None:
    stream = Stream()
    writer = FrameWriter(stream, lambda error: None)

    writer.queue(b"notification;")
    writer.write(b"response;")
    writer.queue(b"later;")
    await asyncio.sleep(0)

    assert stream.getvalue() == b"notification;response;later;"


async def test_a_broken_stream_is_reported_once_and_later_frames_are_dropped() -> None:
    stream, errors = Stream(), list[OSError | ValueError]()
    writer = FrameWriter(stream, errors.append)
    stream.broken = True

    writer.queue(b"lost;")
    await asyncio.sleep(0)
    writer.queue(b"dropped;")
    writer.write(b"dropped too;")
    await asyncio.sleep(0)

    assert len(errors) == 1
    assert isinstance(errors[0], BrokenPipeError)


@pytest.mark.parametrize("frames", [0, 1])
async def test_close_flushes_what_is_queued(frames: int) -> None:
    stream = Stream()
    flushed: list[bytes] = []
    stream.close = lambda: flushed.append(stream.getvalue())  # type: ignore[method-assign]
    writer = FrameWriter(stream, lambda error: None)

    for _ in range(frames):
        writer.queue(b"last;")
    writer.close()

    assert flushed == [b"last;" * frames]
