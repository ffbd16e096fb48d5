"""`top_k`: the k largest entries along the last axis, as `jax.lax.top_k`.

The stable ascending `argsort` of the reversed operand, read backwards, orders the entries
largest first with equal ones in index order (the lower index first, as JAX's), and NaN
first (sort puts NaN last). As in JAX, 0.0 counts as larger than -0.0: a stable sort that
puts each -0.0 first goes before. Values are gathered with `take_along_axis`, so they carry the
operand's gradient; indices are int32, as JAX's.

>>> import numpy as np
>>> values, indices = top_k(np.array([1.0, 3.0, 2.0, 3.0]), 2)
>>> values.tolist(), indices.tolist()
([3.0, 3.0], [1, 3])
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit.errors import ShapeError, TracejitTypeError


def top_k(operand, k: int):
    """(values, indices) of the `k` largest entries of `operand` along its last axis."""
    import tracejit.numpy as tnp

    x = tnp.asarray(operand)
    try:
        k = operator.index(k)
    except TypeError:
        raise TracejitTypeError(f"top_k: k must be a static int, got {type(k).__name__}") from None
    if x.ndim == 0:
        raise ShapeError("top_k: the operand needs at least one axis, got a scalar")
    n = x.shape[-1]
    if not 0 <= k <= n:
        raise ShapeError(f"top_k: k = {k} outside 0..{n}, the last axis of shape {x.shape}")
    order = _ascending(tnp.flip(x, axis=-1))
    indices = (n - 1) - tnp.flip(order, axis=-1)[..., :k]
    return tnp.take_along_axis(x, indices, axis=-1), tnp.astype(indices, np.int32)


def _ascending(y):
    """The stable ascending order of `y` along its last axis, -0.0 before 0.0."""
    import tracejit.numpy as tnp

    if not tnp.issubdtype(y.dtype, np.floating):
        return tnp.argsort(y, axis=-1, kind="stable")
    negative_zero = tnp.logical_and(y == 0, tnp.signbit(y))
    first = tnp.argsort(tnp.where(negative_zero, 0, 1), axis=-1, kind="stable")
    then = tnp.argsort(tnp.take_along_axis(y, first, axis=-1), axis=-1, kind="stable")
    return tnp.take_along_axis(first, then, axis=-1)


__all__ = ["top_k"]
