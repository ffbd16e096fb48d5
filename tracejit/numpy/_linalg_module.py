"""`tracejit.numpy.linalg`: the part of `np.linalg` built from products and reductions.

The solvers and decompositions (solve, inv, cholesky, det, slogdet, eigh, svd, pinv) live in
`_linalg_solvers.py`; `norm` covers every vector `ord` and every matrix one ('fro', 'nuc',
+-1, +-2, +-inf; 'nuc' and +-2 from the singular values).
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as np

from tracejit.errors import TracejitValueError, UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _linalg_eig as _eig
from tracejit.numpy import _linalg_more as _more
from tracejit.numpy import _linalg_solvers as _solvers
from tracejit.numpy import _reductions as red
from tracejit.numpy._core import normalize_axis, promote, shape_of
from tracejit.numpy._linalg import matmul, matrix_transpose, outer, tensordot, trace, vecdot
from tracejit.numpy._manip import cross as _cross
from tracejit.numpy._shape import diagonal as _diagonal
from tracejit.numpy._shape import expand_dims, moveaxis, reshape
from tracejit.numpy._variance import _abs_squared


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """Array-API `vector_norm`: the p-norm over `axis` (all axes when None), any real `ord`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.linalg.vector_norm(np.array([3.0, -4.0]), ord=1))
    7.0
    """
    (x,) = promote(x, to_float=True)
    a = ew.absolute(x)
    if ord == np.inf:
        return red.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=a.dtype)
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return ew.sqrt(red.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    p = float(ord)
    return ew.power(red.sum(ew.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """Array-API `matrix_norm` over the last two axes: 'fro', 1, -1, inf, -inf.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.linalg.matrix_norm(np.array([[1.0, -2.0], [3.0, 4.0]]), ord=1))
    6.0
    """
    return _matrix_norm(x, (-2, -1), keepdims, ord)


def _empty_max(a, axis: int, ord) -> dict:
    """NumPy's matrix norms 2, 1 and inf take their max with initial 0 (an empty matrix's norm
    is 0); -2, -1 and -inf take a plain min (empty raises)."""
    return {"initial": 0.0} if ord in (2, 1, np.inf) and shape_of(a)[axis] == 0 else {}


def _matrix_norm(x, axes, keepdims, ord):
    (x,) = promote(x, to_float=True)
    nd = len(shape_of(x))
    r, c = (normalize_axis(a, nd, "norm") for a in axes)
    if r == c:
        raise TracejitValueError("Duplicate axes given.")
    a = ew.absolute(x)
    if ord in ("fro", None):
        return ew.sqrt(red.sum(_abs_squared(x), axis=(r, c), keepdims=keepdims))
    if ord in (2, -2, "nuc"):  # from the singular values of the (r, c) matrices
        sv = _solvers.svdvals(moveaxis(x, (r, c), (-2, -1)))
        out = (
            red.sum(sv, axis=-1)
            if ord == "nuc"
            else (red.max if ord == 2 else red.min)(sv, axis=-1, **_empty_max(sv, -1, ord))
        )
        return expand_dims(out, (r, c) if r < c else (c, r)) if keepdims else out
    if ord in (1, -1):  # max/min over columns of the column sums
        sums, other = red.sum(a, axis=r, keepdims=True), c
    elif ord in (np.inf, -np.inf):
        sums, other = red.sum(a, axis=c, keepdims=True), r
    else:
        raise UnsupportedError(
            f"linalg.norm: invalid norm order {ord!r} for matrices; use 'fro', 'nuc', 1, -1, "
            "2, -2, inf or -inf"
        )
    pick = red.max if ord in (1, np.inf) else red.min
    out = pick(sums, axis=other, keepdims=True, **_empty_max(sums, other, ord))
    if keepdims:
        return out
    return reshape(out, tuple(d for i, d in enumerate(shape_of(out)) if i not in (r, c)))


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """`np.linalg.norm`: vector p-norms (any ord) and matrix norms 'fro', 1, -1, inf, -inf.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.linalg.norm(np.array([3.0, 4.0])))
    5.0
    """
    (x,) = promote(x, to_float=True)
    nd = len(shape_of(x))
    if axis is None and ord is None:
        return ew.sqrt(red.sum(_abs_squared(x), axis=None, keepdims=keepdims))
    if axis is None:
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return _matrix_norm(x, axes, keepdims, ord)
    raise TracejitValueError("Improper number of dimensions to norm.")


def multi_dot(arrays):
    """`np.linalg.multi_dot`: the chained product (1-D ends are vectors), left to right.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.multi_dot([np.ones(2), np.ones((2, 3)), np.ones(3)])
    array(6.)
    """
    return functools.reduce(matmul, arrays)


def matrix_power(a, n: int):
    """`np.linalg.matrix_power` by repeated squaring (of `inv(a)` for negative n).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)
    array([[1, 3],
           [0, 1]])
    """
    n = int(n)
    (a,) = promote(a, to_float=n < 0)
    shape = tuple(shape_of(a))
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("matrix_power needs square matrices in the last two axes")
    if n < 0:
        a, n = _solvers.inv(a), -n
    from tracejit.numpy._creation import eye

    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    if result is None:
        return ew.add(ew.multiply(a, 0), eye(shape[-1], dtype=a.dtype))
    return result


def diagonal(x, /, *, offset: int = 0):
    """Array-API `linalg.diagonal`: the diagonal of the last two axes."""
    return _diagonal(x, offset, -2, -1)


def cross(x1, x2, /, *, axis: int = -1):
    """Array-API `linalg.cross` of 3-vectors along `axis`."""
    return _cross(x1, x2, axis=axis)


linalg = types.ModuleType("tracejit.numpy.linalg", __doc__)
for _fn in (norm, vector_norm, matrix_norm, multi_dot, matrix_power, diagonal, cross, matmul,
            matrix_transpose, tensordot, vecdot, outer, trace):  # fmt: skip
    setattr(linalg, _fn.__name__, _fn)
for _mod in (_solvers, _more, _eig):
    for _name in _mod.__all__:
        setattr(linalg, _name, getattr(_mod, _name))
linalg.LinAlgError = np.linalg.LinAlgError
linalg.__all__ = sorted(n for n in vars(linalg) if not n.startswith("_"))
sys.modules.setdefault(linalg.__name__, linalg)

__all__ = ["linalg"]
