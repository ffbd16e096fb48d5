"""`tnp.linalg` functions composed from the solver and SVD primitives: lstsq, matrix_rank,
cond, tensorinv, tensorsolve (each differentiable where NumPy's result is smooth).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit.errors import TracejitValueError
from tracejit.numpy._linalg_solvers import LinAlgShapeError, inv, pinv, solve, svd, svdvals


def _tnp():
    from tracejit import numpy as tnp  # deferred: tracejit.numpy imports this module

    return tnp


def lstsq(a, b, rcond=None):
    """`np.linalg.lstsq` through `pinv` (x = pinv(a, rcond) @ b): (x, residuals, rank, s).

    As JAX (`numpy_resid=False`), `residuals` are always the squared residual norms of the
    columns of b (shape (k,), or (1,) for a vector b); NumPy returns them only when rank ==
    n < m and an empty array otherwise (a shape a compiled program cannot depend on).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> x, res, rank, s = tnp.linalg.lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
    ...                                    np.array([1.0, 1.0, 3.0]))
    >>> np.round(x, 6), int(rank)
    (array([1.333333, 1.333333]), 2)
    """
    tnp = _tnp()
    a, b = tnp.asarray(a), tnp.asarray(b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise LinAlgShapeError(
            f"lstsq: needs a (m, n) and b (m,) or (m, k), got {a.shape} and {b.shape}"
        )
    m, n = a.shape
    if rcond is None:
        rcond = np.finfo(np.result_type(a.dtype, np.float32)).eps * max(m, n)
    x = tnp.matmul(pinv(a, rcond), b)
    s = svd(a, full_matrices=False).S  # pinv's own svd step (one step, not a second svdvals)
    rank = tnp.sum(s > rcond * tnp.max(s, initial=0.0)) if s.shape[0] else tnp.asarray(0)
    r = tnp.subtract(b, tnp.matmul(a, x))
    resid = tnp.sum(tnp.real(r * tnp.conj(r)), axis=0)
    return x, tnp.reshape(resid, (1,)) if b.ndim == 1 else resid, rank, s


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None):
    """`np.linalg.matrix_rank`: singular values above tol (default max(s) * max(m, n) * eps).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    tnp = _tnp()
    A = tnp.asarray(A)
    if A.ndim < 2:
        return tnp.astype(tnp.any(A != 0), np.int64)
    s = svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * np.finfo(s.dtype).eps
        cutoff = tnp.max(s, axis=-1, keepdims=True, initial=0.0) * tnp.expand_dims(
            tnp.asarray(rtol), -1
        )
    else:
        cutoff = tnp.expand_dims(tnp.asarray(tol), -1)
    return tnp.sum(s > cutoff, axis=-1)


def cond(x, p=None):
    """`np.linalg.cond`: s_max / s_min for p None, 2 (-2: the inverse), else
    norm(x, p) * norm(inv(x), p); infinite for a singular matrix, as NumPy.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    tnp = _tnp()
    x = tnp.asarray(x)
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return tnp.divide(big, small) if p != -2 else tnp.divide(small, big)
    r = tnp.linalg.norm(x, p, axis=(-2, -1)) * tnp.linalg.norm(inv(x), p, axis=(-2, -1))
    has_nan = tnp.any(tnp.isnan(x), axis=(-2, -1))
    return tnp.where(tnp.isnan(r) & ~has_nan, np.inf, r)


def tensorinv(a, ind: int = 2):
    """`np.linalg.tensorinv`: the inverse of `a` read as a matrix (first `ind` axes: rows)."""
    tnp = _tnp()
    a = tnp.asarray(a)
    if ind <= 0:
        raise TracejitValueError("Invalid ind argument.")
    old = a.shape
    rows = math.prod(old[:ind])
    ia = inv(tnp.reshape(a, (rows, math.prod(old[ind:]))))
    return tnp.reshape(ia, old[ind:] + old[:ind])


def tensorsolve(a, b, axes=None):
    """`np.linalg.tensorsolve`: x with tensordot(a, x, x.ndim) == b.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.tensorsolve(np.eye(4).reshape(2, 2, 4), np.ones((2, 2))).shape
    (4,)
    """
    tnp = _tnp()
    a, b = tnp.asarray(a), tnp.asarray(b)
    if axes is not None:
        axes = [ax % a.ndim for ax in axes]
        rest = [k for k in range(a.ndim) if k not in axes]
        a = tnp.transpose(a, rest + axes)
    old = a.shape[b.ndim - a.ndim :] if a.ndim > b.ndim else ()
    rows, cols = math.prod(b.shape), math.prod(old)
    if rows != cols:
        raise LinAlgShapeError(
            f"tensorsolve: a's leading shape {a.shape} does not make a square matrix"
        )
    return tnp.reshape(solve(tnp.reshape(a, (rows, cols)), tnp.ravel(b)), old)


__all__ = ["cond", "lstsq", "matrix_rank", "tensorinv", "tensorsolve"]
