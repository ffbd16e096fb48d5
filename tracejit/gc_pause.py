"""Python's cyclic garbage collector paused while a function compiles.

A compile allocates millions of small objects (nodes, values, expressions) that stay alive
until it ends; the collector's passes over them made tracing and the graph passes of an
unrolled 800-step RNN 1.4x slower than with the collector off, a cost that grows faster
than the program (see benchmarks/RESULTS.md). The compile's garbage is freed by reference
counting as usual; cycles it leaves are collected once the collector resumes.

>>> import gc
>>> with paused():
...     gc.isenabled()
False
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Automatic collection off inside the block (nesting and a caller's gc.disable() kept)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
