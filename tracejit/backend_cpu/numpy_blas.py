"""NumPy's own OpenBLAS, held to one thread while a compiled CPU program calls NumPy back.

The linear-algebra primitives run NumPy's `np.linalg` (LAPACK in the OpenBLAS that NumPy's
wheels bundle, `scipy_openblas64_`), by default on every core (in a compiled program,
solve/inv/cholesky/det/slogdet/eigh/svd/qr of matrices from 128 x 128 on run
scipy-openblas32's LAPACK instead: backend_cpu/lapack.py). Inside a compiled program that
is a second thread pool next to the program's own OpenMP workers, the case that made
tracejit hold its gemm library to one thread (backend_cpu/blas.py). Measured on the 2-core
AMD EPYC shared by 8 processes (load average ~11): `np.linalg.solve` of a 256 x 256 float32
system took 0.9 ms (median) on one OpenBLAS thread and 207-256 ms on two, `cholesky` of a
1024 x 1024 one 90 ms against 830 ms, of a 2048 x 2048 one 0.44 s against 1.9 s
(benchmarks/RESULTS.md). On an idle machine two threads would be up to ~2x faster for large
matrices; one thread is the choice that never collapses.

`one_thread()` uses OpenBLAS's `openblas_set_num_threads_local` (0.3.27+): the setting is the
calling thread's own, so NumPy used elsewhere (another thread, or outside the program) keeps
its threads. Where NumPy bundles no such OpenBLAS (MKL, Accelerate builds) it does nothing.

>>> with one_thread():
...     pass
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os

import numpy as np


@functools.cache
def _set_local_threads():
    """OpenBLAS's `openblas_set_num_threads_local` in NumPy's bundled library, or None."""
    site = os.path.dirname(os.path.dirname(np.__file__))
    patterns = [os.path.join(site, "numpy.libs", "libscipy_openblas*"),
                os.path.join(os.path.dirname(np.__file__), ".dylibs", "libscipy_openblas*")]  # fmt: skip
    for path in sorted(p for pattern in patterns for p in glob.glob(pattern)):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        return fn
    return None


@contextlib.contextmanager
def one_thread():
    """NumPy's OpenBLAS on one thread (for the calling thread) inside the block."""
    set_local = _set_local_threads()
    if set_local is None:
        yield
        return
    previous = set_local(1)
    try:
        yield
    finally:
        set_local(previous)


__all__ = ["one_thread"]
