"""Python's cyclic garbage collector paused while a function compiles.

A compile allocates millions of small objects (nodes, values, expressions) that stay alive
until it ends; the collector's passes over them made tracing and the graph passes of an
unrolled 800-step RNN 1.4x slower than with the collector off, a cost that grows faster
than the program (see benchmarks/RESULTS.md). The compile's garbage is freed by reference
counting as usual; what survives it goes to the oldest generation when the collector resumes
(`_promote_survivors`), and cycles it leaves are collected by the next full collection.

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
            if gc.get_freeze_count() == 0:  # a user's own freeze (before a fork) stays
                _promote_survivors()
            gc.enable()


def _promote_survivors() -> None:
    """Move every tracked object to the oldest generation, without a collection.

    Resumed with the compile's survivors in the youngest generation, the collector's next
    young collection scanned them all (the jitted function's graphs and schedule: ~120K
    objects, ~50 ms, for a 400-step RNN) only to find them alive. They are long-lived, so
    they go where a collection would have put them; full collections see them as usual, and
    any garbage cycle the compile left is freed by the next one. (`freeze` parks objects in
    the permanent generation, `unfreeze` puts them back into the oldest.)"""
    gc.freeze()
    gc.unfreeze()
