"""The thin or full SVD of one matrix on the GPU: cuSOLVER's Jacobi `?gesvdj`.

CuPy's `cupy.linalg.svd` runs the QR-based `?gesvd`. On an H100 the compiled
`svd(a, full_matrices=False)` of an n x n float32 matrix through it took 160.4 ms at
n=1024 and 369.3 at n=2048, where CuPy alone took 139.6 / 351.9, JAX 46.5 / 344.1 (Jacobi
up to n=1024) and torch.compile 49.2 / 220.5 (its default CUDA driver is `?gesvdj`). Through
`?gesvdj` here: 50.0 / 235.7 ms (JAX 46.5 / 342.9, torch 48.9 / 221.1 in that run; twelfth
session, benchmarks/RESULTS.md).

Layout: cuSOLVER reads the C-ordered (m, n) buffer of A as the column-major (n, m) matrix
B = A^T, so `?gesvdj` runs on a copy of the buffer as it is (it destroys its input; no
transpose), and B = U_B S V_B^H gives A = B^T = conj(V_B) S U_B^T:

    Vh = U_B^T     the (n or k, n) column-major U_B read back row-major: no copy
    U  = conj(V_B) the (m or k, m) column-major V_B read back row-major, transposed

with k = min(m, n) and econ=1 for full_matrices=False (U_B is n x k, V_B is m x k), econ=0
for full_matrices=True (n x n and m x m). Singular values come sorted, largest first, as
NumPy's (sort set explicitly; it is cuSOLVER's default).

Tolerance and sweeps, set explicitly: the tolerance is the machine epsilon of the real type
(float32 1.2e-7, float64 2.2e-16), so the values and vectors are as accurate as NumPy's
LAPACK within the usual float32/float64 tolerances; at most 100 sweeps. Both are cuSOLVER's
defaults, which torch's gesvdj call keeps (the 49.2 ms above). Jacobi converges
quadratically once near diagonal, so the cap bounds only pathological inputs and costs
nothing otherwise; a looser tolerance would trade accuracy for sweeps.

Status, decided on the device (nothing waits for it, as backend_cuda/potrf.py): a matrix
holding inf or NaN gives NaN, as `ir/linalg_svd._svd_impl` (zeros stand in for it, so
cuSOLVER never sees it). `info` = k + 1 says the sweeps ran out before the tolerance was met:
the factors are then Jacobi's approximation after 100 sweeps and are returned (torch reruns
such a matrix through `?gesvd`, which needs the status on the host).
Any other non-zero `info` (a rejected parameter: none is expected) gives NaN.

Stacks of matrices, size-0 matrices (no cuSOLVER call: identities or empties) and dtypes
cuSOLVER has no `?gesvdj` for keep CuPy's call through `_svd_impl`.
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cuda.potrf import TYPE_LETTER
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.linalg_nonfinite import finite_stand_in, nan_where

_VECTORS = 1  # CUSOLVER_EIG_MODE_VECTOR
_MAX_SWEEPS = 100


def svd(a, xp, *, full_matrices: bool):
    """(U, s, Vh) of the CuPy matrix `a` (m, n), m, n > 0, as `np.linalg.svd` orders them."""
    from cupy_backends.cuda.libs import cusolver

    (m, n), k = a.shape, min(a.shape)
    clean, bad = finite_stand_in(a, xp)
    b = clean.copy()  # C order: gesvdj destroys it; read as column-major it is A^T (n x m)
    real = np.dtype(a.dtype.char.lower())
    s = xp.empty(k, real)
    ub = xp.empty((n if full_matrices else k, n), a.dtype)  # column-major U_B, ldu = n
    vb = xp.empty((m if full_matrices else k, m), a.dtype)  # column-major V_B, ldv = m
    gesvdj = TYPE_LETTER[a.dtype.char] + "gesvdj"
    handle = xp.cuda.device.get_cusolver_handle()
    params = cusolver.createGesvdjInfo()
    try:
        cusolver.xgesvdjSetTolerance(params, float(np.finfo(real).eps))
        cusolver.xgesvdjSetMaxSweeps(params, _MAX_SWEEPS)
        cusolver.xgesvdjSetSortEig(params, 1)
        econ = 0 if full_matrices else 1
        args = (handle, _VECTORS, econ, n, m, b.data.ptr, n, s.data.ptr, ub.data.ptr, n,
                vb.data.ptr, m)  # fmt: skip
        lwork = getattr(cusolver, gesvdj + "_bufferSize")(*args, params)
        work = xp.empty(max(int(lwork), 1), a.dtype)
        info = xp.empty(1, np.int32)
        getattr(cusolver, gesvdj)(*args, work.data.ptr, lwork, info.data.ptr, params)
    finally:
        cusolver.destroyGesvdjInfo(params)
    status = info[0]
    rejected = (status != 0) & (status != k + 1)  # k + 1: not converged, still approximated
    bad = rejected if bad is None else bad | rejected
    u = vb.T.conj() if a.dtype.kind == "c" else vb.T
    return tuple(nan_where(bad, r, xp) for r in (u, s, ub))


def svd_impl(a, *, full_matrices: bool, xp):
    """The `svd` primitive on CuPy: one matrix here, a stack or an empty one by CuPy's call."""
    if a.ndim == 2 and a.size and a.dtype.char in TYPE_LETTER:
        return svd(a, xp, full_matrices=full_matrices)
    return ARRAY_IMPLS.get("svd")(a, full_matrices=full_matrices, xp=xp)


__all__ = ["svd", "svd_impl"]
