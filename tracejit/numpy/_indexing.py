"""Indexing for tracejit.numpy: `x[index]` (basic and advanced), `take`, `take_along_axis`.

`getitem` follows NumPy's rules. Basic entries (ints, slices with any step, None, Ellipsis)
become one `slice`, one `rev` and one `reshape`. Integer arrays (concrete or traced) become a
`take`: one index array gathers along its axis; several are combined into one linear index
over their axes. As in NumPy, when the advanced entries (integer arrays and, with them, ints)
are not next to each other, their broadcast dimensions come first in the result.

Concrete indices are checked (an out-of-range index raises IndexError, as in NumPy). Traced
indices cannot be checked while tracing, so they are clamped into range, as in JAX.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracejit.errors import (
    ConcretizationError,
    ShapeError,
    TracejitIndexError,
    TracejitTypeError,
    TracejitValueError,
    UnsupportedError,
)
from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._const_array import const_array
from tracejit.numpy._core import (
    _static_int,
    asarray,
    broadcast_shapes,
    cast,
    constant,
    innermost_trace,
    normalize_axis,
    shape_of,
)
from tracejit.numpy._creation import iota
from tracejit.numpy._shape import broadcast_to, ravel, reshape, transpose
from tracejit.tracer.core import Tracer, bind, user_frame

ArrayLike = object  # Tracer | np.ndarray | scalar | nested sequence

_VALID = (
    "only integers, slices (`:`), ellipsis (`...`), None (`np.newaxis`) and integer or "
    "boolean arrays are valid indices"
)


@dataclass
class _Entry:
    """One entry of an expanded index: what it does and which input axis it consumes."""

    kind: str  # "new" (None), "slice", "int" or "array"
    value: object  # slice, normalized int, or index array (NumPy, normalized, or Tracer)
    axis: int | None  # the input axis it consumes; None for "new"


# ---------------------------------------------------------------- parsing


def _classify(item, op: str):
    """(kind, value) of one index item; masks are ("mask", bool array)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        parts = (item.start, item.stop, item.step)
        return "slice", slice(
            *[None if p is None else _static_int(p, "a slice bound") for p in parts]
        )
    if isinstance(item, (bool, np.bool_)):
        raise UnsupportedError(f"{op}: a scalar boolean index (x[True]) is not supported")
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, (list, tuple, Tracer)):
        item = asarray(item)  # a list holding tracers becomes a traced array
    if isinstance(item, Tracer):
        if item.dtype == np.bool_:
            raise _traced_mask_error(item)
        if not dtypes.is_int(item.dtype):
            raise TracejitIndexError(f"{_VALID}; got a traced array of dtype {item.dtype}")
        return "array", item
    arr = np.asarray(item)
    if arr.dtype == np.bool_:
        return "mask", arr
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # an empty list is an empty integer index, as in NumPy
    if arr.dtype.kind not in "iu":
        raise TracejitIndexError(f"{_VALID}; got {type(item).__name__} of dtype {arr.dtype}")
    if arr.ndim == 0:
        return "int", int(arr)
    return "array", arr.astype(np.int64)


def _traced_mask_error(mask: Tracer) -> ConcretizationError:
    return ConcretizationError(
        f"boolean mask indexing x[mask] with a traced mask {mask._value.type_str} has a "
        "data-dependent shape: the result's size is the number of True values, which is not "
        "known while tracing\n"
        "Keep the shape with tnp.where(mask, x, 0) (and reduce over it), or pass the mask as "
        "a concrete NumPy array (a closure constant or a static argument)."
    )


def _out_of_range(index: int, axis: int, size: int) -> TracejitIndexError:
    return TracejitIndexError(f"index {index} is out of bounds for axis {axis} with size {size}")


def _parse(index, shape: tuple[int, ...], op: str) -> list[_Entry]:
    items = list(index) if isinstance(index, tuple) else [index]
    classified = [_classify(item, op) for item in items]
    if sum(kind == "ellipsis" for kind, _ in classified) > 1:
        raise TracejitIndexError("an index can only have a single ellipsis ('...')")
    consuming = [(k, v) for k, v in classified if k not in ("new", "ellipsis")]
    used = sum(np.ndim(v) if k == "mask" else 1 for k, v in consuming)
    if used > len(shape):
        raise TracejitIndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but {used} were "
            "indexed"
        )
    if not any(kind == "ellipsis" for kind, _ in classified):
        classified.append(("ellipsis", None))
    entries: list[_Entry] = []
    axis = 0
    for kind, value in classified:
        if kind == "new":
            entries.append(_Entry("new", None, None))
        elif kind == "ellipsis":
            for _ in range(len(shape) - used):
                entries.append(_Entry("slice", slice(None), axis))
                axis += 1
        elif kind == "mask":
            entries += _mask_entries(value, shape, axis)
            axis += value.ndim
        else:
            entries.append(_Entry(kind, _checked(kind, value, axis, shape[axis]), axis))
            axis += 1
    return entries


def _checked(kind: str, value, axis: int, size: int):
    """Bounds-check and normalize a concrete int or index array (traced ones pass through)."""
    if kind == "int":
        if not -size <= value < size:
            raise _out_of_range(value, axis, size)
        return value % size
    if kind == "array" and isinstance(value, np.ndarray):
        bad = (value < -size) | (value >= size)
        if bad.any():
            raise _out_of_range(int(value[bad].flat[0]), axis, size)
        return np.where(value < 0, value + size, value)
    return value


def _mask_entries(mask: np.ndarray, shape, axis: int) -> list[_Entry]:
    if mask.ndim == 0:
        raise UnsupportedError("a 0-d boolean index is not supported")
    for k, (m, n) in enumerate(zip(mask.shape, shape[axis:])):
        if m != n:
            raise TracejitIndexError(
                f"boolean index did not match indexed array along axis {axis + k}; size of "
                f"axis is {n} but size of corresponding boolean axis is {m}"
            )
    return [_Entry("array", idx, axis + k) for k, idx in enumerate(np.nonzero(mask))]


# ---------------------------------------------------------------- basic indexing


def _slice_bounds(s: slice, size: int) -> tuple[int, int, int, bool]:
    """(start, stop, positive step, reversed) selecting what `s` selects, in forward order."""
    start, stop, step = s.indices(size)
    count = len(range(start, stop, step))
    if count == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (count - 1) * step + 1, step, False
    last = start + (count - 1) * step
    return last, start + 1, -step, True


def _apply_slices(x, entries: list[_Entry]):
    """Apply every slice entry (ints become length-1 slices) with one slice and one rev."""
    shape = tuple(shape_of(x))
    starts, stops, steps = [0] * len(shape), list(shape), [1] * len(shape)
    rev = []
    for e in entries:
        if e.kind == "slice":
            a, b, s, flipped = _slice_bounds(e.value, shape[e.axis])
            starts[e.axis], stops[e.axis], steps[e.axis] = a, b, s
            if flipped:
                rev.append(e.axis)
        elif e.kind == "int":
            starts[e.axis], stops[e.axis] = e.value, e.value + 1
    if (starts, stops, steps) != ([0] * len(shape), list(shape), [1] * len(shape)):
        x = bind("slice", x, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps))
    if rev:
        x = bind("rev", x, axes=tuple(rev))
    return x


def getitem(x: ArrayLike, index):
    """`x[index]` with NumPy's basic and advanced (integer array, concrete mask) indexing.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> x = np.arange(12).reshape(3, 4)
    >>> tnp.getitem(x, (slice(None, None, -2), [0, 3]))
    array([[ 8, 11],
           [ 0,  3]])
    """
    if type(index) is int and type(x) is Tracer and x._value.shape:
        return _int_index(x, index)
    x = asarray(x)
    entries = _parse(index, tuple(shape_of(x)), "indexing")
    advanced = any(e.kind == "array" for e in entries)
    if advanced:
        entries = [
            _Entry("array", np.asarray(e.value, np.int64), e.axis) if e.kind == "int" else e
            for e in entries
        ]
    y = _apply_slices(x, entries)
    if advanced:
        return _gather(y, entries)
    kept = [e for e in entries if e.kind != "int"]
    out = tuple(1 if e.kind == "new" else shape_of(y)[e.axis] for e in kept)
    if out == tuple(shape_of(y)):
        return y
    return bind("reshape", y, shape=out)


def _int_index(x: Tracer, i: int):
    """`x[i]` for a Python int (`for row in x` in a traced loop): the nodes the general path
    records (a slice unless it takes all, then a reshape), without parsing an index."""
    shape = x._value.shape
    size = shape[0]
    if not -size <= i < size:
        raise _out_of_range(i, 0, size)
    i %= size
    if (i, i + 1) != (0, size):
        starts = (i,) + (0,) * (len(shape) - 1)
        steps = (1,) * len(shape)
        x = bind("slice", x, starts=starts, stops=(i + 1, *shape[1:]), steps=steps)
    return bind("reshape", x, shape=shape[1:])


# ---------------------------------------------------------------- advanced indexing


def _gather(y, entries: list[_Entry]):
    """Gather the advanced entries of `y` (already sliced) and lay the result out NumPy's way."""
    adv = [e for e in entries if e.kind == "array"]
    try:
        bshape = broadcast_shapes(*[shape_of(e.value) for e in adv], op="indexing")
    except ShapeError:
        shapes = " ".join(str(tuple(shape_of(e.value))) for e in adv)
        raise TracejitIndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None
    bdims = [("B", k) for k in range(len(bshape))]
    basic = [e for e in entries if e.kind == "slice"]
    if len(adv) == 1:
        (e,) = adv
        y = bind("take", y, e.value, axis=e.axis)
        layout = [("S", b.axis) for b in basic if b.axis < e.axis] + bdims
        layout += [("S", b.axis) for b in basic if b.axis > e.axis]
    else:
        y = _gather_linear(y, adv, bshape, basic)
        layout = bdims + [("S", b.axis) for b in basic]
    positions = [i for i, e in enumerate(entries) if e.kind == "array"]
    together = positions == list(range(positions[0], positions[-1] + 1))
    target = []
    for i, e in enumerate(entries):
        if together and i == positions[0]:
            target += bdims
        if e.kind == "slice":
            target.append(("S", e.axis))
    if not together:
        target = bdims + target
    perm = [layout.index(t) for t in target]
    y = transpose(y, perm)
    sizes = iter(shape_of(y))
    out = []
    for i, e in enumerate(entries):
        if together and i == positions[0] or not together and i == 0:
            out += [next(sizes) for _ in bshape]
        if e.kind == "slice":
            out.append(next(sizes))
        elif e.kind == "new":
            out.append(1)
    return reshape(y, tuple(out))


def _gather_linear(y, adv: list[_Entry], bshape, basic: list[_Entry]):
    """Several index arrays: move their axes first, flatten them, take one linear index."""
    shape = tuple(shape_of(y))
    perm = [e.axis for e in adv] + [b.axis for b in basic]
    y = transpose(y, perm)
    sizes = [shape[e.axis] for e in adv]
    y = reshape(y, (int(np.prod(sizes, dtype=np.int64)),) + tuple(shape[b.axis] for b in basic))
    linear = None
    stride = 1
    for e, n in reversed(list(zip(adv, sizes))):
        term = _clamped(e.value, n)
        term = term if stride == 1 else ew.multiply(term, stride)
        linear = term if linear is None else ew.add(linear, term)
        stride *= n
    return bind("take", y, broadcast_to(linear, bshape), axis=0)


def _clamped(idx, n: int):
    """A traced index wrapped once if negative and clamped into [0, n), as int64."""
    if not isinstance(idx, Tracer):
        return idx  # concrete: already checked and normalized
    idx = cast(idx, np.int64)
    return ew.clip(ew.where(ew.less(idx, 0), idx + n, idx), 0, max(n - 1, 0))


# ---------------------------------------------------------------- take


def _index_array(indices, op: str):
    idx = asarray(indices) if isinstance(indices, (Tracer, list, tuple)) else np.asarray(indices)
    if isinstance(indices, (list, tuple)) and not isinstance(idx, Tracer) and idx.size == 0:
        idx = idx.astype(np.int64)  # `[]` is float64 to NumPy, and an empty index to np.take
    if not dtypes.is_int(idx.dtype):
        raise TracejitTypeError(f"{op}: indices must be integers, got dtype {idx.dtype}")
    return idx


def take(a: ArrayLike, indices, axis: int | None = None, out=None, mode: str | None = None):
    """`np.take`; `axis=None` takes from the flattened array.

    Out-of-range indices are clamped into range (negative ones wrap once first), as in JAX,
    where NumPy raises (mode='raise'): compiled code cannot raise on data. `mode='wrap'`
    wraps every index modulo the axis size, as in NumPy.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.take(np.arange(5) * 10, [0, -1, 7])
    array([ 0, 40, 40])
    """
    if out is not None:
        raise UnsupportedError("take(..., out=...) writes in place; use the result")
    if mode not in (None, "raise", "clip", "wrap"):
        raise TracejitValueError(f"take: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, len(shape_of(x)), "take")
    idx = _index_array(indices, "take")
    n = shape_of(x)[axis]
    if mode == "wrap" and n:
        idx = ew.remainder(idx, n)
    elif mode == "clip":
        idx = ew.maximum(idx, 0)  # NumPy's 'clip' clamps negatives to 0 instead of wrapping
    return bind("take", x, idx, axis=axis)


def take_along_axis(arr: ArrayLike, indices, axis: int | None = -1):
    """`np.take_along_axis`: indices broadcast against `arr` on every axis but `axis`.

    Out-of-range indices are clamped (after wrapping negatives once), as in `take`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> x = np.array([[10, 30, 20]])
    >>> tnp.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[10, 20, 30]])
    """
    x = asarray(arr)
    idx = _index_array(indices, "take_along_axis")
    if axis is None:
        if len(shape_of(idx)) != 1:
            raise ShapeError("take_along_axis: with axis=None, indices must be 1-D")
        x, axis = ravel(x), 0
    xs, ishape = tuple(shape_of(x)), tuple(shape_of(idx))
    if len(xs) != len(ishape):
        raise ShapeError(
            f"take_along_axis: `indices` {ishape} and `arr` {xs} must have the same number of "
            "dimensions"
        )
    axis = normalize_axis(axis, len(xs), "take_along_axis")
    rest = broadcast_shapes(
        xs[:axis] + xs[axis + 1 :], ishape[:axis] + ishape[axis + 1 :], op="take_along_axis"
    )
    x = broadcast_to(x, rest[:axis] + (xs[axis],) + rest[axis:])
    idx = broadcast_to(idx, rest[:axis] + (ishape[axis],) + rest[axis:])
    return bind("take_along_axis", x, idx, axis=axis)


# ---------------------------------------------------------------- functional updates


class AtIndexer:
    """`x.at[index]`: functional updates in JAX's style (`x.at[i].set(v)`, `.add(v)`, `.get()`).

    >>> import numpy as np, tracejit as tj
    >>> tj.jit(lambda x: x.at[1:, 0].add(10.0))(np.zeros((2, 2)))
    array([[ 0.,  0.],
           [10.,  0.]])
    """

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index) -> IndexUpdate:
        return IndexUpdate(self._x, index)


def _leaves(index) -> list:
    items = index if isinstance(index, (tuple, list)) else [index]
    out = []
    for item in items:
        out += _leaves(item) if isinstance(item, (tuple, list)) else [item]
    return out


class IndexUpdate:
    """The elements `x[index]` selects; `set`/`add` return a new array, `x` is unchanged.

    Repeated indices accumulate in `add` (like `np.add.at`). In `set`, the last update wins
    for concrete indices, as in NumPy; for traced indices that repeat, the value written is
    unspecified (as in JAX; today it is the sum of the updates). Traced indices out of range
    are clamped, as in `getitem` (JAX drops such updates instead).
    """

    def __init__(self, x, index):
        self._x = asarray(x)
        self._index = index

    def get(self):
        return getitem(self._x, self._index)

    def _scatter_operands(self, values):
        """(flat x, flat positions, flat updates of x's dtype) for the selected elements."""
        x = self._x
        shape = tuple(shape_of(x))
        size = int(np.prod(shape, dtype=np.int64))
        # Concrete indices give concrete (static) positions; traced ones trace the gather.
        trace = innermost_trace(_leaves(self._index))
        positions = iota((size,), np.int64, 0, trace, user_frame())
        positions = getitem(reshape(positions, shape), self._index)
        updates = broadcast_to(cast(asarray(values), x.dtype), shape_of(positions))
        return ravel(x), ravel(positions), ravel(updates)

    def _combine(self, values, how: str, reciprocal: bool = False):
        from tracejit.numpy._at_ops import combine_at, divide_updates

        flat, positions, updates = self._scatter_operands(values)
        updates = divide_updates(updates) if reciprocal else updates
        return const_array(reshape(combine_at(flat, positions, updates, how), shape_of(self._x)))

    def multiply(self, values):
        return self._combine(values, "multiply")

    def divide(self, values):
        return self._combine(values, "multiply", reciprocal=True)

    def min(self, values):
        return self._combine(values, "min")

    def max(self, values):
        return self._combine(values, "max")

    def add(self, values):
        flat, positions, updates = self._scatter_operands(values)
        out = bind("take_add", flat, positions, updates, axis=0)
        return const_array(reshape(out, shape_of(self._x)))

    def set(self, values):
        flat, positions, updates = self._scatter_operands(values)
        size = shape_of(flat)[0]
        if isinstance(positions, np.ndarray):  # keep only the last update of each position
            _, last = np.unique(positions[::-1], return_index=True)
            keep = len(positions) - 1 - last
            positions, updates = positions[keep], bind("take", updates, keep, axis=0)
        trace = innermost_trace([flat, positions, updates])
        # -0.0 + v is v for every v (+0.0 + -0.0 would store +0.0)
        zero = -0.0 if flat.dtype.kind == "f" else 0
        zeros = broadcast_to(constant(zero, flat.dtype, False, trace), (size,))
        counts = bind(
            "take_add",
            np.zeros(size, np.int32),
            positions,
            np.ones(shape_of(positions), np.int32),
            axis=0,
        )
        scattered = bind("take_add", zeros, positions, updates, axis=0)
        return const_array(
            reshape(ew.where(ew.greater(counts, 0), scattered, flat), shape_of(self._x))
        )


__all__ = ["getitem", "take", "take_along_axis"]
