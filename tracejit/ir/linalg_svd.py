"""The `svd` primitive (NumPy's `np.linalg.svd`, a host step when compiled) and its VJP.

The compiled CPU program runs it through scipy-openblas32's `?gesdd` from 128 rows and
columns on (backend_cpu/lapack_decomp.py): singular vectors may differ from NumPy's by a sign
or phase per singular pair, which the VJP below does not depend on for sign-invariant losses.

Outputs `(U, s, Vh)` as NumPy orders them, with `full_matrices` as NumPy's flag. The
`svdvals` primitive (`svd(compute_uv=False)`, matrix_rank, cond, norm 2/'nuc') gives `s`
alone, computing no singular vectors (?gesdd jobz='N' on the CPU; CuPy's
`svd(compute_uv=False)`, cuSOLVER's gesvd/gesvdj without vectors, on CUDA); its VJP binds
the thin `svd`, so the vectors are computed only when it is differentiated. The `svd` VJP is
the transpose of JAX's `svd` JVP, in JAX's complex convention, for `full_matrices=False`
or square matrices: with k = min(m, n), S = diag(s), F_ij = 1 / (s_j^2 - s_i^2) off the
diagonal, G = F o (U^T U_bar), H = F o (conj(Vh) Vh_bar^H):

    A_bar = conj(U) (diag(s_bar) + (G + G^H) S + S (H + H^H) + D) conj(Vh)
            + (I - conj(U) U^T) U_bar S^-1 conj(Vh)      (m > n)
            + conj(U) S^-1 Vh_bar (I - Vh^T conj(Vh))    (n > m)

where D = i Im(diag(U^T U_bar)) S^-1 for complex a (JAX puts the phase freedom of each
singular pair into U); for real a, conj is the identity and D = 0.

Repeated singular values make F infinite (NaN gradients for U and V), and zero ones make
S^-1 infinite, as in JAX; `s` alone always has a finite gradient.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.dtypes import real_dtype
from tracejit.ir.graph import ConstValue
from tracejit.ir.linalg_nonfinite import finite_stand_in, nan_where
from tracejit.ir.linalg_prims import _as, _conj, _eye_like, _mH, _mT, _square_dtype
from tracejit.ir.primitives import OPAQUE, register


def _svd_rule(avals, *, full_matrices):
    shape, dtype, _ = avals[0]
    _square_dtype("svd", shape, dtype, square=False)
    *lead, m, n = shape
    k = min(m, n)
    lead = tuple(lead)
    u = lead + ((m, m) if full_matrices else (m, k))
    vh = lead + ((n, n) if full_matrices else (k, n))
    return [(u, np.dtype(dtype), False), (lead + (k,), real_dtype(dtype), False),
            (vh, np.dtype(dtype), False)]  # fmt: skip


def _svd_impl(a, *, full_matrices, xp=np):
    a, bad = finite_stand_in(a, xp)
    return tuple(nan_where(bad, r, xp) for r in xp.linalg.svd(a, full_matrices=full_matrices))


def _svdvals_rule(avals):
    return _svd_rule(avals, full_matrices=False)[1]


def _svdvals_impl(a, *, xp=np):
    a, bad = finite_stand_in(a, xp)  # NaN for a non-finite matrix (NumPy raises LinAlgError)
    return nan_where(bad, xp.linalg.svd(a, compute_uv=False), xp)  # LAPACK's jobz='N'


register("svd", OPAQUE, _svd_rule, _svd_impl, True, rules={ARRAY_IMPLS: _svd_impl})
register("svdvals", OPAQUE, _svdvals_rule, _svdvals_impl, rules={ARRAY_IMPLS: _svdvals_impl})
dtypes.COMPLEX_HOST_PRIMS.update(("svd", "svdvals"))


def _scale(e, x, s, axis):
    """`x` (..., r, c) times `s` (..., r or c) along its rows (axis -2) or columns (-1)."""
    lead = tuple(range(s.ndim - 1))
    s = e.broadcast_in_dim(_as(e, s, x.dtype), shape=x.shape, dims=lead + (x.ndim + axis,))
    return e.mul(x, s)


def _safe_inverse(e, x, zero_mask):
    """1/x where `zero_mask` is 0 and 0 where it is 1 (x + mask keeps the division finite)."""
    return e.mul(e.div(e.full(1.0, x), e.add(x, zero_mask)), e.sub(e.full(1.0, x), zero_mask))


def _inner(e, out, u_bar, vh_bar, f, s_inv):
    """The cotangent of U^H dA V (see the module doc): diag(s_bar) and the F terms."""
    u, s, vh = out
    complex_ = dtypes.is_complex(u.dtype)
    eye = _eye_like(e, f)
    inner = e.full(0.0, f)
    if u_bar is not None:
        xb = e.matmul(_mT(e, u), u_bar)
        g = e.mul(_as(e, f, u.dtype), xb)
        inner = e.add(_as(e, inner, u.dtype), _scale(e, e.add(g, _mH(e, g)), s, -1))
        if complex_:  # JAX's i Im(diag dS) / s term of dU
            im = _scale(e, e.mul(e.imag(xb), eye), s_inv, -1)
            inner = e.add(inner, e.complex(e.full(0.0, im), im))
    if vh_bar is not None:
        h = e.mul(_as(e, f, u.dtype), e.matmul(_conj(e, vh), _mH(e, vh_bar)))
        inner = e.add(_as(e, inner, u.dtype), _scale(e, e.add(h, _mH(e, h)), s, -2))
    return inner


@defvjp("svd")
def _svd_vjp(e, cts, a, *, out, full_matrices):
    u, s, vh = out
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise UnsupportedError("svd: differentiate with full_matrices=False (as JAX requires)")
    u_bar, s_bar, vh_bar = cts
    k, lead = s.shape[-1], tuple(range(s.ndim - 1))
    eye = e.bind("const", value=ConstValue(np.eye(k, dtype=s.dtype)))
    eye = e.broadcast_in_dim(eye, shape=s.shape + (k,), dims=(s.ndim - 1, s.ndim))
    s_sq = e.mul(s, s)
    gap = e.sub(
        e.broadcast_in_dim(s_sq, shape=eye.shape, dims=lead + (s.ndim,)),
        e.broadcast_in_dim(s_sq, shape=eye.shape, dims=lead + (s.ndim - 1,)),
    )
    f = _safe_inverse(e, gap, eye)
    s_inv = _safe_inverse(e, s, e.convert(e.eq(s, e.full(0.0, s)), dtype=s.dtype))
    inner = _inner(e, out, u_bar, vh_bar, f, s_inv)
    if s_bar is not None:
        inner = e.add(inner, _as(e, _scale(e, eye, s_bar, -1), inner.dtype))
    u_c, vh_c = _conj(e, u), _conj(e, vh)
    a_bar = e.matmul(e.matmul(u_c, _as(e, inner, a.dtype)), vh_c)
    if u_bar is not None and m > n:  # (I - conj(U) U^T) U_bar S^-1 conj(Vh)
        ub = _scale(e, u_bar, s_inv, -1)
        a_bar = e.add(a_bar, e.matmul(e.sub(ub, e.matmul(u_c, e.matmul(_mT(e, u), ub))), vh_c))
    if vh_bar is not None and n > m:  # conj(U) S^-1 Vh_bar (I - Vh^T conj(Vh))
        vb = _scale(e, vh_bar, s_inv, -2)
        a_bar = e.add(a_bar, e.matmul(u_c, e.sub(vb, e.matmul(e.matmul(vb, _mT(e, vh)), vh_c))))
    return [a_bar]


@defvjp("svdvals")
def _svdvals_vjp(e, ct, a, *, out):
    # the forward step computes no singular vectors; the gradient needs them: the thin
    # `svd` here, only when differentiated (as JAX's svd(compute_uv=False) JVP)
    usv = e.bind_all("svd", a, full_matrices=False)
    return _svd_vjp(e, [None, ct, None], a, out=usv, full_matrices=False)


__all__: list[str] = []
