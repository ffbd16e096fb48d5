"""Products (`matmul`, `dot`, `tensordot`, `einsum`, ...) over the one `matmul` primitive.

Every product is brought to the primitive's form `(..., m, k) @ (..., k, n)` with equal
batch dimensions by `transpose`, `reshape` and `broadcast_in_dim`; no new primitive is needed.
Bool products are computed in int64 and compared with zero, as NumPy's logical
`or`-of-`and`s gives the same answer.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitTypeError
from tracejit.numpy._core import broadcast_to, cast, innermost_trace, promote, shape_of
from tracejit.numpy._creation import _filled, offset_mask
from tracejit.tracer.core import bind

_INT64 = np.dtype(np.int64)


# ---------------------------------------------------------------- layout helpers


def _reshape(x, shape):
    shape = tuple(int(d) for d in shape)
    return x if tuple(shape_of(x)) == shape else bind("reshape", x, shape=shape)


def _transpose(x, perm):
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else bind("transpose", x, perm=perm)


def _mm(a, b):
    """The matmul primitive on same-dtype operands of equal batch dims (bool via int64)."""
    if a.dtype == np.bool_:
        prod = bind("matmul", cast(a, _INT64), cast(b, _INT64))
        zero = _filled(shape_of(prod), 0, _INT64, innermost_trace([prod]))
        return bind("ne", prod, zero)
    return bind("matmul", a, b)


def _sum(x, axes):
    """Sum over `axes` keeping the dtype (bool sums are logical or, as in `einsum`)."""
    axes = tuple(sorted(axes))
    if not axes:
        return x
    if x.dtype == np.bool_:
        if any(shape_of(x)[a] == 0 for a in axes):
            shape = tuple(d for i, d in enumerate(shape_of(x)) if i not in axes)
            return _filled(shape, False, np.bool_, innermost_trace([x]))
        return bind("reduce_max", x, axes=axes)
    return bind("reduce_sum", x, axes=axes)


# ---------------------------------------------------------------- matmul


def matmul(a, b):
    """`np.matmul` (`a @ b`): 1-d operands are vectors, leading dims broadcast.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.matmul(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    a, b = promote(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    if not sa or not sb:
        raise ShapeError(
            f"matmul: shapes {sa} and {sb}: operands must have at least one dimension; "
            "use multiply (*) for scalars"
        )
    a2 = _reshape(a, (1, *sa)) if len(sa) == 1 else a
    b2 = _reshape(b, (*sb, 1)) if len(sb) == 1 else b
    (*ba, m, k), (*bb, k2, n) = shape_of(a2), shape_of(b2)
    if k != k2:
        raise ShapeError(
            f"matmul: shapes {sa} and {sb} do not fit: the last axis of the first ({k}) must "
            f"equal the {'only' if len(sb) == 1 else 'second-to-last'} axis of the second "
            f"({k2})"
        )
    batch = _batch_shape(tuple(ba), tuple(bb), sa, sb)
    if not bb and ba:  # (..., m, k) @ (k, n): one 2-d product, no copies of b
        out = _reshape(_mm(_reshape(a2, (math.prod(batch) * m, k)), b2), (*batch, m, n))
    else:
        out = _mm(broadcast_to(a2, (*batch, m, k)), broadcast_to(b2, (*batch, k, n)))
    if len(sa) == 1:
        out = _reshape(out, (*batch, n))
    if len(sb) == 1:
        out = _reshape(out, tuple(shape_of(out))[:-1])
    return out


def _batch_shape(ba, bb, sa, sb) -> tuple[int, ...]:
    ndim = max(len(ba), len(bb))
    pa, pb = (1,) * (ndim - len(ba)) + ba, (1,) * (ndim - len(bb)) + bb
    out = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            raise ShapeError(
                f"matmul: shapes {sa} and {sb} do not fit: batch dimensions {ba} and {bb} "
                "cannot be broadcast together"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def matrix_transpose(x):
    """Array-API `matrix_transpose` (`x.mT`): swap the last two axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.matrix_transpose(np.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    (x,) = promote(x)
    nd = len(shape_of(x))
    if nd < 2:
        raise ShapeError(
            f"matrix_transpose: needs at least 2 dimensions, got shape {tuple(shape_of(x))}"
        )
    return _transpose(x, (*range(nd - 2), nd - 1, nd - 2))


# ---------------------------------------------------------------- tensordot and friends


def tensordot(a, b, axes=2):
    """`np.tensordot`: sum products over `axes` (an int n: last n of a, first n of b).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5)), axes=2).shape
    (2, 5)
    """
    a, b = promote(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    ax_a, ax_b = _tensordot_axes(axes, sa, sb)
    for i, j in zip(ax_a, ax_b):
        if sa[i] != sb[j]:
            raise ShapeError(
                f"tensordot: shapes {sa} and {sb} do not fit: axis {i} of the first has size "
                f"{sa[i]} but axis {j} of the second has size {sb[j]}"
            )
    free_a = [i for i in range(len(sa)) if i not in ax_a]
    free_b = [j for j in range(len(sb)) if j not in ax_b]
    ksize = math.prod(sa[i] for i in ax_a)
    m_shape, n_shape = [sa[i] for i in free_a], [sb[j] for j in free_b]
    a2 = _reshape(_transpose(a, free_a + ax_a), (math.prod(m_shape), ksize))
    b2 = _reshape(_transpose(b, ax_b + free_b), (ksize, math.prod(n_shape)))
    return _reshape(_mm(a2, b2), m_shape + n_shape)


def _tensordot_axes(axes, sa, sb) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(len(sa), len(sb)):
            raise ShapeError(f"tensordot: axes={n} does not fit shapes {sa} and {sb}")
        return list(range(len(sa) - n, len(sa))), list(range(n))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TracejitTypeError(
            "tensordot: axes must be an int or a pair of axis sequences"
        ) from None
    xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
    xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
    if len(xa) != len(xb):
        raise ShapeError(f"tensordot: axes {axes} pair {len(xa)} with {len(xb)} axes")
    return _norm_axes(xa, len(sa), sa), _norm_axes(xb, len(sb), sb)


def _norm_axes(axes, nd, shape) -> list[int]:
    out = []
    for a in axes:
        if not -nd <= a < nd:
            raise ShapeError(f"tensordot: axis {a} is out of bounds for shape {shape} (rank {nd})")
        out.append(int(a) % nd)
    if len(set(out)) != len(out):
        raise ShapeError(f"tensordot: repeated axis in {tuple(axes)}")
    return out


def _multiply(a, b):
    from tracejit.numpy._elementwise import multiply

    return multiply(a, b)


def dot(a, b):
    """`np.dot`: scalars multiply; otherwise contract a's last axis with b's second-to-last.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array(11.)
    """
    a, b = promote(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    if not sa or not sb:
        return _multiply(a, b)
    if len(sb) <= 2:  # matmul agrees with dot here and avoids a transpose of b
        if sa[-1] != sb[0 if len(sb) == 1 else -2]:
            raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned")
        return matmul(a, b)
    return tensordot(a, b, ([len(sa) - 1], [len(sb) - 2]))


def vdot(a, b):
    """`np.vdot`: the dot product of the flattened operands (the first conjugated).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.vdot(np.ones((2, 2)), np.ones(4))
    array(4.)
    """
    a, b = promote(a, b)
    na, nb = math.prod(shape_of(a)), math.prod(shape_of(b))
    if na != nb:
        raise ShapeError(
            f"vdot: shapes {tuple(shape_of(a))} and {tuple(shape_of(b))} have different sizes"
        )
    if a.dtype.kind == "c":
        a = bind("conj", a)  # np.vdot conjugates its first operand
    return tensordot(_reshape(a, (na,)), _reshape(b, (nb,)), 1)


def inner(a, b):
    """`np.inner`: contract the last axes of both operands.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.inner(np.ones((2, 3)), np.ones((4, 3))).shape
    (2, 4)
    """
    a, b = promote(a, b)
    sa, sb = tuple(shape_of(a)), tuple(shape_of(b))
    if not sa or not sb:
        return _multiply(a, b)
    return tensordot(a, b, ([len(sa) - 1], [len(sb) - 1]))


def outer(a, b):
    """`np.outer`: `a.ravel()[:, None] * b.ravel()[None, :]`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.outer(np.array([1, 2]), np.array([1, 10, 100]))
    array([[  1,  10, 100],
           [  2,  20, 200]])
    """
    a, b = promote(a, b)
    na, nb = math.prod(shape_of(a)), math.prod(shape_of(b))
    return _multiply(_reshape(a, (na, 1)), _reshape(b, (1, nb)))


def vecdot(x1, x2, /, *, axis: int = -1):
    """Array-API `vecdot`: `sum(conj(x1) * x2, axis)` with broadcasting; keeps int32 as int32.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.vecdot(np.ones((2, 3)), np.arange(3.0))
    array([3., 3.])
    """
    from tracejit.numpy._core import broadcast_all

    a, b = promote(x1, x2)
    a, b = broadcast_all([a, b], "vecdot")
    nd = len(shape_of(a))
    if not -nd <= axis < nd:
        raise ShapeError(f"vecdot: axis {axis} is out of bounds for shape {tuple(shape_of(a))}")
    if a.dtype.kind == "c":
        a = bind("conj", a)  # the standard's (and NumPy's) conjugated x1
    prod = bind("and" if a.dtype == np.bool_ else "mul", a, b)
    return _sum(prod, (axis % nd,))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """`np.trace`: the sum along a diagonal (int32 and bool sum in int64, as `sum` does).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.trace(np.arange(9).reshape(3, 3))
    array(12)
    """
    from tracejit.numpy._reductions import sum as tsum

    (a,) = promote(a)
    shape = tuple(shape_of(a))
    if len(shape) < 2:
        raise ShapeError(f"trace: needs at least 2 dimensions, got shape {shape}")
    nd = len(shape)
    i, j = _norm_axes([axis1, axis2], nd, shape)
    rest = [d for d in range(nd) if d not in (i, j)]
    moved = _transpose(a, rest + [i, j])
    masked = _mask_diagonal(moved, int(offset))
    return tsum(masked, axis=(nd - 2, nd - 1), dtype=dtype)


def _mask_diagonal(x, offset: int):
    """`x` with everything off its `offset` diagonal (last two axes) replaced by zero."""
    shape = tuple(shape_of(x))
    trace_ = innermost_trace([x])
    mask = broadcast_to(offset_mask(shape[-2], shape[-1], offset, "eq", trace_), shape)
    zero = _filled(shape, 0, x.dtype, trace_)
    return bind("select", mask, x, zero)


__all__ = defined_here(globals())  # noqa: PLE0605
