"""cuSOLVER's `?potrf` on the emulator's memory: the column-major LAPACK call by address.

As cuSOLVER's: `uplo` 0 (lower) or 1 (upper) names the triangle of the column-major `n x n`
matrix at address `a` (leading dimension `lda`) that is read and overwritten with the factor;
the other triangle is left as it was. A matrix that is not positive definite writes a
positive `info` (the order of the failing minor) and leaves the matrix partly overwritten
(here: the input with its diagonal's first entry set to NaN, garbage the caller must not
read). No host synchronization: the status goes to device memory at `info`.
"""

from __future__ import annotations

import ctypes

import numpy as np

_DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def _at(ptr: int, count: int, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype)


def _potrf(dtype):
    def potrf(handle, uplo, n, a, lda, work, lwork, info) -> None:
        if lwork < 1:
            raise ValueError(f"potrf: workspace of {lwork} elements")
        m = _at(a, lda * n, dtype).reshape(n, lda).T[:n]  # column-major: m[i, j]
        lower = np.tril(m) if uplo == 0 else np.triu(m).conj().T
        full = lower + np.tril(lower, -1).conj().T
        status = _at(info, 1, np.int32)
        try:
            factor = np.linalg.cholesky(full)
        except np.linalg.LinAlgError:
            m[0, 0] = np.nan
            status[0] = 1
            return
        tri = np.tril_indices(n) if uplo == 0 else np.triu_indices(n)
        m[tri] = (factor if uplo == 0 else factor.conj().T)[tri]
        status[0] = 0

    return potrf


def _buffer_size(handle, uplo, n, a, lda) -> int:
    return max(n, 1)


for _t, _dt in _DTYPES.items():
    globals()[f"{_t}potrf"] = _potrf(_dt)
    globals()[f"{_t}potrf_bufferSize"] = _buffer_size
