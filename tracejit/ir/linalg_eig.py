"""The `eig` primitive: eigenvalues and right eigenvectors of general square matrices.

`eig(a)` takes a stack `(..., n, n)` (float32/64 or complex64/128) and returns complex
eigenvalues `(..., n)` and unit eigenvectors `(..., n, n)` (columns), always complex, as
`jax.numpy.linalg.eig`. The implementation is NumPy's (LAPACK geev), run as a host step in
compiled CPU programs like the other LAPACK primitives (ir/linalg_prims.py), and CuPy's
(cuSOLVER Xgeev) in CUDA programs: 182 ms for 1024x1024 float32 on an H100, where the host
step took 1035 (16 cores) and JAX 181 (benchmarks/diag/eig_probe.py, twelfth session). As
NumPy's, neither promises an order of the eigenvalues; on that card Xgeev gave LAPACK's
order, norms and phases (each vector of unit norm, its largest component real), a real
eigenvector's sign aside. A matrix with non-finite entries gives NaN, as JAX.

The VJP is the transpose of JAX's eig JVP (nondegenerate perturbation theory, Giles 2008
sec. 3.1), in JAX's complex convention (no conjugation of cotangents). With
P = V^-1 dA V and F_ij = 1 / (w_j - w_i) off the diagonal:

    dw = diag(P),   dV = U + V diag(c),   U = V (F o P),
    c_j = -Re(v_j^H u_j) - i Im(u_kj) / Re(v_kj),   k = argmax_i |v_ij|

(c_j keeps geev's normalization: unit 2-norm, largest-magnitude component real). So

    A_bar = V^-T (diag(w_bar) + F o (V^T U_bar)) V^T   (its real part for a real A),
    U_bar = V_bar - conj(V) diag(Re g) - i E_k diag(Im g / Re v_k),   g_j = sum_i (V_bar o V)_ij

with E_k the 0/1 matrix of the rows k_j. Eigenvalue cotangents alone are always accepted
(`eigvals`, its own primitive: NumPy's `eigvals`, no eigenvectors but to differentiate);
eigenvector ones, as in JAX, only when the primitive was bound with
`eigvec_derivs=True` (`tnp.linalg.eig(a, enable_eigvec_derivs=True)`, JAX's
`lax.linalg.eig(..., enable_eigvec_derivs=True)`): the derivative is valid only for
distinct eigenvalues and a unique largest component, which cannot be checked. Repeated
eigenvalues make F infinite (inf/NaN gradients), as in JAX. Forward mode (`tj.jvp`)
transposes this VJP.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.fft_prims import complex_dtype
from tracejit.ir.linalg_nonfinite import finite_stand_in, nan_where
from tracejit.ir.linalg_prims import _eye_like, _mT, _square
from tracejit.ir.primitives import OPAQUE, register


def _eig_rule(avals, eigvec_derivs=False):
    shape, dt = _square("eig", avals[0])
    c = complex_dtype(dt)
    return [(shape[:-1], c, False), (shape, c, False)]


def _eig_impl(a, eigvec_derivs=False, *, xp=np):
    c = complex_dtype(a.dtype)
    a, bad = finite_stand_in(a, xp)  # NaN for a non-finite matrix (NumPy raises LinAlgError)
    return tuple(nan_where(bad, r.astype(c, copy=False), xp) for r in xp.linalg.eig(a))


def _eigvals_rule(avals):
    return _eig_rule(avals)[0]


def _eigvals_impl(a, *, xp=np):
    c = complex_dtype(a.dtype)
    a, bad = finite_stand_in(a, xp)
    return nan_where(bad, xp.linalg.eigvals(a).astype(c, copy=False), xp)


register("eig", OPAQUE, _eig_rule, _eig_impl, multiple_results=True,
         rules={ARRAY_IMPLS: _eig_impl})  # fmt: skip
register("eigvals", OPAQUE, _eigvals_rule, _eigvals_impl, rules={ARRAY_IMPLS: _eigvals_impl})
dtypes.COMPLEX_HOST_PRIMS.update(("eig", "eigvals"))


_EIGVEC_REFUSED = (
    "eig: derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
    "input that tracejit cannot check (distinct eigenvalues; a unique largest component in "
    "each eigenvector), as in JAX. Opt in with tnp.linalg.eig(a, enable_eigvec_derivs=True), "
    "differentiate eigenvalues only (tnp.linalg.eigvals), or use eigh for symmetric matrices"
)


def _gauge_cotangent(e, v, v_bar):
    """U_bar of the module doc: `v_bar` plus the transposes of the two geev constraints."""
    g = e.reduce_sum(e.mul(v_bar, v), axes=(v.ndim - 2,))  # c_bar_j = sum_i v_bar_ij v_ij
    re, im = e.real(v), e.imag(v)
    k = e.argmax(e.add(e.mul(re, re), e.mul(im, im)), axis=v.ndim - 2)  # largest |v_ij|
    rows = e.iota(shape=v.shape, dtype=np.dtype(np.int64), axis=v.ndim - 2)
    lead = tuple(range(v.ndim - 2))
    at_k = e.eq(rows, e.broadcast_in_dim(k, shape=v.shape, dims=lead + (v.ndim - 1,)))
    mask = e.convert(at_k, dtype=re.dtype)
    r = e.reduce_sum(e.mul(mask, re), axes=(v.ndim - 2,))  # Re v_kj (v_kj is real)
    g_re, g_im = e.real(g), e.imag(g)
    zero = e.full(0.0, g_re)
    norm = e.complex(e.neg(g_re), zero)  # -Re(c_bar_j), times conj(v_j)
    phase = e.complex(zero, e.neg(e.div(g_im, r)))  # -i Im(c_bar_j) / r_j, at row k_j
    cols = lead + (v.ndim - 1,)
    u_bar = e.add(v_bar, e.mul(e.conj(v), e.broadcast_in_dim(norm, shape=v.shape, dims=cols)))
    phase = e.broadcast_in_dim(phase, shape=v.shape, dims=cols)
    return e.add(u_bar, e.mul(e.complex(mask, e.full(0.0, mask)), phase))


@defvjp("eig")
def _eig_vjp(e, cts, a, *, out, eigvec_derivs=False):
    w, v = out
    w_bar, v_bar = cts
    if v.shape[-1] == 0:
        return [e.full(0.0, a)]
    eye, k = _eye_like(e, v), v.ndim - 2
    lead = tuple(range(k))
    inner = (
        e.full(0.0, v)
        if w_bar is None
        else e.mul(e.broadcast_in_dim(w_bar, shape=v.shape, dims=lead + (k + 1,)), eye)
    )
    if v_bar is not None:
        if not eigvec_derivs:
            raise UnsupportedError(_EIGVEC_REFUSED)
        gap = e.sub(  # w_j - w_i, F_ij = 1 / gap off the diagonal (inf if degenerate)
            e.broadcast_in_dim(w, shape=v.shape, dims=lead + (k + 1,)),
            e.broadcast_in_dim(w, shape=v.shape, dims=lead + (k,)),
        )
        f = e.mul(e.div(e.full(1.0, v), e.add(gap, eye)), e.sub(e.full(1.0, v), eye))
        vt_u_bar = e.matmul(_mT(e, v), _gauge_cotangent(e, v, v_bar))
        inner = e.add(inner, e.mul(f, vt_u_bar))
    vt = _mT(e, v)
    a_bar = e.solve(vt, e.matmul(inner, vt))  # V^-T inner V^T
    return [a_bar if dtypes.is_complex(a.dtype) else e.real(a_bar)]


@defvjp("eigvals")
def _eigvals_vjp(e, ct, a, *, out):
    # the forward step computes no eigenvectors (geev jobvr='N'); the gradient needs them:
    # the full `eig` here, only when differentiated. Its vectors' derivatives are taken
    # (a second derivative): this VJP does not depend on their gauge, so they need only
    # distinct eigenvalues, as eigh's second derivatives
    return _eig_vjp(e, [ct, None], a, out=e.bind_all("eig", a, eigvec_derivs=True))


__all__: list[str] = []
