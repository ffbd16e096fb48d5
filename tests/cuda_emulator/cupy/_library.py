"""cuSOLVER, cuFFT and CuPy's sort, as the emulator's stand-ins: NumPy on the host copies.

CuPy's sort of a one-axis float32/float64 array is thrust's radix sort over the bits
(cupy/cuda/cupy_thrust.cu), which puts a NaN with its sign bit set first and -0.0 before 0.0;
the stand-in sorts those in that order too (an H100 showed it). A few elementwise functions
(`isnan`, `isfinite`, `abs`, `where`, `tril`, `triu`) and `searchsorted` run NumPy's on the
host memory; where CuPy's kernel does float32 arithmetic or comparisons (abs, searchsorted),
subnormal float32 values are flushed to zero as CuPy's `-ftz=true` kernels flush them.
cuSOLVER's `?potrf` itself is `cupy_backends/cuda/libs/cusolver.py`.

Each function takes emulated arrays, runs NumPy's function of the same name on their host
memory and returns a new emulated array, as CuPy's return new device arrays. Like CuPy
under `cupyx.errstate(linalg="raise")`, a matrix LAPACK rejects raises LinAlgError.
"""

from __future__ import annotations

import math
import types

import numpy as np

from cupy._array import _from_host, _host, flush, ndarray
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
                 "qr", "eig", "eigvals")}
)  # fmt: skip


def _cufft(name: str):
    """cupy.fft's `name`: cuFFT's unnormalized transform, then CuPy's `out /= n` (or
    `/ sqrt(n)`), a kernel CuPy compiled, which flushes float32 subnormals (`flush`)."""
    inverse, real_in = name.startswith("i"), name.startswith("rfft")

    def run(x, *args, norm=None, **kwargs):
        if name.endswith("n") and x.size == 0:  # as CuPy 14's n-dimensional path (an H100)
            raise ValueError("Invalid number of FFT data points (0) specified.")
        res = getattr(np.fft, name)(x, *args, norm="forward" if inverse else "backward", **kwargs)
        axes = kwargs.get("axes") or (
            (kwargs.get("axis", -1),) if name.endswith("fft") else range(res.ndim)
        )
        n = math.prod((x if real_in else res).shape[a] for a in axes)
        norm = norm or "backward"
        if norm == "ortho":
            return flush(flush(res) / np.sqrt(n).astype(res.real.dtype))
        if (norm == "backward") == inverse:
            return flush(flush(res) / res.real.dtype.type(n))
        return res

    run.__name__ = name
    return run


fft = types.SimpleNamespace(
    **{
        n: _wrap(_cufft(n))
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


def _elementwise(fn, ftz=False):
    def run(*args):
        args = (_host(a) for a in args)
        if ftz:  # float32 arithmetic in a kernel CuPy compiled (`flush`)
            return _from_host(flush(np.asarray(fn(*map(flush, args)))))
        return _from_host(np.asarray(fn(*args)))  # tests or moves: subnormals unchanged

    run.__name__ = fn.__name__
    return run


isnan, isfinite, where, tril, triu = map(
    _elementwise, (np.isnan, np.isfinite, np.where, np.tril, np.triu)
)
abs = _elementwise(np.abs, ftz=True)


def searchsorted(a: ndarray, v: ndarray, side: str = "left") -> ndarray:
    # CuPy's binary search compares float32 in a kernel of its own: flushed (`flush`)
    return _from_host(np.asarray(np.searchsorted(flush(_host(a)), flush(_host(v)), side=side)))


def full(shape, fill_value, dtype=None) -> ndarray:
    return _from_host(np.full(shape, fill_value, dtype))
