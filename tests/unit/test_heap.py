"""The daemon's heap keeps freed memory for the next turn (glibc)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

GLIBC = sys.platform.startswith("linux") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith(
    "glibc"
)

# In a process of its own (the setting is process-wide): a 3 MiB block is made, freed and
# made again; prints whether the setting took and the page faults of the second time.
PROBE = """
import resource
from claude_sidecar.runtime import heap

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

kept = heap.keep_freed_heap()
block = b"a" * (3 << 20)
del block
before = faults()
block = b"a" * (3 << 20)
print(kept, faults() - before)
"""


@pytest.mark.skipif(not GLIBC, reason="mallopt thresholds are glibc's")
def test_a_large_block_freed_is_made_again_in_the_same_memory() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout.split()

    # glibc's own rule faults in most of the block's 768 pages again the second time.
    assert out[0] == "True"
    assert int(out[1]) < 768 // 8
