"""The `qr` primitive (NumPy's `np.linalg.qr`, a host step when compiled) and its VJP.

The compiled CPU program runs it through scipy-openblas32's `?geqrf` and `?orgqr`/`?ungqr`
from 128 rows and columns on (backend_cpu/lapack_decomp.py), NumPy's routines and signs.

Outputs `(Q, R)`; `complete` is NumPy's mode='complete' (else 'reduced'). The VJP is the
transpose of JAX's QR JVP, for tall or square matrices (m >= n, reduced or square): with
M = Q^T Q_bar - R_bar R^T and C_bar = tril(M - M^H, -1) - M (+ i Im(diag M) when complex,
the transpose of JAX's correction keeping diag(R) real),

    A_bar = (Q_bar + conj(Q) C_bar) R^-T

R^-T is applied with `solve` (R must be nonsingular: full column rank, as in JAX).
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.graph import ConstValue
from tracejit.ir.linalg_prims import _conj, _eye_like, _mH, _mT, _square_dtype
from tracejit.ir.primitives import OPAQUE, register


def _qr_rule(avals, *, complete):
    shape, dtype, _ = avals[0]
    _square_dtype("qr", shape, dtype, square=False)
    *lead, m, n = shape
    k = m if complete else min(m, n)
    dt = np.dtype(dtype)
    return [(tuple(lead) + (m, k), dt, False), (tuple(lead) + (k, n), dt, False)]


def _qr_impl(a, *, complete, xp=np):
    q, r = xp.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


register("qr", OPAQUE, _qr_rule, _qr_impl, True, rules={ARRAY_IMPLS: _qr_impl})
dtypes.COMPLEX_HOST_PRIMS.add("qr")


@defvjp("qr")
def _qr_vjp(e, cts, a, *, out, complete):
    q, r = out
    m, n = a.shape[-2:]
    if m < n:
        raise UnsupportedError("qr: the gradient needs m >= n rows (a tall or square matrix)")
    q_bar, r_bar = cts
    q_bar = e.full(0.0, q) if q_bar is None else q_bar
    m_ = e.matmul(_mT(e, q), q_bar)
    if r_bar is not None:
        m_ = e.sub(m_, e.matmul(r_bar, _mT(e, r)))
    k = m_.shape[-1]
    low = e.bind("const", value=ConstValue(np.tril(np.ones((k, k), a.dtype), -1)))
    low = e.broadcast_in_dim(low, shape=m_.shape, dims=(m_.ndim - 2, m_.ndim - 1))
    c_bar = e.sub(e.mul(low, e.sub(m_, _mH(e, m_))), m_)
    if dtypes.is_complex(a.dtype):  # JAX's diagonal correction i Im(diag(Q^H dA R^-1))
        im = e.mul(e.imag(m_), _eye_like(e, m_, dtypes.real_dtype(a.dtype)))
        c_bar = e.add(c_bar, e.complex(e.full(0.0, im), im))
    x_bar = e.add(q_bar, e.matmul(_conj(e, q), c_bar))  # (..., m, k); k == n here
    return [_mT(e, e.solve(r, _mT(e, x_bar)))]


__all__: list[str] = []
