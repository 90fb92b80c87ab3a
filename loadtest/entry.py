"""The ``loadtest`` command's entry point (and ``python -m loadtest``'s).

The commands that load Locust — ``run`` and ``ceiling`` (Locust's runner) — get gevent's patches first thing, before
anything imports sockets or ssl, as Locust does on import (patching ssl after it was imported may recurse). The others
stay free of Locust and patch nothing: ``report``, ``merge``, ``simulate``, ``compare``, ``cleanup`` and ``locustfile``
load neither Locust nor gevent; ``emulator`` serves on gevent's own sockets, unpatched.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

__all__ = ["GEVENT_COMMANDS", "MMAP_COMMANDS", "main"]

GEVENT_COMMANDS = ("run", "ceiling")
#: Arrow's allocator for the tool's commands and the processes they start: the system's, which hands freed memory
#: back. mimalloc, Arrow's default here, kept what a run's put-away buckets and its results once used: a real
#: 10-minute run peaked at 295.8 MB with it, 274.1 MB with the system's (bench/run_memory.py). A user's own
#: ARROW_DEFAULT_MEMORY_POOL stands; Arrow reads it when it is first imported, so this comes before any import of it.
ARROW_POOL = "system"
#: Commands whose blocks of megabytes are made in one thread and freed in another (``loadtest traffic``'s reader): glibc
#: raises its threshold for handing a large block to the kernel each time one is freed, so later ones come from its
#: heaps and stay there, and it keeps a heap for each thread that allocates. With the threshold fixed at 16 MB (the
#: reader's blocks and their buffers are mapped, each array of a block is not: at glibc's 128 KB a read took 20 % more)
#: and two heaps, ten million classic records peaked at 0.84 GB, where they had taken 1.1 (bench/traffic_read.py).
MMAP_COMMANDS = ("traffic",)
_M_MMAP_THRESHOLD, _MMAP_BYTES = -3, 16 << 20
_M_ARENA_MAX, _ARENAS = -8, 2


def _large_blocks_from_the_kernel() -> None:
    """glibc's mmap threshold fixed and its heaps two (a no-op where the C library is not glibc)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES)
        libc.mallopt(_M_ARENA_MAX, _ARENAS)
    except (OSError, AttributeError):
        pass


def main() -> int:
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    if sys.argv[1:2] and sys.argv[1] in MMAP_COMMANDS:
        _large_blocks_from_the_kernel()
    if sys.argv[1:2] and sys.argv[1] in GEVENT_COMMANDS:
        from gevent import monkey

        monkey.patch_all()
    from .cli import main as command

    try:
        return command()
    finally:
        # the interpreter's last collection walks every object of Locust, pandas and matplotlib: 0.2 s of a command's
        # exit (bench/command_exit.py). Nothing it would free outlives the process, and what must be done at the end
        # is done before (outputs written, children stopped by PID); the exit handlers still run
        gc.freeze()
