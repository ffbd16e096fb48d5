"""Rearranging arrays with static positions: diff, append, insert, delete, resize, rot90, ...

Many NumPy functions only move elements to places that depend on shapes and on static
arguments, never on values. `rearrange` runs the NumPy function itself on an array of element
numbers and turns the answer into one `take` (a gather with a constant index): so the result
has NumPy's exact semantics, traces, and differentiates through `take`'s VJP.
"""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitValueError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._core import asarray, cast, normalize_axis, promote, shape_of
from tracejit.numpy._join import array_split, concatenate, flip, pad, slice_axis, split
from tracejit.numpy._shape import broadcast_to, moveaxis, ravel, reshape, swapaxes, transpose
from tracejit.tracer.core import bind


def rearrange(x, np_fn, fill=None):
    """`np_fn(x)` for an `np_fn` that only moves elements: one gather with a static index.

    `np_fn` receives an array of element numbers shaped like `x`; entries it invents (NumPy
    fills with zeros, e.g. `np.diag`) are marked by passing `fill`, the value they get.

    >>> import numpy as np
    >>> rearrange(np.array([5, 6, 7]), lambda i: i[::-1])
    array([7, 6, 5])
    """
    x = asarray(x)
    size = int(np.prod(shape_of(x), dtype=np.int64))
    numbers = np.arange(size, dtype=np.int64).reshape(shape_of(x))
    flat = ravel(x)
    if fill is not None:  # element 0 is the fill value, the array's elements are 1..size
        numbers = numbers + 1
        flat = concatenate([reshape(asarray(fill, x.dtype), (1,)), flat])
    idx = np.asarray(np_fn(numbers))
    if idx.size == 0:
        return reshape(slice_axis(flat, 0, 0, 0), idx.shape)
    return bind("take", flat, idx.astype(np.int64), axis=0)


def _values_and_marks(arr, values):
    """(x, v, element numbers of x, marks of v): v's elements are numbered -1, -2, ..."""
    x = asarray(arr)
    (v,) = promote(values)
    v = cast(v, x.dtype)
    xs = np.arange(int(np.prod(shape_of(x), dtype=np.int64))).reshape(shape_of(x))
    vs = -1 - np.arange(int(np.prod(shape_of(v), dtype=np.int64))).reshape(shape_of(v))
    return x, v, xs, vs


def _gather_marked(x, v, idx):
    """Gather from `x` (entries >= 0) and `v` (entry -1 - j is v's element j)."""
    idx = np.asarray(idx, np.int64)
    n = int(np.prod(shape_of(x), dtype=np.int64))
    both = concatenate([ravel(x), ravel(v)])
    return bind("take", both, np.where(idx >= 0, idx, n - 1 - idx), axis=0)


def append(arr, values, axis=None):
    """`np.append`: concatenate `values` after `arr` (both flattened when `axis` is None).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.append(np.array([1, 2]), [[3], [4]])
    array([1, 2, 3, 4])
    """
    x, v = promote(asarray(arr), asarray(values))
    if axis is None:
        return concatenate([ravel(x), ravel(v)])
    return concatenate([x, v], axis)


def insert(arr, obj, values, axis=None):
    """`np.insert` with static positions `obj` (int, slice or sequence); values may be traced.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.insert(np.array([1, 2, 3]), 1, [9, 8])
    array([1, 9, 8, 2, 3])
    """
    x, v, xs, vs = _values_and_marks(arr, values)
    return _gather_marked(x, v, np.insert(xs, obj, vs, axis=axis))


def delete(arr, obj, axis=None):
    """`np.delete` with static positions `obj`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.delete(np.arange(5), [0, 3])
    array([1, 2, 4])
    """
    return rearrange(arr, lambda i: np.delete(i, obj, axis=axis))


def resize(a, new_shape):
    """`np.resize`: the flattened array repeated (or cut) to fill `new_shape`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.resize(np.array([1, 2, 3]), (2, 2))
    array([[1, 2],
           [3, 1]])
    """
    return rearrange(a, lambda i: np.resize(i, new_shape))


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """`np.diff`: the `n`-th forward difference along `axis` (bools compare with !=).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.diff(np.array([1, 4, 9, 16]), n=2)
    array([2, 2])
    """
    x = asarray(a)
    nd = len(shape_of(x))
    if nd == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, nd, "diff")
    parts = [x]
    for extra, front in ((prepend, True), (append, False)):
        if extra is not None:
            e = asarray(extra)
            if not shape_of(e):
                shape = list(shape_of(x))
                shape[axis] = 1
                e = broadcast_to(e, tuple(shape))
            if front:
                parts.insert(0, e)
            else:
                parts.append(e)
    x = concatenate(parts, axis) if len(parts) > 1 else x
    for _ in range(int(n)):
        size = shape_of(x)[axis]
        hi, lo = slice_axis(x, axis, 1, max(size, 1)), slice_axis(x, axis, 0, max(size - 1, 0))
        x = ew.not_equal(hi, lo) if x.dtype == np.bool_ else ew.subtract(hi, lo)
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """`np.ediff1d`: differences of the flattened array, with optional ends.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.ediff1d(np.array([1, 2, 4]), to_begin=0)
    array([0, 1, 2])
    """
    d = diff(ravel(asarray(ary)))
    parts = [d]
    if to_begin is not None:
        parts.insert(0, ravel(cast(asarray(to_begin), d.dtype)))
    if to_end is not None:
        parts.append(ravel(cast(asarray(to_end), d.dtype)))
    return concatenate(parts) if len(parts) > 1 else d


def rot90(m, k: int = 1, axes=(0, 1)):
    """`np.rot90`: rotate by 90 degrees `k` times in the plane of `axes`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.rot90(np.array([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    x = asarray(m)
    a0, a1 = (normalize_axis(a, len(shape_of(x)), "rot90") for a in axes)
    if a0 == a1:
        raise TracejitValueError("rot90: axes must be different")
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)


def fliplr(m):
    """`np.fliplr`: reverse axis 1.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fliplr(np.array([[1, 2]]))
    array([[2, 1]])
    """
    x = asarray(m)
    if len(shape_of(x)) < 2:
        raise TracejitValueError("fliplr: the input must be at least 2-d")
    return flip(x, 1)


def flipud(m):
    """`np.flipud`: reverse axis 0.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.flipud(np.array([1, 2]))
    array([2, 1])
    """
    x = asarray(m)
    if len(shape_of(x)) < 1:
        raise TracejitValueError("flipud: the input must be at least 1-d")
    return flip(x, 0)


def rollaxis(a, axis: int, start: int = 0):
    """`np.rollaxis`: move `axis` to before position `start`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.rollaxis(np.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    x = asarray(a)
    nd = len(shape_of(x))
    axes = list(range(nd))
    axis = normalize_axis(axis, nd, "rollaxis")
    start = start + nd if start < 0 else start
    if not 0 <= start <= nd:
        raise ShapeError(f"rollaxis: start {start} is out of range for rank {nd}")
    axes.remove(axis)
    axes.insert(start - 1 if start > axis else start, axis)
    return transpose(x, axes)


def dstack(tup):
    """`np.dstack`: join along the third axis after `atleast_3d`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.dstack([np.ones(2), np.zeros(2)]).shape
    (1, 2, 2)
    """
    from tracejit.numpy._shape import atleast_3d

    return concatenate([atleast_3d(x) for x in tup], 2)


def hsplit(ary, indices_or_sections):
    """`np.hsplit`: split along axis 1 (axis 0 for 1-D arrays).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.hsplit(np.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    x = asarray(ary)
    return split(x, indices_or_sections, 1 if len(shape_of(x)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """`np.vsplit`: split along axis 0 (at least 2-D).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.vsplit(np.ones((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    x = asarray(ary)
    if len(shape_of(x)) < 2:
        raise TracejitValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """`np.dsplit`: split along axis 2 (at least 3-D).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.dsplit(np.ones((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    x = asarray(ary)
    if len(shape_of(x)) < 3:
        raise TracejitValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """Array-API `unstack`: the slices along `axis`, as a tuple.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> [p.shape for p in tnp.unstack(np.ones((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    x = asarray(x)
    axis = normalize_axis(axis, len(shape_of(x)), "unstack")
    pieces = array_split(x, shape_of(x)[axis], axis)
    return tuple(reshape(p, shape_of(p)[:axis] + shape_of(p)[axis + 1 :]) for p in pieces)


def kron(a, b):
    """`np.kron`: the Kronecker product.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.kron(np.array([1, 10]), np.array([1, 2]))
    array([ 1,  2, 10, 20])
    """
    a, b = promote(asarray(a), asarray(b))
    nd = max(len(shape_of(a)), len(shape_of(b)))
    sa = (1,) * (nd - len(shape_of(a))) + tuple(shape_of(a))
    sb = (1,) * (nd - len(shape_of(b))) + tuple(shape_of(b))
    a2 = reshape(a, tuple(d for s in sa for d in (s, 1)))
    b2 = reshape(b, tuple(d for s in sb for d in (1, s)))
    return reshape(ew.multiply(a2, b2), tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """`np.cross` of 3-vectors (2-vectors are extended with a zero z component).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cross(np.array([1.0, 0, 0]), np.array([0.0, 1, 0]))
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(asarray(a), asarray(b))
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if shape_of(a)[-1] not in (2, 3) or shape_of(b)[-1] not in (2, 3):
        raise TracejitValueError(
            "incompatible dimensions for cross product (dimension must be 2 or 3)"
        )
    two = shape_of(a)[-1] == 2 and shape_of(b)[-1] == 2
    a = _as_xyz(a)
    b = _as_xyz(b)
    ax, ay, az = (slice_axis(a, len(shape_of(a)) - 1, i, i + 1) for i in range(3))
    bx, by, bz = (slice_axis(b, len(shape_of(b)) - 1, i, i + 1) for i in range(3))
    if two:
        return reshape(ew.subtract(ew.multiply(ax, by), ew.multiply(ay, bx)), _lead(ax, bx))
    cx = ew.subtract(ew.multiply(ay, bz), ew.multiply(az, by))
    cy = ew.subtract(ew.multiply(az, bx), ew.multiply(ax, bz))
    cz = ew.subtract(ew.multiply(ax, by), ew.multiply(ay, bx))
    c = concatenate([cx, cy, cz], -1)
    return moveaxis(c, -1, axisc)


def _as_xyz(v):
    if shape_of(v)[-1] == 3:
        return v
    return pad(v, [(0, 0)] * (len(shape_of(v)) - 1) + [(0, 1)])


def _lead(x, y):
    return np.broadcast_shapes(tuple(shape_of(x))[:-1], tuple(shape_of(y))[:-1])


def vander(x, N=None, increasing: bool = False):
    """`np.vander`: columns are powers of `x` (decreasing unless `increasing`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.vander(np.array([1, 2, 3]), 3)
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    x = asarray(x)
    if len(shape_of(x)) != 1:
        raise TracejitValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    (xp,) = promote(x)
    return ew.power(
        reshape(xp, (-1, 1)), powers.astype(xp.dtype if xp.dtype.kind != "b" else np.int64)
    )


__all__ = defined_here(globals(), exclude=("rearrange",))  # noqa: PLE0605
