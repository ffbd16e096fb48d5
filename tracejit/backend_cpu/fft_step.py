"""The CPU program's big fft steps on the free cores: scipy.fft's `workers`.

A compiled CPU program calls Python back for `fft` (ir/fft_prims.py: pocketfft through
`scipy.fft` when SciPy is installed, else `np.fft`). JAX's CPU FFT runs a big transform on
two threads; a 1024 x 1024 complex64 fft2 took a median 7.3 ms here on one thread against
JAX's 3.4 ms (benchmarks/RESULTS.md). `scipy.fft` splits a transform across `workers`
threads, which sleep rather than spin between calls, so a step of at least `MIN_SIZE`
elements gets as many as the LAPACK steps would (lapack_threads.free_threads: the program's
threads less the machine's other running tasks), and one next to a busy process. Without
SciPy (`np.fft` has no `workers`) the step runs as before.

>>> import numpy as np
>>> into("fft", [np.zeros(8, np.complex64)]) is None  # small: the plain step
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu import lapack_threads

MIN_SIZE = 1 << 18  # elements: a 512 x 512 transform (below it one thread's call is ~1 ms)


def into(prim: str, operands: list[np.ndarray]):
    """`fn(x, outs, **attrs)` writing the fft into `outs[0]` on the free cores, or None."""
    if prim != "fft" or not operands or operands[0].size < MIN_SIZE:
        return None
    from tracejit.ir import fft_prims  # deferred: a cache hit without an fft never needs it

    if fft_prims.host_fft() is np.fft:
        return None

    def run(x: np.ndarray, outs: list[np.ndarray], *, kind: str, lengths: tuple) -> None:
        workers = lapack_threads.free_threads()
        np.copyto(outs[0], fft_prims.fft_impl(x, kind, lengths, workers=workers))

    return run


__all__ = ["MIN_SIZE", "into"]
