"""The CPU program's big fft steps on the program's threads.

A compiled CPU program calls Python back for `fft` (ir/fft_prims.py), which writes into the
step's output buffer (ir/fft_host.py: ducc0, else `scipy.fft`, else `np.fft`). ducc0 and
`scipy.fft` split a transform across threads that sleep rather than spin between calls, so
a step of at least `MIN_SIZE` elements runs on the program's threads unless the machine is
crowded (lapack_threads.unless_crowded: as many other running tasks as cores, the check the
program's own pool makes before it splits a loop), and one of `ALWAYS_THREADED` on them
regardless. An FFT's threads meet once per transformed axis, not once per panel as a
factorization's, so a busy core beside costs them little and a free one pays ~1.7x
(benchmarks/RESULTS.md); smaller steps, or `np.fft` (which has no threads), run the plain
one-thread step.

>>> import numpy as np
>>> into("fft", [np.zeros(8, np.complex64)]) is None  # small: the plain step
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu import lapack_threads

MIN_SIZE = 1 << 18  # elements: a 512 x 512 transform (below it one thread's call is ~1 ms)
# From here each thread's share takes several time slices, so a crowded machine delays it
# little and two runnable threads get twice the CPU share: at load ~10 a 2048 x 2048 fft2
# took 58 ms on two threads against 72 on one, 4096 x 4096 222 against 257 (1024 x 1024:
# 34 against 7.6, benchmarks/RESULTS.md).
ALWAYS_THREADED = 1 << 22


def into(prim: str, operands: list[np.ndarray]):
    """`fn(x, outs, **attrs)` writing the fft into `outs[0]` on the program's threads, or
    None (the plain step)."""
    if prim != "fft" or not operands or operands[0].size < MIN_SIZE:
        return None
    # deferred: a cache hit without an fft never needs them
    from tracejit.ir import fft_host, fft_prims

    if fft_host.library() is np.fft:
        return None

    def run(x: np.ndarray, outs: list[np.ndarray], *, kind: str, lengths: tuple, axes=None,
            norm="backward"):  # fmt: skip
        if x.size >= ALWAYS_THREADED:
            workers = lapack_threads.program_threads()
        else:
            workers = lapack_threads.unless_crowded()
        fft_prims.fft_impl(x, kind, lengths, axes=axes, norm=norm, out=outs[0], workers=workers)

    return run


__all__ = ["ALWAYS_THREADED", "MIN_SIZE", "into"]
