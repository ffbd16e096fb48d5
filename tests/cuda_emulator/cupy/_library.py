"""cuSOLVER, cuFFT and CuPy's sort, as the emulator's stand-ins: NumPy on the host copies.

CuPy's sort of a one-axis float32/float64 array is thrust's radix sort over the bits
(cupy/cuda/cupy_thrust.cu), which puts a NaN with its sign bit set first and -0.0 before 0.0;
the stand-in sorts those in that order too (an H100 showed it). A few elementwise functions
(`isnan`, `isfinite`, `abs`, `where`, `tril`, `triu`) run NumPy's on the host memory.
cuSOLVER's `?potrf` itself is `cupy_backends/cuda/libs/cusolver.py`.

Each function takes emulated arrays, runs NumPy's function of the same name on their host
memory and returns a new emulated array, as CuPy's return new device arrays. Like CuPy
under `cupyx.errstate(linalg="raise")`, a matrix LAPACK rejects raises LinAlgError.
"""

from __future__ import annotations

import types

import numpy as np

from cupy._array import _from_host, _host, ndarray
from cupy._radix import radix_order


def _wrap(fn):
    def run(*args, **kwargs):
        from cupy.cuda._stream import refuse_sync

        refuse_sync(f"{fn.__name__} (a library call that reads its status)")
        result = fn(*(_host(a) for a in args), **kwargs)
        if isinstance(result, tuple):
            return tuple(_from_host(np.asarray(r)) for r in result)
        return _from_host(np.asarray(result))

    run.__name__ = fn.__name__
    return run


linalg = types.SimpleNamespace(
    **{n: _wrap(getattr(np.linalg, n))
       for n in ("solve", "inv", "cholesky", "det", "slogdet", "eigh", "eigvalsh", "svd",
                 "qr")}
)  # fmt: skip
fft = types.SimpleNamespace(
    **{
        n: _wrap(getattr(np.fft, n))
        for n in ("fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn")
    }
)


def _radix_sorted(x: np.ndarray) -> bool:
    return x.ndim == 1 and x.dtype in (np.float32, np.float64)


def _argsort(x, axis=-1):
    return radix_order(x) if _radix_sorted(x) else np.argsort(x, axis=axis, kind="stable")


def _sort(x, axis=-1):
    return x[radix_order(x)] if _radix_sorted(x) else np.sort(x, axis=axis)


def argsort(a: ndarray, axis: int = -1, kind=None) -> ndarray:
    return _wrap(_argsort)(a, axis=axis)  # CuPy's sort is stable


def sort(a: ndarray, axis: int = -1) -> ndarray:
    return _wrap(_sort)(a, axis=axis)


def _elementwise(fn):
    def run(*args):
        return _from_host(np.asarray(fn(*(_host(a) for a in args))))

    run.__name__ = fn.__name__
    return run


isnan, isfinite, abs, where, tril, triu = map(
    _elementwise, (np.isnan, np.isfinite, np.abs, np.where, np.tril, np.triu)
)


def searchsorted(a: ndarray, v: ndarray, side: str = "left") -> ndarray:
    return _from_host(np.asarray(np.searchsorted(_host(a), _host(v), side=side)))


def full(shape, fill_value, dtype=None) -> ndarray:
    return _from_host(np.full(shape, fill_value, dtype))
