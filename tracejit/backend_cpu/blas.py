"""BLAS for the CPU backend: sgemm/dgemm pointers from scipy-openblas32, when installed.

scipy-openblas32 is a dependency of tracejit (installed by default). Its shared library
is opened directly (found next to the package with `importlib.util.find_spec`, loaded
RTLD_GLOBAL as `scipy_openblas32.get_openblas_config()` does): importing the package itself
costs ~20 ms (it reads its version through importlib.metadata) on a function's first call.
Without it, generated code multiplies with its own loops (correct, slower).

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
import importlib.util
import os


def _open_directly() -> ctypes.CDLL | None:
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib_dir = os.path.join(next(iter(spec.submodule_search_locations)), "lib")
    names = sorted(n for n in os.listdir(lib_dir) if n.startswith("libscipy"))
    names = [n for n in names if ".so" in n or n.endswith(".dylib")]
    if not names:
        return None
    return ctypes.CDLL(os.path.join(lib_dir, names[0]), ctypes.RTLD_GLOBAL)


def _open_through_package() -> ctypes.CDLL | None:
    try:
        import scipy_openblas32
    except ImportError:
        return None
    scipy_openblas32.get_openblas_config()  # loads the shared library (RTLD_GLOBAL)
    return scipy_openblas32.dll


@functools.cache
def library() -> ctypes.CDLL | None:
    """scipy-openblas32's shared library (set to one thread), or None when not installed."""
    dll = None
    for opener in (_open_directly, _open_through_package):
        try:
            dll = opener()
        except (OSError, AttributeError, IndexError):
            dll = None
        if dll is not None:
            break
    if dll is None:
        return None
    set_threads = getattr(dll, "scipy_openblas_set_num_threads", None)
    if set_threads is not None:
        set_threads.argtypes = [ctypes.c_int]
        set_threads.restype = None
        set_threads(1)
    return dll


@functools.cache
def gemm_pointers() -> tuple[int, int]:
    """Addresses of `cblas_sgemm` and `cblas_dgemm`, or (0, 0) when no BLAS is available."""
    dll = library()
    if dll is None:
        return 0, 0
    try:
        sgemm = ctypes.cast(dll.scipy_cblas_sgemm, ctypes.c_void_p).value or 0
        dgemm = ctypes.cast(dll.scipy_cblas_dgemm, ctypes.c_void_p).value or 0
    except AttributeError:
        return 0, 0
    return int(sgemm), int(dgemm)


__all__ = ["gemm_pointers", "library"]
