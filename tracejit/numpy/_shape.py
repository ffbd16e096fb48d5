"""Shape and layout functions of tracejit.numpy: reshape, transpose, concatenate, pad, ...

Each function takes tracers or concrete arrays. On concrete inputs it runs at once through
the primitives' NumPy implementations and returns NumPy arrays; on tracers it records the
primitives (`reshape`, `transpose`, `broadcast_in_dim`, `slice`, `rev`, `concatenate`, `pad`,
`take`, `iota`, `select`). Shapes are static, so every size is a Python int here.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from tracejit.errors import ShapeError, UnsupportedError
from tracejit.ir.primitives import get
from tracejit.numpy._core import (
    _at,
    _static_int,
    asarray,
    broadcast_shapes,
    cast,
    constant,
    innermost_trace,
    normalize_axes,
    normalize_axis,
    promote,
    shape_of,
)
from tracejit.numpy._core import broadcast_to as _broadcast_to
from tracejit.tracer.core import Tracer, bind, user_frame

ArrayLike = object  # Tracer | np.ndarray | scalar | nested sequence


def _ints(seq, what: str) -> tuple[int, ...]:
    if isinstance(seq, (int, np.integer, Tracer)):
        seq = (seq,)
    return tuple(_static_int(s, what) for s in seq)


def _check_order(order, op: str) -> None:
    if order not in ("C", None):
        raise UnsupportedError(f"{op}: only order='C' is supported, got order={order!r}")


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
            f"{shape}: the sizes must match (at most one -1)" + _at()
        )
    return shape


def reshape(a: ArrayLike, /, shape=None, order: str = "C", *, newshape=None, copy=None):
    """`np.reshape` with at most one -1; only order='C'.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.reshape(np.arange(6), (2, -1)).shape
    (2, 3)
    """
    _check_order(order, "reshape")
    shape = newshape if shape is None else shape
    if shape is None:
        raise TypeError("reshape() needs a shape")
    x = asarray(a)
    in_shape = shape_of(x)
    new = _resolve_shape(int(np.prod(in_shape, dtype=np.int64)), in_shape, shape)
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
                f"array of shape {tuple(shape_of(x))}" + _at()
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
            f"{source} and {destination}" + _at()
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
                    f"is {shape[i]}, not 1" + _at()
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
        raise ShapeError(f"cannot broadcast shape {tuple(in_shape)} to {tuple(shape)}" + _at())
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


# ---------------------------------------------------------------- joining and splitting


def concatenate(
    arrays: Sequence[ArrayLike], axis: int | None = 0, out=None, *, dtype=None, casting="same_kind"
):
    """`np.concatenate`; `axis=None` flattens every operand first.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.concatenate([np.ones((2, 3)), np.zeros((1, 3))]).shape
    (3, 3)
    """
    if out is not None:
        raise UnsupportedError("concatenate(..., out=...) writes in place; use the result")
    if isinstance(arrays, Tracer) or not len(arrays):
        if isinstance(arrays, Tracer):
            return concatenate(list(arrays), axis, dtype=dtype)
        raise ValueError("need at least one array to concatenate")
    xs = [asarray(a) for a in arrays]
    xs = promote(*xs) if dtype is None else [cast(x, dtype) for x in xs]
    if axis is None:
        xs, axis = [reshape(x, (-1,)) for x in xs], 0
    if any(len(shape_of(x)) == 0 for x in xs):
        raise ShapeError("zero-dimensional arrays cannot be concatenated" + _at())
    axis = normalize_axis(axis, len(shape_of(xs[0])), "concatenate")
    if len(xs) == 1 and isinstance(xs[0], Tracer):
        return xs[0]
    return bind("concatenate", *xs, axis=axis)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0):
    """Array-API name of `concatenate`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.concat([np.ones(2), np.zeros(1)]).shape
    (3,)
    """
    return concatenate(arrays, axis)


def stack(arrays: Sequence[ArrayLike], axis: int = 0, out=None, *, dtype=None):
    """`np.stack`: join same-shaped arrays along a new axis.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.stack([np.ones(3), np.zeros(3)], axis=1).shape
    (3, 2)
    """
    if out is not None:
        raise UnsupportedError("stack(..., out=...) writes in place; use the result")
    xs = [asarray(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    shapes = {tuple(shape_of(x)) for x in xs}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {shapes}" + _at())
    axis = normalize_axis(axis, len(shape_of(xs[0])) + 1, "stack")
    return concatenate([expand_dims(x, axis) for x in xs], axis, dtype=dtype)


def hstack(tup: Sequence[ArrayLike], *, dtype=None):
    """`np.hstack`: along axis 1, or axis 0 for 1-D operands.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.hstack([np.ones(2), np.zeros(3)]).shape
    (5,)
    """
    xs = [atleast_1d(x) for x in tup]
    return concatenate(xs, 0 if xs and len(shape_of(xs[0])) == 1 else 1, dtype=dtype)


def vstack(tup: Sequence[ArrayLike], *, dtype=None):
    """`np.vstack`: along axis 0 after `atleast_2d`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.vstack([np.ones(3), np.zeros(3)]).shape
    (2, 3)
    """
    return concatenate([atleast_2d(x) for x in tup], 0, dtype=dtype)


def column_stack(tup: Sequence[ArrayLike]):
    """`np.column_stack`: 1-D operands become columns.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.column_stack([np.ones(3), np.zeros(3)]).shape
    (3, 2)
    """
    cols = []
    for a in tup:
        x = asarray(a)
        cols.append(reshape(x, (-1, 1)) if len(shape_of(x)) < 2 else x)
    return concatenate(cols, 1)


def slice_axis(x, axis: int, start: int, stop: int, step: int = 1):
    """`x[..., start:stop:step, ...]` on one axis (bounds already valid, step > 0)."""
    shape = shape_of(x)
    starts = [0] * len(shape)
    stops = list(shape)
    steps = [1] * len(shape)
    starts[axis], stops[axis], steps[axis] = start, stop, step
    return bind("slice", x, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps))


def _split_at(x, axis: int, points: Sequence[int]) -> list:
    n = shape_of(x)[axis]
    bounds = [0, *points, n]
    out = []
    for lo, hi in pairwise(bounds):
        lo, hi, _ = slice(lo, hi).indices(n)
        out.append(slice_axis(x, axis, lo, max(lo, hi)))
    return out


def array_split(ary: ArrayLike, indices_or_sections, axis: int = 0) -> list:
    """`np.array_split`: like `split`, but sections may differ in size by one.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.array_split(np.ones(5), 2)]
    [(3,), (2,)]
    """
    x = asarray(ary)
    axis = normalize_axis(axis, len(shape_of(x)), "array_split")
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(shape_of(x)[axis], sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        return _split_at(x, axis, list(np.cumsum(sizes[:-1], dtype=np.int64)))
    return _split_at(x, axis, _ints(indices_or_sections, "a split point"))


def split(ary: ArrayLike, indices_or_sections, axis: int = 0) -> list:
    """`np.split`: equal sections (an int) or pieces between the given indices.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.split(np.ones((4, 2)), [1, 3])]
    [(1, 2), (2, 2), (1, 2)]
    """
    x = asarray(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        n = shape_of(x)[normalize_axis(axis, len(shape_of(x)), "split")]
        if indices_or_sections <= 0 or n % int(indices_or_sections):
            raise ShapeError(
                f"split: an axis of size {n} does not divide into {indices_or_sections} equal "
                "sections; use array_split for unequal ones" + _at()
            )
    return array_split(x, indices_or_sections, axis)


# ---------------------------------------------------------------- reordering and padding


def flip(m: ArrayLike, axis=None):
    """`np.flip` (the `rev` primitive); `axis=None` flips every axis.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.flip(np.arange(3))
    array([2, 1, 0])
    """
    x = asarray(m)
    axes = None if axis is None else _ints(axis, "an axis")
    axes = normalize_axes(axes, len(shape_of(x)), "flip")
    if not axes and isinstance(x, Tracer):
        return x
    return bind("rev", x, axes=axes)


def roll(a: ArrayLike, shift, axis=None):
    """`np.roll`: elements shifted off one end come back at the other.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.roll(np.arange(4), 1)
    array([3, 0, 1, 2])
    """
    x = asarray(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), shape_of(x))
    shifts = np.asarray(_ints(shift, "a shift"))
    shifts, axes = np.broadcast_arrays(shifts, np.asarray(_ints(axis, "an axis")))
    total: dict[int, int] = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis(int(ax), len(shape_of(x)), "roll")
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = shape_of(x)[ax]
        s = s % n if n else 0
        if s:
            x = concatenate([slice_axis(x, ax, n - s, n), slice_axis(x, ax, 0, n - s)], ax)
    return x


def _pad_widths(pad_width, ndim: int) -> tuple[tuple[int, int], ...]:
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    try:
        widths = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ShapeError(
            f"pad: pad_width {pad_width!r} does not fit an array of rank {ndim}; give an int, "
            "a (before, after) pair or one pair per axis" + _at()
        ) from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width can't contain negative values, got {pad_width!r}")
    return tuple((int(lo), int(hi)) for lo, hi in widths)


def pad(array: ArrayLike, pad_width, mode: str = "constant", **kwargs):
    """`np.pad` with mode="constant" and a scalar `constant_values` (default 0).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.pad(np.ones(2), (1, 2))
    array([0., 1., 1., 0., 0.])
    """
    if mode != "constant":
        raise UnsupportedError(f"pad: only mode='constant' is supported, got mode={mode!r}")
    value = kwargs.pop("constant_values", 0)
    if kwargs:
        raise TypeError(f"pad: unexpected arguments {sorted(kwargs)}")
    x = asarray(array)
    shape = tuple(shape_of(x))
    widths = _pad_widths(pad_width, len(shape))
    if not shape:
        return x  # a 0-d array has no axis to pad
    if isinstance(value, Tracer):
        if value.shape != ():
            raise UnsupportedError("pad: constant_values must be a scalar" + _at())
        padval = cast(value, x.dtype)
    else:
        if np.ndim(value) != 0:
            raise UnsupportedError(
                "pad: constant_values must be a scalar; per-axis values are not supported"
            )
        padval = constant(value, x.dtype, False, innermost_trace([x]))
    return bind("pad", x, padval, widths=widths)


# ---------------------------------------------------------------- repetition


def tile(A: ArrayLike, reps):
    """`np.tile`: repeat the whole array `reps` times along each axis.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.tile(np.arange(2), (2, 2))
    array([[0, 1, 0, 1],
           [0, 1, 0, 1]])
    """
    x = asarray(A)
    reps = _ints(reps, "a repetition count")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetition count in {reps}")
    shape = tuple(shape_of(x))
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + reps
    interleaved = tuple(d for s, r in zip(shape, reps) for d in (r, s))
    x = reshape(x, shape)
    x = bind("broadcast_in_dim", x, shape=interleaved, dims=tuple(range(1, 2 * n, 2)))
    return reshape(x, tuple(s * r for s, r in zip(shape, reps)))


def repeat(a: ArrayLike, repeats, axis: int | None = None):
    """`np.repeat` with an int or a static sequence of counts; `axis=None` flattens.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.repeat(np.arange(3), [1, 0, 2])
    array([0, 2, 2])
    """
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    shape = tuple(shape_of(x))
    axis = normalize_axis(axis, len(shape), "repeat")
    counts = np.asarray(repeats)  # a traced count raises ConcretizationError here
    if counts.size == 0:
        counts = counts.astype(np.int64)  # [] is an empty list of counts
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise TypeError(f"repeat: repeats must be an int or a 1-D sequence of ints: {repeats!r}")
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not contain negative values")
    if counts.size == 1:
        r = int(counts.reshape(()))
        expanded = shape[: axis + 1] + (r,) + shape[axis + 1 :]
        dims = tuple(i for i in range(len(expanded)) if i != axis + 1)
        x = bind("broadcast_in_dim", x, shape=expanded, dims=dims)
        return reshape(x, shape[:axis] + (shape[axis] * r,) + shape[axis + 1 :])
    if counts.size != shape[axis]:
        raise ShapeError(
            f"repeat: {counts.size} repeat counts for an axis of size {shape[axis]}" + _at()
        )
    return bind("take", x, np.repeat(np.arange(shape[axis]), counts), axis=axis)


# ---------------------------------------------------------------- triangles and diagonals


def _iota(shape: tuple[int, ...], axis: int, trace):
    attrs = {"shape": shape, "dtype": np.dtype(np.int64), "axis": axis}
    if trace is None:
        return bind("iota", **attrs)
    (v,) = trace.record(get("iota"), [], attrs, user_frame())
    return Tracer(trace, v, None)


def _triangle(m: ArrayLike, k: int, lower: bool, op: str):
    from tracejit.numpy._elementwise import add, greater_equal, less_equal, where

    x = asarray(m)
    shape = tuple(shape_of(x))
    if not shape:
        raise ShapeError(f"{op}: needs an array of rank >= 1, got a 0-d array" + _at())
    rows, cols = shape[-2:] if len(shape) >= 2 else (shape[0], shape[0])
    trace = innermost_trace([x])
    row = _iota((rows, cols), 0, trace)
    col = _iota((rows, cols), 1, trace)
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
        raise ShapeError(f"diagonal needs an array of rank >= 2, got shape {shape}" + _at())
    i = normalize_axis(axis1, len(shape), "diagonal")
    j = normalize_axis(axis2, len(shape), "diagonal")
    if i == j:
        raise ShapeError("diagonal: axis1 and axis2 cannot be the same" + _at())
    x = moveaxis(x, (i, j), (-2, -1))
    rows, cols = shape[i], shape[j]
    offset = _static_int(offset, "the diagonal offset")
    first_row, first_col = max(-offset, 0), max(offset, 0)
    length = max(0, min(rows - first_row, cols - first_col))
    flat = np.arange(length, dtype=np.int64)
    flat = (flat + first_row) * cols + flat + first_col
    x = reshape(x, shape_of(x)[:-2] + (rows * cols,))
    return bind("take", x, flat, axis=len(shape) - 2)


__all__ = [
    n
    for n, v in list(globals().items())
    if callable(v) and getattr(v, "__module__", None) == __name__ and not n.startswith("_")
]
__all__.remove("slice_axis")
