"""cuSOLVER's `?potrf` and `?gesvdj` on the emulator's memory: column-major LAPACK calls by
address.

As cuSOLVER's: `uplo` 0 (lower) or 1 (upper) names the triangle of the column-major `n x n`
matrix at address `a` (leading dimension `lda`) that is read and overwritten with the factor;
the other triangle is left as it was. A matrix that is not positive definite writes a
positive `info` (the order of the failing minor) and leaves the matrix partly overwritten
(here: the input with its diagonal's first entry set to NaN, garbage the caller must not
read). No host synchronization: the status goes to device memory at `info`.

`?gesvdj` (jobz 1, vectors) factors the column-major `m x n` matrix at `a` as U S V^H with
NumPy's SVD: S (k = min(m, n), largest first) at `s`, the column-major U (m x m, or m x k
with `econ` 1) at `u` and V itself, not V^H (n x n, or n x k) at `v`; `a` is destroyed
(NaN here, as cuSOLVER leaves garbage), `info` 0. Its parameters are a gesvdjInfo token that
`createGesvdjInfo` makes and `destroyGesvdjInfo` ends; a call on one that is not alive, a
workspace under `?gesvdj_bufferSize`'s, or a leading dimension under the rows raises.
"""

from __future__ import annotations

import ctypes
import itertools

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


GESVDJ_PARAMS: dict[int, dict[str, float]] = {}  # alive gesvdjInfo tokens -> settings (recorded)
_tokens = itertools.count(1)


def createGesvdjInfo() -> int:
    token = next(_tokens)
    GESVDJ_PARAMS[token] = {"tolerance": 0.0, "max_sweeps": 100, "sort": 1}
    return token


def destroyGesvdjInfo(params: int) -> None:
    del GESVDJ_PARAMS[params]


def xgesvdjSetTolerance(params: int, tolerance: float) -> None:
    GESVDJ_PARAMS[params]["tolerance"] = tolerance


def xgesvdjSetMaxSweeps(params: int, max_sweeps: int) -> None:
    GESVDJ_PARAMS[params]["max_sweeps"] = max_sweeps


def xgesvdjSetSortEig(params: int, sort: int) -> None:
    GESVDJ_PARAMS[params]["sort"] = sort


def _gesvdj_buffer_size(handle, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, params) -> int:
    if params not in GESVDJ_PARAMS or lda < max(m, 1) or ldu < max(m, 1) or ldv < max(n, 1):
        raise ValueError("gesvdj_bufferSize: bad parameters")
    return max(m, n, 1)


def _gesvdj(dtype):
    def gesvdj(handle, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, work, lwork, info, params):
        if jobz != 1 or lwork < _gesvdj_buffer_size(handle, jobz, econ, m, n, a, lda, s, u,
                                                     ldu, v, ldv, params):  # fmt: skip
            raise ValueError("gesvdj: bad parameters")
        k = min(m, n)
        cols_u, cols_v = (k, k) if econ else (m, n)
        mat = _at(a, lda * n, dtype).reshape(n, lda).T[:m]  # column-major: mat[i, j]
        uu, ss, vh = np.linalg.svd(mat, full_matrices=not econ)
        _at(u, ldu * cols_u, dtype).reshape(cols_u, ldu).T[:m] = uu
        _at(v, ldv * cols_v, dtype).reshape(cols_v, ldv).T[:n] = vh.conj().T
        _at(s, k, np.dtype(dtype).char.lower())[:] = ss
        mat[...] = np.nan
        _at(info, 1, np.int32)[0] = 0

    return gesvdj


for _t, _dt in _DTYPES.items():
    globals()[f"{_t}potrf"] = _potrf(_dt)
    globals()[f"{_t}potrf_bufferSize"] = _buffer_size
    globals()[f"{_t}gesvdj"] = _gesvdj(_dt)
    globals()[f"{_t}gesvdj_bufferSize"] = _gesvdj_buffer_size
