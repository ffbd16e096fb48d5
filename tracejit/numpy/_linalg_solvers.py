"""`tnp.linalg` solvers, determinants, eigh: solve, inv, cholesky, det, slogdet, eigh, eigvalsh.

Each binds one primitive of `tracejit/ir/linalg_prims.py` (NumPy's `np.linalg`, run as a
host step in compiled programs on both backends) and is differentiable. Integer operands
are promoted to float64, stacks `(..., n, n)` are batched as NumPy does. As in JAX, a
singular (or, for `cholesky`, non positive-definite) matrix gives NaN rather than raising
`LinAlgError`; a non-square one raises `LinAlgShapeError`, a `LinAlgError`.
"""

from __future__ import annotations

from typing import NamedTuple

from tracejit.errors import TracejitValueError
from tracejit.ir.linalg_prims import LinAlgShapeError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._complex import conj
from tracejit.numpy._core import broadcast_shapes, broadcast_to, promote, shape_of
from tracejit.numpy._creation import asarray
from tracejit.numpy._linalg import matmul, matrix_transpose
from tracejit.numpy._shape import expand_dims, reshape
from tracejit.tracer.core import bind


def _matrices(name: str, a, square: bool = True):
    """`a` as a float stack of (square) matrices, or LinAlgShapeError."""
    (a,) = promote(a, to_float=True)
    shape = tuple(shape_of(a))
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        what = "square matrices" if square else "matrices"
        raise LinAlgShapeError(f"{name}: needs {what} in the last two axes, got shape {shape}")
    return a


def _mH(x):
    """The conjugate transpose of the last two axes (the transpose of a real stack)."""
    return conj(matrix_transpose(x))


def solve(a, b):
    """`np.linalg.solve` (NumPy 2: b is a vector only when 1-D, else a stack (..., n, k)).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
    array([1. , 0.5])
    """
    a = _matrices("solve", a)
    a, b = promote(a, b, to_float=True)
    n, bs = shape_of(a)[-1], tuple(shape_of(b))
    vector = len(bs) == 1
    if vector:
        b = reshape(b, (bs[0], 1))
    if len(shape_of(b)) < 2 or shape_of(b)[-2] != n:
        raise LinAlgShapeError(f"solve: b of shape {bs} does not match a of order {n}")
    batch = broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2], op="solve")
    a = broadcast_to(a, batch + (n, n))
    b = broadcast_to(b, batch + tuple(shape_of(b)[-2:]))
    x = bind("solve", a, b)
    return reshape(x, batch + (n,)) if vector else x


def inv(a):
    """`np.linalg.inv` (NaN for a singular matrix, as JAX).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return bind("inv", _matrices("inv", a))


def cholesky(a, /, *, upper: bool = False):
    """`np.linalg.cholesky`: L with a = L L^H (reads the lower triangle; NaN if not PD);
    `upper=True` gives U with a = U^H U, computed from the upper triangle as NumPy does
    (LAPACK's ?potrf 'U', not L^H: the bits, signs of zero included, are NumPy's).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[2., 0.],
           [1., 1.]])
    """
    return bind("cholesky", _matrices("cholesky", a), upper=bool(upper))


def det(a):
    """`np.linalg.det` of each matrix of the stack.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0000000000000004
    """
    return bind("det", _matrices("det", a))


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def slogdet(a):
    """`np.linalg.slogdet`: (sign, log|det|) of each matrix; (0, -inf) when singular.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.slogdet(np.array([[0.0, 2.0], [3.0, 0.0]])).sign
    array(-1.)
    """
    sign, logabs = bind("slogdet", _matrices("slogdet", a))
    return SlogdetResult(sign, logabs)


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def eigh(a, UPLO: str = "L"):
    """`np.linalg.eigh`: ascending eigenvalues and orthonormal eigenvectors of Hermitian `a`.

    Reads the triangle `UPLO` names; the gradient is the symmetric one (see linalg_prims).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    array([1., 3.])
    """
    return EighResult(*bind("eigh", _lower("eigh", a, UPLO)))


def _lower(name: str, a, UPLO: str):
    """`a`'s stack with the triangle `UPLO` names as its lower one (the one eigh reads)."""
    if UPLO not in ("L", "U"):
        raise TracejitValueError("UPLO argument must be 'L' or 'U'")
    a = _matrices(name, a)
    return a if UPLO == "L" else _mH(a)  # the upper triangle, as a lower one


def eigvalsh(a, UPLO: str = "L"):
    """`np.linalg.eigvalsh`: the ascending eigenvalues of symmetric `a` (no eigenvectors are
    computed, but to differentiate them).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    array([1., 3.])
    """
    return bind("eigvalsh", _lower("eigvalsh", a, UPLO))


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """`np.linalg.svd`: U, S, Vh with a = U diag(S) Vh (differentiable with full_matrices=False
    or square a). `compute_uv=False` computes S alone (the vectors only to differentiate it).
    `hermitian` is accepted and ignored (the general SVD is also right).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    array([4., 3.])
    """
    a = _matrices("svd", a, square=False)
    if not compute_uv:
        return bind("svdvals", a)
    return SVDResult(*bind("svd", a, full_matrices=bool(full_matrices)))


def svdvals(x, /):
    """Array-API `svdvals`: the singular values, descending."""
    return svd(x, compute_uv=False)


class QRResult(NamedTuple):
    Q: object
    R: object


def qr(a, mode: str = "reduced"):
    """`np.linalg.qr` with mode 'reduced', 'complete' or 'r' (differentiable for m >= n).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]), mode="r")
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    if mode not in ("reduced", "complete", "r"):
        raise TracejitValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = bind("qr", _matrices("qr", a, square=False), complete=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=None):
    """`np.linalg.pinv` from `svd`, as NumPy computes it (singular values at most
    rcond * max(s) count as zero; rcond defaults to 1e-15, rtol=None to max(m, n) * eps).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    a = _matrices("pinv", a, square=False)
    *lead, m, n = shape_of(a)
    if rcond is not None and rtol is not None:
        raise TracejitValueError("`rtol` and `rcond` can't be both set.")
    if rcond is None:
        rcond = rtol if rtol is not None else 1e-15
    if not m or not n:
        return ew.multiply(reshape(a, (*lead, n, m)), 0)
    u, s, vh = svd(a, full_matrices=False)
    cutoff = ew.multiply(expand_dims(asarray(rcond), -1), red.max(s, axis=-1, keepdims=True))
    large = ew.greater(s, cutoff)
    s_inv = ew.where(large, ew.divide(1.0, ew.where(large, s, 1.0)), 0.0)
    return matmul(_mH(vh), ew.multiply(expand_dims(s_inv, -1), _mH(u)))


__all__ = [
    "cholesky", "det", "eigh", "eigvalsh", "inv", "pinv", "qr", "slogdet", "solve", "svd",
    "svdvals",
]  # fmt: skip
