"""`stop_gradient`, `dynamic_slice` and `dynamic_update_slice` with `jax.lax`'s semantics.

Start indices may be Python ints or traced integer scalars (or one traced 1-D array). As in
JAX, each start is clamped so that the slice fits: into [0, dim - size]. A concrete start
becomes a static `slice`; a traced one a `take` along its axis (gradients through `take_add`).

>>> import numpy as np, tracejit as tj
>>> from tracejit import lax
>>> x = np.arange(6.0)
>>> tj.jit(lambda i: lax.dynamic_slice(x, (i,), (3,)))(np.int64(5))
array([3., 4., 5.])
>>> lax.dynamic_update_slice(np.zeros(4), np.ones(2), (-1,))
array([1., 1., 0., 0.])
"""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import ShapeError, TracejitTypeError
from tracejit.pytree import tree_map
from tracejit.tracer.core import Tracer


def stop_gradient(x):
    """The value of `x` (any pytree of arrays) with zero gradient (`jax.lax.stop_gradient`).

    >>> import numpy as np, tracejit as tj
    >>> tj.grad(lambda x: x * tj.lax.stop_gradient(x))(np.float64(3.0))
    array(3.)
    """
    return tree_map(tnp.stop_gradient, x)


def _starts(start_indices, nd: int, name: str) -> list:
    """One start per axis: Python ints, or traced int64 scalars."""
    if isinstance(start_indices, Tracer) or (
        isinstance(start_indices, np.ndarray) and start_indices.ndim == 1
    ):
        starts = [start_indices[i] for i in range(tnp.shape(start_indices)[0])]
    elif isinstance(start_indices, (tuple, list)):
        starts = list(start_indices)
    else:
        raise TracejitTypeError(
            f"{name}: start_indices must be a tuple of scalars (one per axis) or a 1-D array, "
            f"got {type(start_indices).__name__}"
        )
    if len(starts) != nd:
        raise ShapeError(f"{name}: {len(starts)} start indices for an operand of rank {nd}")
    out = []
    for s in starts:
        if isinstance(s, Tracer):
            if s.dtype.kind not in "iu" or tnp.ndim(s) != 0:
                raise TracejitTypeError(
                    f"{name}: each start index must be an integer scalar, got {s.dtype}"
                    f"{tuple(s.shape)}"
                )
            out.append(tnp.astype(s, np.int64))
        elif np.ndim(s) == 0 and np.asarray(s).dtype.kind in "iu":
            out.append(int(s))
        else:
            raise TracejitTypeError(
                f"{name}: each start index must be an integer scalar, got {s!r}"
            )
    return out


def _clamped(start, dim: int, size: int):
    """`start` clamped into [0, dim - size] (a Python int or a traced int64 scalar)."""
    if isinstance(start, int):
        return min(max(start, 0), dim - size)
    return tnp.clip(start, 0, dim - size)


def _check_sizes(name: str, shape, sizes) -> None:
    if len(sizes) != len(shape) or any(not 0 <= s <= d for s, d in zip(sizes, shape)):
        raise ShapeError(
            f"{name}: slice sizes {tuple(sizes)} do not fit in an operand of shape {tuple(shape)}"
        )


def dynamic_slice(operand, start_indices, slice_sizes):
    """`operand[start : start + size]` on every axis, starts clamped so the slice fits.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.dynamic_slice(np.arange(12).reshape(3, 4), (1, 3), (2, 2))
    array([[ 6,  7],
           [10, 11]])
    """
    x = tnp.asarray(operand)
    shape = tnp.shape(x)
    sizes = tuple(int(s) for s in slice_sizes)
    _check_sizes("dynamic_slice", shape, sizes)
    starts = _starts(start_indices, len(shape), "dynamic_slice")
    static = []
    for axis, (s, size, dim) in enumerate(zip(starts, sizes, shape)):
        s = _clamped(s, dim, size)
        if isinstance(s, int):
            static.append(slice(s, s + size))
        else:
            static.append(slice(None))
            x = tnp.take(x, tnp.add(s, tnp.arange(size, dtype=np.int64)), axis=axis)
    return x[tuple(static)]


def dynamic_update_slice(operand, update, start_indices):
    """`operand` with the block at `start_indices` replaced by `update` (cast to operand's
    dtype), starts clamped so the block fits.

    >>> import numpy as np
    >>> from tracejit import lax
    >>> lax.dynamic_update_slice(np.zeros((2, 3), np.int64), np.ones((1, 2), np.int64), (1, 5))
    array([[0, 0, 0],
           [0, 1, 1]])
    """
    x = tnp.asarray(operand)
    upd = tnp.asarray(update)
    shape, ushape = tnp.shape(x), tnp.shape(upd)
    if len(ushape) != len(shape):
        raise ShapeError(
            f"dynamic_update_slice: update of rank {len(ushape)} for an operand of rank "
            f"{len(shape)}"
        )
    _check_sizes("dynamic_update_slice", shape, ushape)
    starts = _starts(start_indices, len(shape), "dynamic_update_slice")
    starts = [_clamped(s, d, u) for s, d, u in zip(starts, shape, ushape)]
    if all(isinstance(s, int) for s in starts):
        index = tuple(slice(s, s + u) for s, u in zip(starts, ushape))
    else:
        nd = len(shape)
        index = tuple(
            tnp.reshape(
                tnp.add(s, tnp.arange(u, dtype=np.int64)),
                tuple(u if a == axis else 1 for a in range(nd)),
            )
            for axis, (s, u) in enumerate(zip(starts, ushape))
        )
    return x.at[index].set(tnp.astype(upd, x.dtype))


__all__ = ["dynamic_slice", "dynamic_update_slice", "stop_gradient"]
