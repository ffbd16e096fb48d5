"""Linear-algebra primitives: solve, inv, cholesky, det, slogdet, eigh, eigvalsh, and VJPs.

Each takes stacks of square matrices `(..., n, n)` (float32/64 or complex64/128, LAPACK's
s/d/c/z routines; `tracejit.numpy` promotes and broadcasts first, so `solve`'s operands
arrive as `(..., n, n)` and `(..., n, k)` with equal leading axes). The implementation is
NumPy's own `np.linalg` (LAPACK through NumPy's bundled OpenBLAS), written over an array
namespace (ir/array_library.py), which the CUDA program runs with CuPy (cuSOLVER) on the
device arrays. The compiled CPU program runs them through scipy-openblas32's LAPACK from
128 x 128 on (backend_cpu/lapack.py, lapack_decomp.py) and through NumPy's batched gufuncs
below (backend_cpu/lapack_small.py); both compute float32 stacks in float32 (but eigh and
svd below 128: in double, as `np.linalg` computes them all). `eigvalsh` computes no
eigenvectors but to differentiate.

Failures follow JAX, not NumPy: a singular matrix (`solve`, `inv`) or one that is not
positive definite (`cholesky`) gives NaN for that matrix of the stack instead of raising
`LinAlgError`, since a compiled program cannot raise mid-run. `det` of a singular matrix is
0 and `slogdet` gives (0, -inf), as NumPy. A non-square operand is a `ShapeError` (also a
`LinAlgError`) at trace time.

VJPs are the standard matrix-calculus ones (Giles 2008; Murray 2016 for Cholesky), built
from these primitives, `matmul` and `transpose`, so second derivatives work too:
  x = solve(A, B):  B_bar = solve(A^T, x_bar),  A_bar = -B_bar x^T
  Y = inv(A):       A_bar = -Y^T Y_bar Y^T
  d = det(A):       A_bar = d_bar d inv(A)^T;   slogdet: A_bar = l_bar inv(A)^T
  L = cholesky(A):  A_bar = sym(L^-T phi(L^T L_bar) L^-1), phi = lower triangle, half diagonal
  U = cholesky(A, upper=True): as L = U^H with L_bar = U_bar^H (U is NumPy's own upper
                    factor, ?potrf 'U' of the upper triangle, not L^H: its rounding differs)
  w, V = eigh(A):   A_bar = sym(V (diag(w_bar) + F o (V^T V_bar)) V^T), F_ij = 1/(w_j - w_i)
`cholesky` and `eigh` read only the lower triangle but, as in JAX, their cotangent is
symmetric: the derivative along symmetric perturbations, the ones that keep A symmetric.
Complex operands follow JAX's convention (cotangents transposed with no conjugation, so
`grad` of a real loss is df/dx - i df/dy): solve, inv and det are holomorphic and keep the
formulas above; cholesky and eigh transpose JAX's JVPs with conjugate transposes
(L^-T P conj(L)^-1, conj(V) (...) V^T) and a Hermitian cotangent (S + S^H) / 2; slogdet's
sign has the cotangent i Im(s_bar sign) of t = tr(A^-1 dA) (d sign = i Im(t) sign).
`eigh`'s eigenvector cotangent is infinite/NaN at repeated eigenvalues (F), as in JAX;
eigenvectors are defined up to sign, so only sign-invariant losses have a gradient.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import ShapeError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.autodiff import swap_last as _mT
from tracejit.ir.dtypes import real_dtype
from tracejit.ir.graph import ConstValue
from tracejit.ir.linalg_nonfinite import finite_stand_in, nan_where
from tracejit.ir.primitives import OPAQUE, register


class LinAlgShapeError(ShapeError, np.linalg.LinAlgError):
    """A linalg operand that is not a stack of square matrices (NumPy's LinAlgError too)."""


_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _square_dtype(name: str, shape, dtype, square: bool = True) -> None:
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        what = "square matrices" if square else "matrices"
        raise LinAlgShapeError(
            f"{name}: needs {what} in the last two axes, got shape {tuple(shape)}"
        )
    if np.dtype(dtype) not in _DTYPES:
        raise UnsupportedError(
            f"{name} needs float32/64 or complex64/128 operands, got {np.dtype(dtype)}"
        )


def _square(name: str, aval) -> tuple[tuple[int, ...], np.dtype]:
    shape, dtype, _ = aval
    _square_dtype(name, shape, dtype)
    return tuple(shape), np.dtype(dtype)


def _nan_on_error(xp, fn, *arrays):
    """`fn(*arrays)`, with NaN for each matrix of the stack that LAPACK rejects (JAX's way)."""
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError:  # CuPy raises NumPy's class too
        pass
    out = xp.full(arrays[-1].shape, np.nan, arrays[-1].dtype)  # each result is b's/a's shape
    for i in np.ndindex(arrays[0].shape[:-2]):
        try:
            out[i] = fn(*(a[i] for a in arrays))
        except np.linalg.LinAlgError:
            pass
    return out


READS_STATUS = frozenset({"solve", "inv", "cholesky"})  # `_nan_on_error`'s: CuPy must raise


def _same_rule(name: str):
    def rule(avals):
        shape, dtype = _square(name, avals[0])
        return (shape, dtype, False)

    return rule


def _solve_rule(avals):
    shape, dtype = _square("solve", avals[0])
    bshape, bdtype, _ = avals[1]
    if len(bshape) != len(shape) or bshape[:-1] != shape[:-1] or bdtype != dtype:
        raise ShapeError(
            f"solve: b must be (..., n, k) of a's dtype matching a {shape} {dtype}, "
            f"got {tuple(bshape)} {bdtype}"
        )
    return (tuple(bshape), dtype, False)


def _det_rule(avals):
    shape, dtype = _square("det", avals[0])
    return (shape[:-2], dtype, False)


def _slogdet_rule(avals):
    shape, dtype, weak = _det_rule(avals)
    return [(shape, dtype, weak), (shape, real_dtype(dtype), weak)]


def _solve_impl(a, b, *, xp=np):
    return _nan_on_error(xp, xp.linalg.solve, a, b)


def _inv_impl(a, *, xp=np):
    return _nan_on_error(xp, xp.linalg.inv, a)


def _cholesky_rule(avals, *, upper):
    return _same_rule("cholesky")(avals)


def _cholesky_impl(a, *, upper: bool = False, xp=np):
    if xp is np:  # NumPy's own factor: `upper` reads the upper triangle (?potrf 'U')
        return _nan_on_error(xp, lambda m: np.linalg.cholesky(m, upper=upper), a)
    if not upper:
        return _nan_on_error(xp, xp.linalg.cholesky, a)
    # CuPy's cholesky has no `upper`: U = L(A^T)^T, the lower factor of A^T (A's upper
    # triangle) transposed (cuSOLVER's 'L' on A^T; equal to NumPy's U to rounding)
    return _nan_on_error(xp, xp.linalg.cholesky, a.swapaxes(-1, -2)).swapaxes(-1, -2)


def _det_impl(a, *, xp=np):
    return xp.asarray(xp.linalg.det(a), a.dtype)


def _slogdet_impl(a, *, xp=np):
    sign, logabs = xp.linalg.slogdet(a)
    return sign.astype(a.dtype), logabs.astype(real_dtype(a.dtype))


def _eigh_rule(avals):
    shape, dtype = _square("eigh", avals[0])
    return [(shape[:-1], real_dtype(dtype), False), (shape, dtype, False)]


def _eigh_impl(a, *, xp=np):
    a, bad = finite_stand_in(a, xp, lower=True)  # NaN for inf or NaN in the lower triangle
    return tuple(nan_where(bad, r, xp) for r in xp.linalg.eigh(a))  # which eigh reads


def _eigvalsh_rule(avals):
    shape, dtype = _square("eigvalsh", avals[0])
    return (shape[:-1], real_dtype(dtype), False)


def _eigvalsh_impl(a, *, xp=np):
    a, bad = finite_stand_in(a, xp, lower=True)  # no eigenvectors (LAPACK's jobz='N')
    return nan_where(bad, xp.linalg.eigvalsh(a), xp)


for _name, _shape_rule, _impl, _multiple in (
    ("solve", _solve_rule, _solve_impl, False),
    ("inv", _same_rule("inv"), _inv_impl, False),
    ("cholesky", _cholesky_rule, _cholesky_impl, False),
    ("det", _det_rule, _det_impl, False),
    ("slogdet", _slogdet_rule, _slogdet_impl, True),
    ("eigh", _eigh_rule, _eigh_impl, True),
    ("eigvalsh", _eigvalsh_rule, _eigvalsh_impl, False),
):
    register(_name, OPAQUE, _shape_rule, _impl, _multiple, rules={ARRAY_IMPLS: _impl})
dtypes.COMPLEX_HOST_PRIMS.update(("solve", "inv", "cholesky", "det", "slogdet", "eigh", "eigvalsh"))


# ---------------------------------------------------------------- VJPs


def _to_matrices(e, s, like):
    """The per-matrix scalars `s` (...,) broadcast over `like`'s (..., n, n)."""
    return e.broadcast_in_dim(s, shape=like.shape, dims=tuple(range(s.ndim)))


@defvjp("solve")
def _solve_vjp(e, ct, a, b, *, out):
    b_bar = e.solve(_mT(e, a), ct)
    return [e.neg(e.matmul(b_bar, _mT(e, out))), b_bar]


@defvjp("inv")
def _inv_vjp(e, ct, a, *, out):
    yt = _mT(e, out)
    return [e.neg(e.matmul(e.matmul(yt, ct), yt))]


@defvjp("det")
def _det_vjp(e, ct, a, *, out):
    scale = _to_matrices(e, e.mul(ct, out), a)
    return [e.mul(scale, _mT(e, e.inv(a)))]


def _conj(e, x):
    """conj(x) for complex x, x itself for real."""
    return e.conj(x) if dtypes.is_complex(x.dtype) else x


def _mH(e, x):
    """The conjugate transpose of the last two axes (the transpose for real x)."""
    return _conj(e, _mT(e, x))


def _hermitian_part(e, s):
    """(s + s^H) / 2: the transpose of symmetrizing the input, as JAX's cholesky/eigh do."""
    return e.mul(e.add(s, _mH(e, s)), e.full(0.5, s))


def _as(e, x, dtype):
    return x if x.dtype == dtype else e.convert(x, dtype=dtype)


@defvjp("slogdet")
def _slogdet_vjp(e, cts, a, *, out):
    sign_bar, t_bar = cts  # d logabs = Re t, d sign = i Im(t) sign, t = tr(A^-1 dA) (JAX)
    if not dtypes.is_complex(a.dtype):
        sign_bar = None  # the sign is piecewise constant: no cotangent
    if t_bar is None and sign_bar is None:
        return [None]
    t_bar = e.full(0.0, out[0]) if t_bar is None else _as(e, t_bar, a.dtype)
    if sign_bar is not None:  # Re(s_bar i Im(t) sign) = Re(i Im(s_bar sign) t)
        im = e.imag(e.mul(sign_bar, out[0]))
        t_bar = e.add(t_bar, e.complex(e.full(0.0, im), im))
    return [e.mul(_to_matrices(e, t_bar, a), _mT(e, e.inv(a)))]


@defvjp("cholesky")
def _cholesky_vjp(e, ct, a, *, out, upper):
    # dL = L phi(L^-1 dS L^-H), dS = (dA + dA^H) / 2 (JAX's JVP; Murray 2016), transposed
    if upper:  # U = L^H: L's cotangent is ct^H (conj and transpose are their own VJPs)
        ct, out = _mH(e, ct), _mH(e, out)
    n = a.shape[-1]
    mask = np.tril(np.ones((n, n), a.dtype)) - 0.5 * np.eye(n, dtype=a.dtype)  # phi
    phi = e.bind("const", value=ConstValue(mask))
    phi = e.broadcast_in_dim(phi, shape=a.shape, dims=(a.ndim - 2, a.ndim - 1))
    lt = _mT(e, out)
    p = e.mul(phi, e.matmul(lt, ct))
    y = e.solve(lt, p)  # L^-T P
    s = _mT(e, e.solve(_conj(e, lt), _mT(e, y)))  # L^-T P conj(L)^-1
    return [_hermitian_part(e, s)]


def _eye_like(e, a, dtype=None):
    """The identity broadcast over `a`'s stack of matrices (in `dtype`, default a's)."""
    n = a.shape[-1]
    eye = e.bind("const", value=ConstValue(np.eye(n, dtype=dtype or a.dtype)))
    return e.broadcast_in_dim(eye, shape=a.shape, dims=(a.ndim - 2, a.ndim - 1))


@defvjp("eigh")
def _eigh_vjp(e, cts, a, *, out):
    # JAX: Y = V^H dA V (dA Hermitian-symmetrized), dw = Re diag(Y), dV = V (F o Y);
    # transposed: A_bar = herm(conj(V) (diag(w_bar) + F o (V^T V_bar)) V^T)
    w, v = out
    w_bar, v_bar = cts
    eye, k, shape = _eye_like(e, a, w.dtype), a.ndim - 2, a.shape
    lead = tuple(range(k))
    inner = e.full(0.0, a)
    if w_bar is not None:
        w_diag = e.mul(e.broadcast_in_dim(w_bar, shape=shape, dims=lead + (k + 1,)), eye)
        inner = _as(e, w_diag, a.dtype)
    if v_bar is not None:  # F_ij = 1 / (w_j - w_i) off the diagonal (inf if degenerate)
        gap = e.sub(
            e.broadcast_in_dim(w, shape=shape, dims=lead + (k + 1,)),
            e.broadcast_in_dim(w, shape=shape, dims=lead + (k,)),
        )
        f = e.mul(e.div(e.full(1.0, eye), e.add(gap, eye)), e.sub(e.full(1.0, eye), eye))
        inner = e.add(inner, e.mul(_as(e, f, a.dtype), e.matmul(_mT(e, v), v_bar)))
    return [_hermitian_part(e, e.matmul(e.matmul(_conj(e, v), inner), _mT(e, v)))]


@defvjp("eigvalsh")
def _eigvalsh_vjp(e, ct, a, *, out):
    # the forward step computes no eigenvectors; the gradient needs them: the full `eigh`
    # here, only when differentiated (JAX's svd(compute_uv=False) does the same)
    return _eigh_vjp(e, [ct, None], a, out=e.bind_all("eigh", a))


__all__ = ["LinAlgShapeError"]
