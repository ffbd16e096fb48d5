"""BLAS for the CPU backend: sgemm/dgemm pointers from scipy-openblas32, when installed.

scipy-openblas32 is an optional dependency (`pip install tracejit[blas]`). Its library must
be loaded through `scipy_openblas32.get_openblas_config()` before its symbols resolve. Without
it, generated code multiplies with its own loops (correct, slower).

The library is set to one thread: generated code splits a big matmul across its own OpenMP
threads (one BLAS call per slab of the output), so kernels and matmuls share one thread pool.
Two pools on the same cores (libgomp's workers spinning after a parallel loop while OpenBLAS's
threads start a gemm) made a 2-thread MLP step ~5x slower than the 1-thread one. This setting
affects only scipy-openblas32's copy of OpenBLAS, not NumPy's.

>>> s, d = gemm_pointers()
>>> isinstance(s, int) and isinstance(d, int)
True
"""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def gemm_pointers() -> tuple[int, int]:
    """Addresses of `cblas_sgemm` and `cblas_dgemm`, or (0, 0) when no BLAS is available."""
    try:
        import scipy_openblas32
    except ImportError:
        return 0, 0
    try:
        scipy_openblas32.get_openblas_config()  # loads the shared library (RTLD_GLOBAL)
        dll = scipy_openblas32.dll
        sgemm = ctypes.cast(dll.scipy_cblas_sgemm, ctypes.c_void_p).value or 0
        dgemm = ctypes.cast(dll.scipy_cblas_dgemm, ctypes.c_void_p).value or 0
    except (AttributeError, OSError):
        return 0, 0
    set_threads = getattr(dll, "scipy_openblas_set_num_threads", None)
    if set_threads is not None:
        set_threads.argtypes = [ctypes.c_int]
        set_threads.restype = None
        set_threads(1)
    return int(sgemm), int(dgemm)


__all__ = ["gemm_pointers"]
