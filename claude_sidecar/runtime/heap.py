"""The daemon's memory for a long life: its imports out of the collector's sight, and how
its C heap hands freed memory back to the system (glibc only).

A turn's end brings a few large blocks at once (the complete answer as the CLI's
``assistant`` line, as the entry's text, and encoded in notifications: copies of an
800 KB answer in bench (a)), and glibc gives the freed top of its heap back once more
than ~2x its largest recent block is free there. The next turn then touches that memory
new again: a minor page fault per 4 KiB page, ~2.2 us of system time each on the
machine measured. ``keep_freed_heap`` lets the heap keep up to ``TRIM_THRESHOLD`` free
for reuse, a bound instead of glibc's moving one, so a daemon serving turn after turn
takes the same memory again.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import sys

log = logging.getLogger(__name__)

# mallopt(3) parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

TRIM_THRESHOLD = 16 << 20
"""Free memory the heap may keep at its top before handing it back."""
MMAP_THRESHOLD = 4 << 20
"""Blocks from this size up get their own mapping (unmapped when freed) instead of heap."""


def settle_after_imports() -> None:
    """Set the process up to serve for long, once its imports are done (every front end
    calls it as it starts serving).

    The imports' objects (pygls, lsprotocol, cattrs; pydantic's ACP schema) live as long as
    the process: frozen out of the collector's sight, a full collection takes ~3 ms instead
    of ~30, and the exit ~0.1 s instead of ~1.5 s of tearing them down (an ACP client kills
    an agent slow to exit). Then the heap keeps freed memory for the next turn
    (``keep_freed_heap``).
    """
    gc.collect()
    gc.freeze()
    keep_freed_heap()


def keep_freed_heap() -> bool:
    """Set glibc's heap to keep freed memory up to the thresholds above for reuse; False
    (and nothing changed) on another C library or where ``mallopt`` is missing.

    Setting either threshold also fixes the other (glibc then stops moving them with the
    blocks it sees), so both are set: blocks up to 4 MiB from the heap, as glibc's own
    rule would after the first such block, and up to 16 MiB kept free at its top.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
        mallopt = ctypes.CDLL(None).mallopt
    except (ValueError, OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    if not done:
        log.info("mallopt refused the heap thresholds; glibc's defaults stay")
    return done
