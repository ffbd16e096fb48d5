"""Shape and layout functions of tracejit.numpy: reshape, transpose, broadcast_to, tril, ...

Each function takes tracers or concrete arrays. On concrete inputs it runs at once through
the primitives' NumPy implementations and returns NumPy arrays; on tracers it records the
primitives (`reshape`, `transpose`, `broadcast_in_dim`, `take`, `iota`, `select`). Shapes are
static, so every size is a Python int here. Joining, splitting and padding live in `_join.py`.
"""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitTypeError, TracejitValueError
from tracejit.numpy._core import (
    _static_int,
    asarray,
    broadcast_shapes,
    constant,
    innermost_trace,
    normalize_axes,
    normalize_axis,
    shape_of,
)
from tracejit.numpy._core import _static_ints as _ints
from tracejit.numpy._core import broadcast_to as _broadcast_to
from tracejit.numpy._creation import iota
from tracejit.numpy._elementwise import add, greater_equal, less_equal, where
from tracejit.tracer.core import Tracer, bind, user_frame

ArrayLike = object  # Tracer | np.ndarray | scalar | nested sequence


def _check_order(order, op: str) -> None:
    if order not in ("C", "F", "A", None):
        raise TracejitValueError(f"{op}: order must be one of 'C', 'F' or 'A', got order={order!r}")


# ---------------------------------------------------------------- reshape family


def _resolve_shape(size: int, in_shape, shape) -> tuple[int, ...]:
    shape = _ints(shape, "a shape")
    unknown = [i for i, d in enumerate(shape) if d == -1]
    bad = len(unknown) > 1 or any(d < -1 for d in shape)
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if unknown and not bad:
        if known == 0 or size % known:
            bad = True
        else:
            shape = shape[: unknown[0]] + (size // known,) + shape[unknown[0] + 1 :]
    if bad or int(np.prod(shape, dtype=np.int64)) != size:
        raise ShapeError(
            f"cannot reshape an array of shape {tuple(in_shape)} (size {size}) into shape "
            f"{shape}: the sizes must match (at most one -1)"
        )
    return shape


def reshape(a: ArrayLike, /, shape=None, order: str = "C", *, newshape=None, copy=None):
    """`np.reshape` with at most one -1; order='F' reads and writes in column-major order.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.reshape(np.arange(6), (2, -1)).shape
    (2, 3)
    >>> tnp.reshape(np.arange(6), (2, 3), order="F")
    array([[0, 2, 4],
           [1, 3, 5]])
    """
    _check_order(order, "reshape")
    shape = newshape if shape is None else shape
    if shape is None:
        raise TracejitTypeError("reshape() needs a shape")
    x = asarray(a)
    in_shape = shape_of(x)
    new = _resolve_shape(int(np.prod(in_shape, dtype=np.int64)), in_shape, shape)
    if order == "F":  # column-major: reverse the axes, reshape in C order, reverse back
        flipped = bind("reshape", transpose(x), shape=tuple(reversed(new)))
        return transpose(flipped)
    if new == tuple(in_shape) and isinstance(x, Tracer):
        return x
    return bind("reshape", x, shape=new)


def ravel(a: ArrayLike, order: str = "C"):
    """`np.ravel`: the array flattened in C order.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.ravel(np.ones((2, 3))).shape
    (6,)
    """
    return reshape(a, (-1,), order=order)


def transpose(a: ArrayLike, axes=None):
    """`np.transpose`; `axes=None` reverses the axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.transpose(np.ones((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    x = asarray(a)
    ndim = len(shape_of(x))
    if axes is None:
        perm = tuple(reversed(range(ndim)))
    else:
        perm = tuple(normalize_axis(p, ndim, "transpose") for p in _ints(axes, "an axis"))
        if sorted(perm) != list(range(ndim)):
            raise ShapeError(
                f"transpose: axes {tuple(axes)} are not a permutation of the {ndim} axes of an "
                f"array of shape {tuple(shape_of(x))}"
            )
    if perm == tuple(range(ndim)) and isinstance(x, Tracer):
        return x
    return bind("transpose", x, perm=perm)


def permute_dims(a: ArrayLike, axes=None):
    """Array-API name of `transpose`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.permute_dims(np.ones((2, 3)), (1, 0)).shape
    (3, 2)
    """
    return transpose(a, axes)


def swapaxes(a: ArrayLike, axis1: int, axis2: int):
    """`np.swapaxes`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.swapaxes(np.ones((2, 3, 4)), 0, -1).shape
    (4, 3, 2)
    """
    x = asarray(a)
    ndim = len(shape_of(x))
    i, j = normalize_axis(axis1, ndim, "swapaxes"), normalize_axis(axis2, ndim, "swapaxes")
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return transpose(x, perm)


def moveaxis(a: ArrayLike, source, destination):
    """`np.moveaxis` for an int or a sequence of axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.moveaxis(np.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = asarray(a)
    ndim = len(shape_of(x))
    src = [normalize_axis(s, ndim, "moveaxis") for s in _ints(source, "an axis")]
    dst = [normalize_axis(d, ndim, "moveaxis") for d in _ints(destination, "an axis")]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(
            "moveaxis: `source` and `destination` must be distinct axes of equal count, got "
            f"{source} and {destination}"
        )
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(a: ArrayLike, axis):
    """`np.expand_dims`: insert size-1 axes at the positions `axis` (int or tuple).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.expand_dims(np.ones((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    x = asarray(a)
    shape = tuple(shape_of(x))
    axes = _ints(axis, "an axis")
    new_axes = normalize_axes(axes, len(shape) + len(axes), "expand_dims")
    it = iter(shape)
    out = tuple(1 if i in new_axes else next(it) for i in range(len(shape) + len(axes)))
    return bind("reshape", x, shape=out)


def squeeze(a: ArrayLike, axis=None):
    """`np.squeeze`; squeezing an axis whose size is not 1 raises ShapeError.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.squeeze(np.ones((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    x = asarray(a)
    shape = tuple(shape_of(x))
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = normalize_axes(_ints(axis, "an axis"), len(shape), "squeeze")
        for i in axes:
            if shape[i] != 1:
                raise ShapeError(
                    f"squeeze: cannot select axis {i} of an array of shape {shape}: its size "
                    f"is {shape[i]}, not 1"
                )
    if not axes and isinstance(x, Tracer):
        return x
    return bind("reshape", x, shape=tuple(d for i, d in enumerate(shape) if i not in axes))


def broadcast_to(array: ArrayLike, shape):
    """`np.broadcast_to`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.broadcast_to(np.arange(3), (2, 3)).shape
    (2, 3)
    """
    x = asarray(array)
    if isinstance(x, Tracer):
        return _broadcast_to(x, _ints(shape, "a shape"))
    return bind("broadcast_in_dim", x, **_broadcast_attrs(x.shape, _ints(shape, "a shape")))


def _broadcast_attrs(in_shape, shape) -> dict:
    if len(in_shape) > len(shape) or any(
        s not in (1, d) for s, d in zip(reversed(in_shape), reversed(shape))
    ):
        raise ShapeError(f"cannot broadcast shape {tuple(in_shape)} to {tuple(shape)}")
    return {"shape": tuple(shape), "dims": tuple(range(len(shape) - len(in_shape), len(shape)))}


def broadcast_arrays(*args: ArrayLike) -> tuple:
    """`np.broadcast_arrays` (a tuple, as in NumPy 2).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [x.shape for x in tnp.broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    xs = [asarray(a) for a in args]
    shape = broadcast_shapes(*[shape_of(x) for x in xs], op="broadcast_arrays")
    return tuple(broadcast_to(x, shape) for x in xs)


def _atleast(ndim: int, arys):
    out = []
    for a in arys:
        x = asarray(a)
        shape = tuple(shape_of(x))
        if len(shape) < ndim:
            if ndim == 3 and len(shape) == 2:
                x = reshape(x, shape + (1,))
            elif ndim == 3 and len(shape) == 1:
                x = reshape(x, (1,) + shape + (1,))
            else:
                x = reshape(x, (1,) * (ndim - len(shape)) + shape)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: ArrayLike):
    """`np.atleast_1d`.

    >>> import tracejit.numpy as tnp
    >>> tnp.atleast_1d(3.0).shape
    (1,)
    """
    return _atleast(1, arys)


def atleast_2d(*arys: ArrayLike):
    """`np.atleast_2d`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.atleast_2d(np.ones(3)).shape
    (1, 3)
    """
    return _atleast(2, arys)


def atleast_3d(*arys: ArrayLike):
    """`np.atleast_3d`: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.atleast_3d(np.ones((2, 3))).shape
    (2, 3, 1)
    """
    return _atleast(3, arys)


# ---------------------------------------------------------------- triangles and diagonals


def _triangle(m: ArrayLike, k: int, lower: bool, op: str):
    x = asarray(m)
    shape = tuple(shape_of(x))
    if not shape:
        raise ShapeError(f"{op}: needs an array of rank >= 1, got a 0-d array")
    rows, cols = shape[-2:] if len(shape) >= 2 else (shape[0], shape[0])
    trace = innermost_trace([x])
    row = iota((rows, cols), np.int64, 0, trace, user_frame())
    col = iota((rows, cols), np.int64, 1, trace, user_frame())
    k = _static_int(k, "the diagonal offset k")
    # tril keeps col - row <= k; triu keeps col - row >= k
    keep = (less_equal if lower else greater_equal)(col, add(row, k) if k else row)
    weak = x.weak if isinstance(x, Tracer) else False
    return where(keep, x, constant(0, x.dtype, weak, trace))


def tril(m: ArrayLike, k: int = 0):
    """`np.tril`: zero the elements above the k-th diagonal of the last two axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.tril(np.ones((2, 2)))
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle(m, k, True, "tril")


def triu(m: ArrayLike, k: int = 0):
    """`np.triu`: zero the elements below the k-th diagonal of the last two axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.triu(np.ones((2, 2)))
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle(m, k, False, "triu")


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """`np.diagonal`: the diagonal of axes (axis1, axis2) becomes the last axis.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.diagonal(np.arange(9).reshape(3, 3), 1)
    array([1, 5])
    """
    x = asarray(a)
    shape = tuple(shape_of(x))
    if len(shape) < 2:
        raise ShapeError(f"diagonal needs an array of rank >= 2, got shape {shape}")
    i = normalize_axis(axis1, len(shape), "diagonal")
    j = normalize_axis(axis2, len(shape), "diagonal")
    if i == j:
        raise ShapeError("diagonal: axis1 and axis2 cannot be the same")
    x = moveaxis(x, (i, j), (-2, -1))
    rows, cols = shape[i], shape[j]
    offset = _static_int(offset, "the diagonal offset")
    first_row, first_col = max(-offset, 0), max(offset, 0)
    length = max(0, min(rows - first_row, cols - first_col))
    flat = np.arange(length, dtype=np.int64)
    flat = (flat + first_row) * cols + flat + first_col
    x = reshape(x, shape_of(x)[:-2] + (rows * cols,))
    return bind("take", x, flat, axis=len(shape) - 2)


__all__ = defined_here(globals())  # noqa: PLE0605
