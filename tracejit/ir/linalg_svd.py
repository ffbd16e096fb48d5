"""The `svd` primitive (NumPy's `np.linalg.svd`, a host step when compiled) and its VJP.

Outputs `(U, s, Vh)` as NumPy orders them, with `full_matrices` as NumPy's flag. The VJP is
the transpose of JAX's `svd` JVP (real case), for `full_matrices=False` or square matrices:
with k = min(m, n), S = diag(s), F_ij = 1 / (s_j^2 - s_i^2) off the diagonal,
G = F o (U^T U_bar), H = F o (V^T V_bar):

    A_bar = U (diag(s_bar) + (G + G^T) S + S (H + H^T)) V^T
            + (I - U U^T) U_bar S^-1 V^T          (m > n)
            + U ((I - V V^T) V_bar S^-1)^T        (n > m)

Repeated singular values make F infinite (NaN gradients for U and V), and zero ones make
S^-1 infinite, as in JAX; `s` alone always has a finite gradient.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.graph import ConstValue
from tracejit.ir.linalg_prims import _mT, _square_dtype
from tracejit.ir.primitives import OPAQUE, register


def _svd_rule(avals, *, full_matrices):
    shape, dtype, _ = avals[0]
    _square_dtype("svd", shape, dtype, square=False)
    *lead, m, n = shape
    k = min(m, n)
    lead = tuple(lead)
    u = lead + ((m, m) if full_matrices else (m, k))
    vh = lead + ((n, n) if full_matrices else (k, n))
    return [(u, np.dtype(dtype), False), (lead + (k,), np.dtype(dtype), False),
            (vh, np.dtype(dtype), False)]  # fmt: skip


def _svd_impl(a, *, full_matrices, xp=np):
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


register("svd", OPAQUE, _svd_rule, _svd_impl, True, rules={ARRAY_IMPLS: _svd_impl})


def _scale(e, x, s, axis):
    """`x` (..., r, c) times `s` (..., r or c) along its rows (axis -2) or columns (-1)."""
    lead = tuple(range(s.ndim - 1))
    return e.mul(x, e.broadcast_in_dim(s, shape=x.shape, dims=lead + (x.ndim + axis,)))


def _safe_inverse(e, x, zero_mask):
    """1/x where `zero_mask` is 0 and 0 where it is 1 (x + mask keeps the division finite)."""
    return e.mul(e.div(e.full(1.0, x), e.add(x, zero_mask)), e.sub(e.full(1.0, x), zero_mask))


@defvjp("svd")
def _svd_vjp(e, cts, a, *, out, full_matrices):
    u, s, vh = out
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise UnsupportedError("svd: differentiate with full_matrices=False (as JAX requires)")
    u_bar, s_bar, vh_bar = cts
    v = _mT(e, vh)
    k, lead = s.shape[-1], tuple(range(s.ndim - 1))
    eye = e.bind("const", value=ConstValue(np.eye(k, dtype=s.dtype)))
    eye = e.broadcast_in_dim(eye, shape=s.shape + (k,), dims=(s.ndim - 1, s.ndim))
    inner = e.full(0.0, eye) if s_bar is None else _scale(e, eye, s_bar, -1)
    s_sq = e.mul(s, s)
    gap = e.sub(
        e.broadcast_in_dim(s_sq, shape=eye.shape, dims=lead + (s.ndim,)),
        e.broadcast_in_dim(s_sq, shape=eye.shape, dims=lead + (s.ndim - 1,)),
    )
    f = _safe_inverse(e, gap, eye)
    s_inv = _safe_inverse(e, s, e.convert(e.eq(s, e.full(0.0, s)), dtype=s.dtype))
    extra = None
    if u_bar is not None:
        g = e.mul(f, e.matmul(_mT(e, u), u_bar))
        inner = e.add(inner, _scale(e, e.add(g, _mT(e, g)), s, -1))
        if m > n:
            ub = _scale(e, u_bar, s_inv, -1)
            extra = e.matmul(e.sub(ub, e.matmul(u, e.matmul(_mT(e, u), ub))), vh)
    if vh_bar is not None:
        v_bar = _mT(e, vh_bar)
        h = e.mul(f, e.matmul(vh, v_bar))
        inner = e.add(inner, _scale(e, e.add(h, _mT(e, h)), s, -2))
        if n > m:
            vb = _scale(e, v_bar, s_inv, -1)
            extra = e.matmul(u, _mT(e, e.sub(vb, e.matmul(v, e.matmul(vh, vb)))))
    a_bar = e.matmul(e.matmul(u, inner), vh)
    return [a_bar if extra is None else e.add(a_bar, extra)]


__all__: list[str] = []
