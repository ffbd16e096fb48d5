"""eigh, svd, qr and the values-only eigvalsh and svdvals steps of the CPU program through
scipy-openblas32's LAPACK (see lapack.py).

As backend_cpu/lapack.py does for solve/inv/cholesky/det/slogdet, these callbacks run
scipy-openblas32's LAPACKE routines through ctypes on the program's buffers, from
`lapack.MIN_N` rows and columns on; NumPy's `np.linalg` remains the path otherwise. They use
LAPACKE's plain entry points (workspace sized and allocated inside, a NaN check of the input
first), column-major, so a row-major buffer reads as its transpose:

- eigh (`?syevd` / `?heevd`): NumPy reads A's lower triangle, the upper one of the buffer
  read as A^T; `syevd('U')` of it solves the matrix H^T = conj(H), whose eigenvalues are
  H's (ascending, as NumPy's) and eigenvectors conj(V), written column-major: row-major,
  V^H. The step writes its conjugate transpose, V (one n x n copy). eigvalsh: the same
  routine with jobz='N' (no eigenvectors: the tridiagonal's eigenvalues alone, ?sterf).
- svd (`?gesdd`): A^T = U' S V'^H gives A = conj(V') S U'^T. LAPACK writes U' column-major
  into the Vh buffer, where it reads row-major as U'^T = Vh, and V'^H into the U buffer,
  where it reads as conj(V') = U: no copy but the input's (gesdd overwrites it). Thin
  ('S') or full ('A') as the primitive's `full_matrices`. svdvals (`compute_uv=False`):
  jobz='N', no singular vectors (A^T's singular values are A's).
- qr (`?geqrf` + `?orgqr` / `?ungqr`): a scratch holds A column-major (one transposed
  copy), R is its upper triangle, Q is formed in place (m x m for 'complete').
A matrix LAPACK rejects (NaN in what it reads) or on which it does not converge (info > 0),
and for eigh/eigvalsh one holding inf, gives NaN for all of that matrix's outputs, where
NumPy's path has NaN in part of them (eigh, qr) or raises (svd). Values equal NumPy's to
rounding; eigenvectors and singular vectors may differ from NumPy's by a sign (a phase when
complex), as two LAPACK runs may.
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu import lapack, lapack_threads
from tracejit.backend_cpu.lapack import _C, _COL_MAJOR, _I, _P, _stack, routines

lapack.SIGNATURES.update({  # LAPACKE's plain routines: (real name, complex name), argtypes
    # layout, jobz, uplo, n, a, lda, w
    "syevd": (("syevd", "heevd"), [_I, _C, _C, _I, _P, _I, _P]),
    # layout, jobz, m, n, a, lda, s, u, ldu, vt, ldvt
    "gesdd": ("gesdd", [_I, _C, _I, _I, _P, _I, _P, _P, _I, _P, _I]),
    "geqrf": ("geqrf", [_I, _I, _I, _P, _I, _P]),  # layout, m, n, a, lda, tau
    "orgqr": (("orgqr", "ungqr"), [_I, _I, _I, _I, _P, _I, _P]),  # layout, m, n, k, a, lda, tau
})  # fmt: skip


def _rows(x: np.ndarray) -> np.ndarray:
    """A contiguous (..., k) buffer as a (batch, k) stack of rows (a view)."""
    return x.reshape(-1, x.shape[-1])


def _eigh_into(a: np.ndarray, outs: list) -> None:
    w_out, v_out = outs
    r, n = routines(a.dtype), a.shape[-1]
    scratch = np.empty((n, n), a.dtype)
    with lapack_threads.threads(n):
        for matrix, wi, vi in zip(_stack(a), _rows(w_out), _stack(v_out)):
            np.copyto(scratch, matrix)
            if not np.isfinite(np.tril(scratch)).all() or r.syevd(  # inf passes LAPACKE's check
                _COL_MAJOR, b"V", b"U", n, scratch.ctypes.data, n, wi.ctypes.data
            ):
                wi[...], vi[...] = np.nan, np.nan
            elif np.iscomplexobj(scratch):
                np.conjugate(scratch.T, out=vi)
            else:
                np.copyto(vi, scratch.T)


def _eigvalsh_into(a: np.ndarray, outs: list) -> None:
    (w_out,) = outs
    r, n = routines(a.dtype), a.shape[-1]
    scratch = np.empty((n, n), a.dtype)
    with lapack_threads.threads(n):
        for matrix, wi in zip(_stack(a), _rows(w_out)):
            np.copyto(scratch, matrix)
            if not np.isfinite(np.tril(scratch)).all() or r.syevd(
                _COL_MAJOR, b"N", b"U", n, scratch.ctypes.data, n, wi.ctypes.data
            ):
                wi[...] = np.nan


def _svd_into(a: np.ndarray, outs: list, *, full_matrices: bool) -> None:
    u_out, s_out, vh_out = outs
    r, (m, n) = routines(a.dtype), a.shape[-2:]
    jobz, ldvt = (b"A", m) if full_matrices else (b"S", min(m, n))
    scratch = np.empty((m, n), a.dtype)  # column-major: A^T, n x m
    with lapack_threads.threads(min(m, n)):
        for matrix, ui, si, vhi in zip(_stack(a), _stack(u_out), _rows(s_out), _stack(vh_out)):
            np.copyto(scratch, matrix)
            info = r.gesdd(_COL_MAJOR, jobz, n, m, scratch.ctypes.data, n, si.ctypes.data,
                           vhi.ctypes.data, n, ui.ctypes.data, ldvt)  # fmt: skip
            if info:
                ui[...], si[...], vhi[...] = np.nan, np.nan, np.nan


def _svdvals_into(a: np.ndarray, outs: list) -> None:
    (s_out,) = outs
    r, (m, n) = routines(a.dtype), a.shape[-2:]
    scratch = np.empty((m, n), a.dtype)  # column-major: A^T, whose singular values are A's
    with lapack_threads.threads(min(m, n)):
        for matrix, si in zip(_stack(a), _rows(s_out)):
            np.copyto(scratch, matrix)
            if r.gesdd(_COL_MAJOR, b"N", n, m, scratch.ctypes.data, n, si.ctypes.data,
                       None, 1, None, 1):  # fmt: skip
                si[...] = np.nan


def _qr_into(a: np.ndarray, outs: list, *, complete: bool) -> None:
    q_out, r_out = outs
    r, (m, n) = routines(a.dtype), a.shape[-2:]
    k, cols = min(m, n), q_out.shape[-1]  # Q is m x cols: cols = m if complete else k
    scratch = np.zeros((max(n, cols), m), a.dtype)  # column-major m x max(n, cols)
    tau = np.empty(k, a.dtype)
    with lapack_threads.threads(k):
        for matrix, qi, ri in zip(_stack(a), _stack(q_out), _stack(r_out)):
            np.copyto(scratch[:n], matrix.T)
            if r.geqrf(_COL_MAJOR, m, n, scratch.ctypes.data, m, tau.ctypes.data):
                qi[...], ri[...] = np.nan, np.nan
                continue
            np.copyto(ri, np.triu(scratch[:n].T[: ri.shape[0]]))
            r.orgqr(_COL_MAJOR, m, cols, k, scratch.ctypes.data, m, tau.ctypes.data)
            np.copyto(qi, scratch[:cols].T)


lapack.register("eigh", _eigh_into, ("syevd",))
lapack.register("eigvalsh", _eigvalsh_into, ("syevd",))
lapack.register("svd", _svd_into, ("gesdd",))
lapack.register("svdvals", _svdvals_into, ("gesdd",))
lapack.register("qr", _qr_into, ("geqrf", "orgqr"))

__all__: list[str] = []
