"""Data-dependent sizes with a static bound: nonzero, argwhere, flatnonzero, compress, extract,
unique, union1d.

Their result's length depends on the values, which a traced array does not have. As in JAX,
under `jit` they take `size=` (the length of the result) and `fill_value=` (what pads it when
fewer elements qualify); without `size` a traced input raises UnsupportedError naming it.
Concrete inputs without `size` give NumPy's own answer.

Compaction is one scatter: element i that qualifies goes to slot `cumsum(mask)[i] - 1`; the
others (and those past `size`) go to one extra slot that is cut off.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._construct import isin
from tracejit.numpy._core import asarray, cast, innermost_trace, normalize_axis, promote, shape_of
from tracejit.numpy._creation import iota
from tracejit.numpy._join import concatenate, slice_axis
from tracejit.numpy._manip import rearrange
from tracejit.numpy._shape import ravel, reshape
from tracejit.numpy._sorting import argsort, lexsort
from tracejit.tracer.core import Tracer, bind

_INT64 = np.dtype(np.int64)


def _need_size(name: str):
    return UnsupportedError(
        f"{name} of a traced array has a data-dependent size: pass size=N (the length of the "
        "result) and optionally fill_value=, as in JAX"
    )


def _compact(mask, values, size: int, fill):
    """The `values` where `mask` holds, in order, padded with `fill` to length `size`."""
    trace = innermost_trace([mask, values])
    slot = ew.subtract(red.cumsum(mask, dtype=_INT64), 1)
    slot = ew.where(ew.logical_and(mask, ew.less(slot, size)), slot, size)
    zeros = ew.multiply(iota((size + 1,), values.dtype, 0, trace), 0)
    packed = slice_axis(bind("take_add", zeros, slot, values, axis=0), 0, 0, size)
    count = red.sum(mask, dtype=_INT64)
    filled = ew.less(iota((size,), np.int64, 0, trace), count)
    return ew.where(filled, packed, cast(asarray(fill), values.dtype) if fill is not None else 0)


def nonzero(a, *, size: int | None = None, fill_value=None) -> tuple:
    """`np.nonzero`: the indices of the nonzero elements, one array per axis.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.nonzero(np.array([[0, 3], [4, 0]]))
    (array([0, 1]), array([1, 0]))
    """
    x = asarray(a)
    if size is None:
        if isinstance(x, Tracer):
            raise _need_size("nonzero")
        return np.nonzero(x)
    shape = tuple(shape_of(x)) or (1,)
    flat = ew.not_equal(ravel(x), 0)
    n = int(np.prod(shape, dtype=np.int64))
    where = _compact(flat, iota((n,), np.int64, 0, innermost_trace([flat])), int(size), None)
    coords = []
    for d in reversed(shape):
        coords.append(ew.remainder(where, d))
        where = ew.floor_divide(where, d)
    coords = coords[::-1]
    if fill_value is None:
        return tuple(coords)
    fills = np.broadcast_to(np.asarray(fill_value), (len(shape),))
    count = red.sum(flat, dtype=_INT64)
    keep = ew.less(iota((int(size),), np.int64, 0, innermost_trace([flat])), count)
    return tuple(ew.where(keep, c, int(f)) for c, f in zip(coords, fills))


def compress(condition, a, axis=None, *, size: int | None = None, fill_value=0):
    """`np.compress`: the slices of `a` along `axis` (flattened when None) where `condition`
    holds (a condition shorter than the axis leaves the rest out, as NumPy's). A traced
    condition needs `size=` (the result's length along the axis), padded with `fill_value`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.compress([True, False, True], np.arange(3))
    array([0, 2])
    >>> tnp.compress(np.array([0, 1, 1, 0]), np.arange(8).reshape(4, 2), axis=0, size=3)
    array([[2, 3],
           [4, 5],
           [0, 0]])
    """
    x = asarray(a)
    if size is None:
        if isinstance(condition, Tracer):
            raise _need_size("compress")
        cond = np.asarray(condition)  # a static condition: NumPy's own selection
        return rearrange(x, lambda i: np.compress(cond, i, axis=axis))
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, len(shape_of(x)), "compress")
    cond = ew.not_equal(ravel(asarray(condition)), 0)
    n, length = shape_of(cond)[0], shape_of(x)[axis]
    if n > length:
        raise ShapeError(f"compress: condition of length {n} for an axis of length {length}")
    (picked,) = nonzero(cond, size=size, fill_value=0)
    taken = bind("take", x, picked, axis=axis)
    count = red.sum(cond, dtype=_INT64)
    keep = ew.less(iota((int(size),), np.int64, 0, innermost_trace([cond, x])), count)
    keep = reshape(keep, (int(size),) + (1,) * (len(shape_of(x)) - axis - 1))
    return ew.where(keep, taken, cast(asarray(fill_value), taken.dtype))


def extract(condition, arr, *, size: int | None = None, fill_value=0):
    """`np.extract`: the elements of `arr` where `condition` holds, flattened; a traced
    condition needs `size=` (padded with `fill_value`), as `compress`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.extract(np.arange(4) % 2 == 0, np.arange(4) * 10)
    array([ 0, 20])
    """
    return compress(
        ravel(asarray(condition)), ravel(asarray(arr)), size=size, fill_value=fill_value
    )


def flatnonzero(a, *, size: int | None = None, fill_value=None):
    """`np.flatnonzero`: indices of the nonzero elements of the flattened array.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.flatnonzero(np.array([0, 2, 0, 5]), size=3, fill_value=-1)
    array([ 1,  3, -1])
    """
    return nonzero(ravel(asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
    """`np.argwhere`: the (count, ndim) array of nonzero positions.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.argwhere(np.array([[0, 3], [4, 0]]))
    array([[0, 1],
           [1, 0]])
    """
    x = asarray(a)
    if not shape_of(x):
        x = reshape(x, (1,))
        return reshape(nonzero(x, size=size, fill_value=fill_value)[0], (-1, 0))
    coords = nonzero(x, size=size, fill_value=fill_value)
    return concatenate([reshape(c, (-1, 1)) for c in coords], 1)


def _sorted_groups(x, equal_nan: bool):
    """(sorted values, sort order, first-of-group mask) of the 1-D array x."""
    order = argsort(x)
    s = bind("take", x, order, axis=0)
    n = shape_of(s)[0]
    same = ew.equal(slice_axis(s, 0, 1, n), slice_axis(s, 0, 0, n - 1))
    if equal_nan and s.dtype.kind in "fc":  # complex: NaN in either part (np.isnan)
        nan_pair = ew.logical_and(
            ew.isnan(slice_axis(s, 0, 1, n)), ew.isnan(slice_axis(s, 0, 0, n - 1))
        )
        same = ew.logical_or(same, nan_pair)
    first = concatenate([np.ones(1, np.bool_), ew.logical_not(same)])
    return s, order, first


def _unique_distinct_nans(x, flags, size, fill_value):
    """The array-API unique_* functions: NaNs are distinct values (as in NumPy)."""
    return unique(x, *flags, equal_nan=False, size=size, fill_value=fill_value)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None):  # fmt: skip
    """`np.unique` of the flattened array; under `jit` with `size=` (padded with `fill_value`,
    by default the smallest value, as in JAX).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.unique(np.array([3, 1, 3, 2]), return_counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
    """
    x = asarray(ar)
    if axis is not None:
        raise UnsupportedError("unique: axis= is not supported; it works on the flattened array")
    if size is None:
        if isinstance(x, Tracer):
            raise _need_size("unique")
        return np.unique(x, return_index, return_inverse, return_counts, equal_nan=equal_nan)
    (x,) = promote(ravel(x))
    n, size = shape_of(x)[0], int(size)
    s, order, first = _sorted_groups(x, equal_nan)
    fill = bind("take", s, np.int64(0), axis=0) if fill_value is None else fill_value
    out = [_compact(first, s, size, fill)]
    group = ew.subtract(red.cumsum(first, dtype=_INT64), 1)
    if return_index:
        out.append(_compact(first, order, size, 0))
    if return_inverse:
        zeros = ew.multiply(iota((n,), np.int64, 0, innermost_trace([x])), 0)
        inverse = bind("take_add", zeros, order, group, axis=0)
        out.append(reshape(inverse, shape_of(asarray(ar))))
    if return_counts:
        slots = ew.where(ew.less(group, size), group, size)
        zeros = ew.multiply(iota((size + 1,), np.int64, 0, innermost_trace([x])), 0)
        ones = ew.add(ew.multiply(group, 0), 1)
        out.append(slice_axis(bind("take_add", zeros, slots, ones, axis=0), 0, 0, size))
    return out[0] if len(out) == 1 else tuple(out)


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """Array-API `unique_values`."""
    return _unique_distinct_nans(x, (), size, fill_value)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    """Array-API `unique_counts`: (values, counts)."""
    return UniqueCountsResult(*_unique_distinct_nans(x, (False, False, True), size, fill_value))


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    """Array-API `unique_inverse`: (values, inverse_indices) shaped like x."""
    return UniqueInverseResult(*_unique_distinct_nans(x, (False, True), size, fill_value))


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """Array-API `unique_all`: (values, indices, inverse_indices, counts).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.unique_all(np.array([2, 1, 2])).counts
    array([1, 2])
    """
    return UniqueAllResult(*_unique_distinct_nans(x, (True, True, True), size, fill_value))


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """`np.union1d`: the sorted unique values of both (under `jit` with `size=`)."""
    return unique(concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]), size=size,
                  fill_value=fill_value)  # fmt: skip


def _set_op(name, np_fn, ar1, ar2, size, fill_value, pick):
    """A sorted set operation: `pick(s1, first1, s2, first2)` gives (values, mask) to compact."""
    a, b = asarray(ar1), asarray(ar2)
    if size is None:
        if isinstance(a, Tracer) or isinstance(b, Tracer):
            raise _need_size(name)
        return np_fn(a, b)
    a, b = promote(ravel(a), ravel(b))
    s1, _, first1 = _sorted_groups(a, True)
    s2, _, first2 = _sorted_groups(b, True)
    values, mask = pick(s1, first1, s2, first2)
    fill = bind("take", s1, np.int64(0), axis=0) if fill_value is None else fill_value
    return _compact(mask, values, int(size), fill)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):  # fmt: skip
    """`np.intersect1d`: sorted unique values in both (under `jit` with `size=`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.intersect1d(np.array([3, 1, 2, 3]), np.array([3, 4, 1]))
    array([1, 3])
    """
    if return_indices:
        raise UnsupportedError("intersect1d: return_indices is not supported")
    return _set_op("intersect1d", np.intersect1d, ar1, ar2, size, fill_value,
                   lambda s1, f1, s2, f2: (s1, ew.logical_and(f1, isin(s1, s2))))  # fmt: skip


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
              fill_value=None):  # fmt: skip
    """`np.setdiff1d`: sorted unique values of ar1 not in ar2 (under `jit` with `size=`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.setdiff1d(np.array([3, 1, 2, 3]), np.array([3, 4]))
    array([1, 2])
    """
    return _set_op("setdiff1d", np.setdiff1d, ar1, ar2, size, fill_value,
                   lambda s1, f1, s2, f2: (s1, ew.logical_and(f1, ew.logical_not(isin(s1, s2)))))  # fmt: skip


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
             fill_value=None):  # fmt: skip
    """`np.setxor1d`: sorted values in exactly one of the two (under `jit` with `size=`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.setxor1d(np.array([3, 1, 2]), np.array([3, 4]))
    array([1, 2, 4])
    """

    def pick(s1, f1, s2, f2):
        m1 = ew.logical_and(f1, ew.logical_not(isin(s1, s2)))
        m2 = ew.logical_and(f2, ew.logical_not(isin(s2, s1)))
        values, mask = concatenate([s1, s2]), concatenate([m1, m2])
        order = lexsort((values, ew.logical_not(mask)))  # kept values first, sorted
        return bind("take", values, order, axis=0), bind("take", mask, order, axis=0)

    return _set_op("setxor1d", np.setxor1d, ar1, ar2, size, fill_value, pick)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """`np.trim_zeros` of a concrete array (its result's size depends on the values).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.trim_zeros(np.array([0, 1, 0, 2, 0]))
    array([1, 0, 2])
    """
    if isinstance(filt, Tracer):
        raise UnsupportedError("trim_zeros of a traced array has a data-dependent size; slice "
                               "with static bounds, or call it outside jit")  # fmt: skip
    return (
        np.trim_zeros(np.asarray(filt), trim) if axis is None else np.trim_zeros(filt, trim, axis)
    )


__all__ = defined_here(  # noqa: PLE0605
    globals(), exclude=("UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult")
)
