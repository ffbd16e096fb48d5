"""Joining, splitting and repeating in tracejit.numpy: concatenate, stack, split, pad, tile, ...

Like the layout functions in `_shape.py`, each function takes tracers or concrete arrays: on
concrete inputs it runs at once through the primitives' NumPy implementations, on tracers it
records the primitives (`concatenate`, `slice`, `rev`, `pad`, `broadcast_in_dim`, `take`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitTypeError, TracejitValueError, UnsupportedError
from tracejit.numpy._core import _static_ints as _ints
from tracejit.numpy._core import (
    asarray,
    cast,
    constant,
    innermost_trace,
    normalize_axes,
    normalize_axis,
    promote,
    shape_of,
)
from tracejit.numpy._shape import atleast_1d, atleast_2d, expand_dims, ravel, reshape
from tracejit.tracer.core import Tracer, bind

ArrayLike = object  # Tracer | np.ndarray | scalar | nested sequence


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
        raise TracejitValueError("need at least one array to concatenate")
    xs = [asarray(a) for a in arrays]
    xs = promote(*xs) if dtype is None else [cast(x, dtype) for x in xs]
    if axis is None:
        xs, axis = [reshape(x, (-1,)) for x in xs], 0
    if any(len(shape_of(x)) == 0 for x in xs):
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
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
        raise TracejitValueError("need at least one array to stack")
    shapes = {tuple(shape_of(x)) for x in xs}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {shapes}")
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
            raise TracejitValueError("number sections must be larger than 0.")
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
                "sections; use array_split for unequal ones"
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
    if type(shift) is int and type(axis) is int:  # one shift along one axis: no broadcasting
        total = {normalize_axis(axis, len(shape_of(x)), "roll"): shift}
    else:
        total = _roll_shifts(x, shift, axis)
    for ax, s in total.items():
        n = shape_of(x)[ax]
        s = s % n if n else 0
        if s:
            x = concatenate([slice_axis(x, ax, n - s, n), slice_axis(x, ax, 0, n - s)], ax)
    return x


def _roll_shifts(x, shift, axis) -> dict[int, int]:
    """{axis: total shift} of `roll(x, shift, axis)` (shifts and axes broadcast together)."""
    shifts = np.asarray(_ints(shift, "a shift"))
    shifts, axes = np.broadcast_arrays(shifts, np.asarray(_ints(axis, "an axis")))
    total: dict[int, int] = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis(int(ax), len(shape_of(x)), "roll")
        total[ax] = total.get(ax, 0) + int(s)
    return total


def _pad_widths(pad_width, ndim: int) -> tuple[tuple[int, int], ...]:
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TracejitTypeError("`pad_width` must be of integral type.")
    try:
        widths = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ShapeError(
            f"pad: pad_width {pad_width!r} does not fit an array of rank {ndim}; give an int, "
            "a (before, after) pair or one pair per axis"
        ) from None
    if (widths < 0).any():
        raise TracejitValueError(f"pad: pad_width can't contain negative values, got {pad_width!r}")
    return tuple((int(lo), int(hi)) for lo, hi in widths)


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array: ArrayLike, pad_width, mode: str = "constant", **kwargs):
    """`np.pad` with modes constant (scalar or per-axis `constant_values`), empty (zeros),
    edge, reflect, symmetric and wrap (`reflect_type='even'`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.pad(np.ones(2), (1, 2))
    array([0., 1., 1., 0., 0.])
    >>> tnp.pad(np.arange(3), 2, mode="reflect")
    array([2, 1, 0, 1, 2, 1, 0])
    """
    x = asarray(array)
    shape = tuple(shape_of(x))
    widths = _pad_widths(pad_width, len(shape))
    if mode in _INDEX_MODES:
        if kwargs.get("reflect_type", "even") != "even":
            raise UnsupportedError("pad: only reflect_type='even' is supported")
        from tracejit.numpy._manip import rearrange

        return rearrange(x, lambda i: np.pad(i, widths, mode=mode))
    if mode == "empty":
        mode, kwargs = "constant", {}
    if mode != "constant":
        raise UnsupportedError(
            f"pad: mode={mode!r} is not supported; use constant, empty, edge, reflect, "
            "symmetric or wrap"
        )
    value = kwargs.pop("constant_values", 0)
    if kwargs:
        raise TracejitTypeError(f"pad: unexpected arguments {sorted(kwargs)}")
    if not shape:
        return x  # a 0-d array has no axis to pad
    if not isinstance(value, Tracer) and np.ndim(value) != 0:
        return _pad_per_axis(x, widths, np.broadcast_to(np.asarray(value), (len(shape), 2)))
    return bind("pad", x, _pad_value(value, x), widths=widths)


def _pad_value(value, x):
    if isinstance(value, Tracer):
        if value.shape != ():
            raise UnsupportedError("pad: a traced constant_values must be a scalar")
        return cast(value, x.dtype)
    return constant(value, x.dtype, False, innermost_trace([x]))


def _pad_per_axis(x, widths, values):
    """Pad axis by axis, each side with its own constant, as NumPy does."""
    nd = len(widths)
    for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
        for w, v in (((lo, 0), vlo), ((0, hi), vhi)):
            if w != (0, 0):
                axis_widths = tuple(w if i == ax else (0, 0) for i in range(nd))
                x = bind("pad", x, _pad_value(v, x), widths=axis_widths)
    return x


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
        raise TracejitValueError(f"tile: negative repetition count in {reps}")
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
        raise TracejitTypeError(
            f"repeat: repeats must be an int or a 1-D sequence of ints: {repeats!r}"
        )
    if (counts < 0).any():
        raise TracejitValueError("repeat: repeats may not contain negative values")
    if counts.size == 1:
        r = int(counts.reshape(()))
        expanded = shape[: axis + 1] + (r,) + shape[axis + 1 :]
        dims = tuple(i for i in range(len(expanded)) if i != axis + 1)
        x = bind("broadcast_in_dim", x, shape=expanded, dims=dims)
        return reshape(x, shape[:axis] + (shape[axis] * r,) + shape[axis + 1 :])
    if counts.size != shape[axis]:
        raise ShapeError(f"repeat: {counts.size} repeat counts for an axis of size {shape[axis]}")
    return bind("take", x, np.repeat(np.arange(shape[axis]), counts), axis=axis)


__all__ = defined_here(globals(), exclude=("slice_axis",))  # noqa: PLE0605
