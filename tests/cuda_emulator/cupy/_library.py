"""cuSOLVER, cuFFT and CuPy's sort, as the emulator's stand-ins: NumPy on the host copies.

Each function takes emulated arrays, runs NumPy's function of the same name on their host
memory and returns a new emulated array, as CuPy's return new device arrays. Like CuPy
under `cupyx.errstate(linalg="raise")`, a matrix LAPACK rejects raises LinAlgError.
"""

from __future__ import annotations

import types

import numpy as np

from cupy._array import _from_host, _host, ndarray


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


def argsort(a: ndarray, axis: int = -1, kind=None) -> ndarray:
    return _wrap(np.argsort)(a, axis=axis, kind="stable")  # CuPy's sort is stable


def sort(a: ndarray, axis: int = -1) -> ndarray:
    return _wrap(np.sort)(a, axis=axis)


def full(shape, fill_value, dtype=None) -> ndarray:
    return _from_host(np.full(shape, fill_value, dtype))
