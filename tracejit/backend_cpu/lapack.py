"""LAPACK for the CPU program's linear-algebra steps: scipy-openblas32 on the step's buffers.

The compiled CPU program calls Python back for `solve`, `inv`, `cholesky`, `det` and
`slogdet` (they have no kernel of tracejit's own). With scipy-openblas32 installed (the gemm
library, backend_cpu/blas.py), those callbacks run its LAPACK routines straight on the
program's buffers through ctypes, with no NumPy call between: `?potrf`, `?getrf`, `?getrs`
(LAPACKE's `_work` entry points, column-major but for cholesky's `upper`: no copies and no
NaN scan inside LAPACKE).
Without it, or for a primitive or dtype not listed here, or where the build lacks one of
the routines that step calls (`available`, checked per primitive), the callback runs NumPy's
`np.linalg` as before (ir/linalg_prims.py). backend_cpu/lapack_decomp.py does the same for
eigh, eigvalsh, svd, svdvals and qr (`register`).

Row-major buffers read column-major are the transposes, and the routines are applied to those:
- cholesky: the lower triangle of A is the upper one of A^T, and `potrf('U')` of A^T gives
  U with A^T = U^H U, i.e. A = L L^H with L = U^T, whose row-major storage is U's
  column-major one; the other triangle is zeroed, as in NumPy's factor. NumPy's own L, its
  `potrf('L')` of A, is another algorithm: equal to rounding. `upper=True` is NumPy's own
  factor, `potrf('U')` of A's upper triangle, through LAPACKE's row-major entry (which
  copies the triangle to a column-major A and back): NumPy's U of a float64/complex128
  matrix bit for bit, zeros of the other triangle included, where NumPy's OpenBLAS runs on
  one thread (its threaded ?potrf rounds otherwise; measured with scipy-openblas32 0.3.34
  against NumPy 2.4.6's OpenBLAS 0.3.31, tests/backend/test_cholesky_upper.py). The copies
  cost (one thread, 2-core AMD EPYC, loaded: 23 ms for U against 16 for L at n = 1024 in
  float64, 13.7 against 11.9 at 512 in complex128), so L keeps the copy-free problem.
- solve: `getrf` factors A^T, `getrs('T')` then solves A X = B (B and X transposed around it
  when B has several columns).
- inv: `getrs('N')` with the identity solves A^T X = I, and X = inv(A^T) is, row-major, inv(A).
- det / slogdet: `getrf`'s diagonal and pivots, as NumPy's `det` (sign * exp(log|det|)).
Failures are as in NumPy's path (JAX's way): a matrix `getrf` finds singular or `potrf` not
positive definite gives NaN for that matrix of the stack; `det` of a singular matrix is 0 and
`slogdet` (0, -inf). Values but cholesky's `upper` equal NumPy's to rounding, not bit for
bit (another LAPACK build, and the transposed problem).

Each routine runs on as many OpenBLAS threads as `lapack_threads.threads` allows (one unless
the matrix is big and the cores are free).

>>> import numpy as np
>>> a, out = np.array([[4.0, 2.0], [2.0, 5.0]]), np.empty((2, 2))
>>> into("cholesky", [a])(a, [out]) or out.tolist()  # 2 x 2: NumPy's gufunc (lapack_small)
[[2.0, 0.0], [1.0, 2.0]]
>>> not available("cholesky", a.dtype) or (_INTO["cholesky"](a, [out]) or out.tolist())
[[2.0, 0.0], [1.0, 2.0]]
>>> not available("cholesky", a.dtype) or (_INTO["cholesky"](a, [out], upper=True) or out.tolist())
[[2.0, 1.0], [0.0, 2.0]]
"""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np

from tracejit.backend_cpu import blas, lapack_small, lapack_threads
from tracejit.errors import InternalError

MIN_N = 128  # smaller matrices take NumPy's path (see `into`)
_ROW_MAJOR, _COL_MAJOR = 101, 102  # LAPACK_ROW_MAJOR, LAPACK_COL_MAJOR
_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
_P, _I, _C = ctypes.c_void_p, ctypes.c_int, ctypes.c_char
SIGNATURES = {  # LAPACKE's routines (lapack_int is 32-bit in scipy-openblas32): attribute ->
    # (name without the s/d/c/z prefix, or (real name, complex name); argtypes)
    "potrf": ("potrf_work", [_I, _C, _I, _P, _I]),  # layout, uplo, n, a, lda
    "getrf": ("getrf_work", [_I, _I, _I, _P, _I, _P]),  # layout, m, n, a, lda, ipiv
    # layout, trans, n, nrhs, a, lda, ipiv, b, ldb
    "getrs": ("getrs_work", [_I, _C, _I, _I, _P, _I, _P, _P, _I]),
}  # backend_cpu/lapack_decomp.py adds its own


@functools.cache
def routine(dtype: np.dtype, name: str):
    """`dtype`'s LAPACKE routine `name` (a key of `SIGNATURES`) from scipy-openblas32, or
    None (no scipy-openblas32, not a LAPACK dtype, or a build without that routine)."""
    prefix, dll = _PREFIX.get(np.dtype(dtype).name), blas.library()
    if prefix is None or dll is None:
        return None
    lapacke, argtypes = SIGNATURES[name]
    if not isinstance(lapacke, str):
        lapacke = lapacke[prefix in "cz"]
    fn = getattr(dll, f"scipy_LAPACKE_{prefix}{lapacke}", None)
    if fn is not None:
        fn.argtypes, fn.restype = argtypes, ctypes.c_int
    return fn


class _Routines:
    """`dtype`'s LAPACKE routines by attribute (see `routines`)."""

    def __init__(self, dtype: np.dtype):
        self.dtype = dtype

    def __getattr__(self, name: str):
        fn = routine(self.dtype, name)
        if fn is None:
            raise InternalError(f"LAPACK routine {name} for {self.dtype} is not available")
        return fn


def routines(dtype: np.dtype) -> _Routines:
    """`dtype`'s routines as attributes, `routines(dtype).getrf(...)` (a step calls only
    those that `into` found: `available`)."""
    return _Routines(np.dtype(dtype))


def _stack(x: np.ndarray) -> np.ndarray:
    """`x` as a contiguous (batch, rows, cols) stack (a view of a contiguous buffer)."""
    return np.ascontiguousarray(x).reshape(math.prod(x.shape[:-2]), *x.shape[-2:])


def _addresses(stack: np.ndarray):
    """The address of each matrix of a contiguous stack."""
    base, step = stack.ctypes.data, stack.strides[0] if stack.shape[0] else 0
    return (base + i * step for i in range(stack.shape[0]))


def _cholesky_into(a: np.ndarray, outs: list, *, upper: bool = False) -> None:
    (out,) = outs
    np.copyto(out, a)
    factors, n = _stack(out), a.shape[-1]
    r, lda = routines(a.dtype), max(n, 1)  # LAPACK wants lda >= 1 even for n = 0
    layout = _ROW_MAJOR if upper else _COL_MAJOR  # potrf('U') of A, or of A^T: module doc
    with lapack_threads.threads(n):
        failed = [r.potrf(layout, b"U", n, p, lda) != 0 for p in _addresses(factors)]
    for i in range(n):  # NumPy's factor has zeros in the other triangle (row i's part)
        factors[:, i, slice(0, i) if upper else slice(i + 1, n)] = 0
    factors[np.array(failed, bool)] = np.nan


def _factor(r: _Routines, matrix: np.ndarray, lu: np.ndarray, pivots: np.ndarray) -> bool:
    """LU-factor `matrix` (read column-major: its transpose) into `lu`; False if singular."""
    np.copyto(lu, matrix)
    n = matrix.shape[-1]
    return r.getrf(_COL_MAJOR, n, n, lu.ctypes.data, max(n, 1), pivots.ctypes.data) == 0


def _solve_into(a: np.ndarray, b: np.ndarray, outs: list) -> None:
    (out,) = outs
    r, n, k = routines(a.dtype), a.shape[-1], b.shape[-1]
    lda = max(n, 1)
    mats, rhs, xs = _stack(a), _stack(b), _stack(out)
    lu, pivots = np.empty((n, n), a.dtype), np.empty(n, np.intc)
    column = np.empty((k, n), a.dtype)  # one right-hand side block, column-major
    with lapack_threads.threads(n):
        for matrix, bi, xi in zip(mats, rhs, xs):
            if not _factor(r, matrix, lu, pivots):
                xi[...] = np.nan
                continue
            np.copyto(column, bi.T)
            r.getrs(_COL_MAJOR, b"T", n, k, lu.ctypes.data, lda, pivots.ctypes.data,
                    column.ctypes.data, lda)  # fmt: skip
            np.copyto(xi, column.T)


def _inv_into(a: np.ndarray, outs: list) -> None:
    (out,) = outs
    r, n = routines(a.dtype), a.shape[-1]
    lda = max(n, 1)
    lu, pivots = np.empty((n, n), a.dtype), np.empty(n, np.intc)
    with lapack_threads.threads(n):
        for matrix, yi in zip(_stack(a), _stack(out)):
            if not _factor(r, matrix, lu, pivots):
                yi[...] = np.nan
                continue
            yi[...] = np.eye(n, dtype=a.dtype)
            r.getrs(_COL_MAJOR, b"N", n, n, lu.ctypes.data, lda, pivots.ctypes.data,
                    yi.ctypes.data, lda)  # fmt: skip


def _log_determinants(a: np.ndarray):
    """(sign, log|det|) of each matrix of `a`'s stack, as NumPy's `slogdet` computes them."""
    r, n = routines(a.dtype), a.shape[-1]
    mats = _stack(a)
    diagonals = np.ones((mats.shape[0], n), a.dtype)
    swaps = np.zeros(mats.shape[0], np.intp)
    regular = np.ones(mats.shape[0], bool)
    lu, pivots = np.empty((n, n), a.dtype), np.empty(n, np.intc)
    with lapack_threads.threads(n):
        for i, matrix in enumerate(mats):
            regular[i] = _factor(r, matrix, lu, pivots)
            diagonals[i] = lu.diagonal()
            swaps[i] = np.count_nonzero(pivots != np.arange(1, n + 1))
    magnitudes = np.abs(diagonals)
    with np.errstate(all="ignore"):
        units = diagonals / magnitudes if np.iscomplexobj(a) else np.where(diagonals < 0, -1, 1)
        sign = np.where(swaps % 2, -1, 1).astype(a.dtype) * np.prod(units, axis=-1)
        logabs = np.sum(np.log(magnitudes), axis=-1)
    sign[~regular], logabs[~regular] = 0, -np.inf  # NumPy's (0, -inf) for a zero pivot
    lead = a.shape[:-2]
    return sign.reshape(lead), logabs.reshape(lead)


def _slogdet_into(a: np.ndarray, outs: list) -> None:
    sign, logabs = _log_determinants(a)
    np.copyto(outs[0], sign)
    np.copyto(outs[1], logabs)


def _det_into(a: np.ndarray, outs: list) -> None:
    sign, logabs = _log_determinants(a)
    with np.errstate(all="ignore"):
        np.copyto(outs[0], sign * np.exp(logabs))


_INTO = {  # primitive -> its step's function
    "cholesky": _cholesky_into,
    "solve": _solve_into,
    "inv": _inv_into,
    "det": _det_into,
    "slogdet": _slogdet_into,
}
_NEEDS = {  # primitive -> the routines (keys of SIGNATURES) its step calls
    "cholesky": ("potrf",),
    "solve": ("getrf", "getrs"),
    "inv": ("getrf", "getrs"),
    "det": ("getrf",),
    "slogdet": ("getrf",),
}


def register(prim: str, fn, needs: tuple[str, ...]) -> None:
    """Run primitive `prim`'s steps through `fn(*operands, outs, **attrs)`, which calls the
    routines `needs` (keys of `SIGNATURES`; see `into`)."""
    _INTO[prim], _NEEDS[prim] = fn, needs


def available(prim: str, dtype: np.dtype) -> bool:
    """Whether scipy-openblas32 has every routine `prim`'s step calls, for `dtype`."""
    return prim in _INTO and all(routine(np.dtype(dtype), n) is not None for n in _NEEDS[prim])


def into(prim: str, operands: list[np.ndarray]):
    """`fn(*operands, outs, **attrs)` writing primitive `prim`'s results into `outs`, or None
    (NumPy's path runs): through LAPACK for the primitives here, from `MIN_N` rows and
    columns on, where the library has that step's routines (`available`); below, NumPy's
    batched gufuncs (backend_cpu/lapack_small.py): this path loops over a stack in Python, a
    few microseconds a matrix, where NumPy's loop is in C (0.17 ms for 1000 4 x 4 solves
    against 22 ms); from n = 128 on, LAPACK's work outweighs it. eigh, eigvalsh, svd,
    svdvals and qr are registered by backend_cpu/lapack_decomp.py."""
    if not operands or operands[0].ndim < 2:
        return None
    if min(operands[0].shape[-2:]) < MIN_N:
        return lapack_small.into(prim, operands)
    return _INTO[prim] if prim in _INTO and available(prim, operands[0].dtype) else None


__all__ = ["MIN_N", "SIGNATURES", "available", "into", "register", "routine", "routines"]
