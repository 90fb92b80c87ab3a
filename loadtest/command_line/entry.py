"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust — ``run`` and ``ceiling`` (Locust's runner) — get gevent's patches first thing, before
anything imports sockets or ssl, as Locust does on import (patching ssl after it was imported may recurse). The others
stay free of Locust and patch nothing: ``report``, ``merge``, ``simulate``, ``advise``, ``compare``, ``cleanup`` and
``locustfile`` load neither Locust nor gevent; ``emulator`` serves on gevent's own sockets, unpatched.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

__all__ = ["GEVENT_COMMANDS", "MMAP_THRESHOLDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling")
#: Arrow's allocator for the tool's commands and the processes they start: the system's, which hands freed memory
#: back. mimalloc, Arrow's default here, kept what a run's put-away buckets and its results once used: a real
#: 10-minute run peaked at 295.8 MB with it, 274.1 MB with the system's (bench/run_memory.py). A user's own
#: ARROW_DEFAULT_MEMORY_POOL stands; Arrow reads it when it is first imported, so this comes before any import of it.
ARROW_POOL = "system"
#: Commands whose large blocks glibc hands back to the kernel when they are freed, at a threshold fixed per command
#: (glibc raises its own each time such a block is freed, so later ones come from its heaps and stay there):
#: - ``traffic``: its reader makes blocks of megabytes in one thread and frees them in another. At 16 MB (the blocks
#:   and their buffers are mapped, each array of a block is not: at glibc's 128 KB a read took 20 % more) and two
#:   heaps, ten million classic records peaked at 0.84 GB, where they had taken 1.1 (bench/traffic_read.py).
#: - ``run`` and ``ceiling``: at the end, the run's buckets frame, its series and the charts are arrays of megabytes,
#:   made one after the other. Those of a longer run stayed in the heaps under the next step's: in-process, a
#:   10-minute run's wrap-up peaked 25.8 MB above a 2-minute one's, at 1 MB 17.4 (bench/run_memory.py for the real
#:   figure). The load's own allocations are far below 1 MB.
#: With each, the heap-trim threshold at twice it (glibc's own rule, which a fixed threshold stops): left at 128 KB,
#: the heap's top went back and forth with the operations, 4-6 % more CPU per read (bench/clients.py's -glibc sides).
MMAP_THRESHOLDS = {"traffic": 16 << 20, "run": 1 << 20, "ceiling": 1 << 20}
#: Commands whose heaps are two, not one per thread that allocates (the reader's threads).
TWO_HEAPS = ("traffic",)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8


def _large_blocks_from_the_kernel(command: str) -> None:
    """glibc's mmap threshold fixed and its heaps bounded for ``command`` (a no-op where the C library is not
    glibc)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLDS[command])
        libc.mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLDS[command])  # glibc's own rule, which a fixed threshold stops
        if command in TWO_HEAPS:
            libc.mallopt(_M_ARENA_MAX, 2)
    except (OSError, AttributeError):
        pass


def main() -> int:
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    if sys.argv[1:2] and sys.argv[1] in MMAP_THRESHOLDS:
        _large_blocks_from_the_kernel(sys.argv[1])
    if sys.argv[1:2] and sys.argv[1] in GEVENT_COMMANDS:
        from gevent import monkey

        monkey.patch_all()
    from .dispatch import main as command

    try:
        return command()
    finally:
        # the interpreter's last collection walks every object of Locust, pandas and matplotlib: 0.2 s of a command's
        # exit (bench/command_exit.py). Nothing it would free outlives the process, and what must be done at the end
        # is done before (outputs written, children stopped by PID); the exit handlers still run
        gc.freeze()
