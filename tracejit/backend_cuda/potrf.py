"""Cholesky of one matrix on the GPU: cuSOLVER's `?potrf` with fill mode LOWER.

CuPy's `cupy.linalg.cholesky` runs `?potrf` with fill mode UPPER on the row-major matrix. On
an H100 that took 4.47 ms for 4096x4096 float32, where fill mode LOWER on the transposed
copy took 1.83 ms and torch 2.05 (benchmarks/gpu_probe.py, eleventh session). cuSOLVER reads
a row-major buffer column-major, so the buffer of A^T reads as A, and the factor potrf
leaves (column-major) reads back row-major as its transpose:

    L = tril(potrf_L(row-major A^T)^T)    reads A's lower triangle, as np.linalg.cholesky
    U = triu(potrf_L(row-major A))        reads A's upper triangle (NumPy's upper=True)

For a complex Hermitian A the second is the lower factor of A^T = conj(A), transposed: U =
L^H. A matrix potrf rejects (info > 0: not positive definite, or NaN on its diagonal) gives
NaN, as JAX; that is decided on the device, so nothing waits for the status (CuPy's own
call reads it on the host to raise). Stacks of matrices keep CuPy's batched call.
"""

from __future__ import annotations

import numpy as np

from tracejit.ir.array_library import ARRAY_IMPLS

TYPE_LETTER = {"f": "s", "d": "d", "F": "c", "D": "z"}  # dtype.char -> cuSOLVER's type letter
_LOWER = 0  # CUBLAS_FILL_MODE_LOWER


def cholesky(a, xp, *, upper: bool = False):
    """The Cholesky factor of the square CuPy matrix `a` (float32/64, complex64/128)."""
    from cupy_backends.cuda.libs import cusolver

    n = a.shape[-1]
    m = a.copy() if upper else a.T.copy()  # C order: potrf overwrites it
    if n == 0:
        return m
    potrf = TYPE_LETTER[a.dtype.char] + "potrf"
    handle = xp.cuda.device.get_cusolver_handle()
    lwork = getattr(cusolver, potrf + "_bufferSize")(handle, _LOWER, n, m.data.ptr, n)
    work = xp.empty(max(int(lwork), 1), a.dtype)
    info = xp.empty(1, np.int32)
    getattr(cusolver, potrf)(handle, _LOWER, n, m.data.ptr, n, work.data.ptr, lwork, info.data.ptr)
    factor = xp.triu(m) if upper else xp.tril(m.T)
    return xp.where(info != 0, xp.full((), np.nan, a.dtype), factor)


def cholesky_impl(a, *, upper: bool = False, xp):
    """The `cholesky` primitive on CuPy: one matrix here, a stack by CuPy's batched call."""
    if a.ndim == 2:
        return cholesky(a, xp, upper=upper)
    return ARRAY_IMPLS.get("cholesky")(a, upper=upper, xp=xp)


__all__ = ["TYPE_LETTER", "cholesky", "cholesky_impl"]
