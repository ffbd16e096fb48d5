"""More compositions: matvec/vecmat, block, functional put/place/fill_diagonal, histogram,
poly, gcd/lcm, apply_over_axes.

NumPy's `put`, `place`, `put_along_axis` and `fill_diagonal` write in place; these return the
updated array instead (JAX's `inplace=False`), and say so when asked to write in place.
"""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import TracejitTypeError, UnsupportedError
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._complex import conj
from tracejit.numpy._core import asarray, broadcast_all, cast, promote, shape_of
from tracejit.numpy._creation import linspace
from tracejit.numpy._indexing import IndexUpdate
from tracejit.numpy._join import concatenate, slice_axis, stack
from tracejit.numpy._linalg import matmul
from tracejit.numpy._shape import ravel, reshape
from tracejit.numpy._signal import convolve
from tracejit.numpy._sorting import searchsorted
from tracejit.tracer.core import Tracer, bind

bool = np.bool_
einsum_path, from_dlpack = np.einsum_path, np.from_dlpack


def matvec(x1, x2, /):
    """`np.matvec`: matrix-vector products over broadcast leading axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.matvec(np.ones((2, 3)), np.arange(3.0))
    array([3., 3.])
    """
    x2 = asarray(x2)
    out = matmul(x1, reshape(x2, tuple(shape_of(x2)) + (1,)))
    return reshape(out, tuple(shape_of(out))[:-1])


def vecmat(x1, x2, /):
    """`np.vecmat`: conj(vector)-matrix products over broadcast leading axes.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.vecmat(np.arange(2.0), np.ones((2, 3)))
    array([1., 1., 1.])
    """
    x1 = conj(asarray(x1))  # NumPy's vecmat conjugates the vector (as vecdot does)
    row = reshape(x1, tuple(shape_of(x1))[:-1] + (1, shape_of(x1)[-1]))
    out = matmul(row, x2)
    return reshape(out, tuple(shape_of(out))[:-2] + (shape_of(out)[-1],))


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise UnsupportedError(
            f"{name}(..., inplace=True) writes into its argument, which traced arrays cannot "
            "do: pass inplace=False and use the returned array"
        )


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """`np.put` as a function (`inplace=False`): a copy with `a.flat[ind] = v`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.put(np.zeros(4), [1, 3], [5.0, 6.0], inplace=False)
    array([0., 5., 0., 6.])
    """
    _no_inplace("put", inplace)
    x = asarray(a)
    idx = asarray(ind)
    flat = ravel(x)
    n = shape_of(flat)[0]
    idx = ew.remainder(idx, n) if mode == "wrap" else idx
    vals = np.resize(v, shape_of(idx)) if not isinstance(v, Tracer) else v
    return reshape(IndexUpdate(flat, idx).set(vals), shape_of(x))


def place(arr, mask, vals, *, inplace: bool = True):
    """`np.place` as a function (`inplace=False`) with a concrete mask: the masked elements
    take `vals` in order, repeated as needed.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.place(np.zeros(4), np.array([1, 0, 1, 1]), [7.0, 8.0], inplace=False)
    array([7., 0., 8., 7.])
    """
    _no_inplace("place", inplace)
    m = np.asarray(mask, np.bool_)  # a traced mask raises ConcretizationError here
    x = asarray(arr)
    where = np.flatnonzero(m)
    v = ravel(asarray(vals))
    picks = np.arange(where.size) % max(shape_of(v)[0], 1)
    return reshape(IndexUpdate(ravel(x), where).set(bind("take", v, picks, axis=0)), shape_of(x))


def put_along_axis(arr, indices, values, axis, *, inplace: bool = True, mode=None):
    """`np.put_along_axis` as a function (`inplace=False`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.put_along_axis(np.zeros((2, 2)), np.array([[1], [0]]), 9.0, 1, inplace=False)
    array([[0., 9.],
           [9., 0.]])
    """
    _no_inplace("put_along_axis", inplace)
    x = asarray(arr)
    shape = tuple(shape_of(x))
    idx = asarray(indices)
    ax = axis % len(shape)
    grids = list(np.indices(shape_of(idx), sparse=True))
    grids[ax] = idx
    return IndexUpdate(x, tuple(grids)).set(values)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """`np.fill_diagonal` as a function (`inplace=False`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fill_diagonal(np.zeros((2, 3)), 1.0, inplace=False)
    array([[1., 0., 0.],
           [0., 1., 0.]])
    """
    _no_inplace("fill_diagonal", inplace)
    x = asarray(a)
    probe = np.zeros(shape_of(x), np.bool_)
    np.fill_diagonal(probe, True, wrap=wrap)
    where = np.flatnonzero(probe)
    v = ravel(asarray(val))
    picks = np.arange(where.size) % max(shape_of(v)[0], 1)
    return reshape(IndexUpdate(ravel(x), where).set(bind("take", v, picks, axis=0)), shape_of(x))


def block(arrays):
    """`np.block`: assemble nested lists of arrays (the innermost list joins the last axis).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 3))]]).shape
    (3, 3)
    """
    depth = _depth(arrays)
    ndim = max(depth, _max_ndim(arrays))
    return _block(arrays, depth, ndim)


def _depth(x) -> int:
    return 1 + _depth(x[0]) if isinstance(x, list) and x else 0


def _max_ndim(x) -> int:
    if isinstance(x, list):
        return max((_max_ndim(e) for e in x), default=0)
    return len(shape_of(asarray(x)))


def _block(x, depth: int, ndim: int):
    if not isinstance(x, list):
        a = asarray(x)
        return reshape(a, (1,) * (ndim - len(shape_of(a))) + tuple(shape_of(a)))
    parts = [_block(e, depth - 1, ndim) for e in x]
    return concatenate(parts, ndim - depth)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """`np.histogram_bin_edges` for an int `bins` (from `range` or the data's min and max)
    or explicit edges.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.histogram_bin_edges(np.array([0.0, 1.0, 4.0]), 4)
    array([0., 1., 2., 3., 4.])
    """
    (x,) = promote(asarray(a), to_float=True)
    if not isinstance(bins, (int, np.integer)):
        return asarray(bins)
    lo, hi = (red.min(x), red.max(x)) if range is None else (float(range[0]), float(range[1]))
    same = ew.equal(lo, hi)
    lo, hi = ew.where(same, ew.subtract(lo, 0.5), lo), ew.where(same, ew.add(hi, 0.5), hi)
    return cast(linspace(lo, hi, int(bins) + 1), x.dtype)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """`np.histogram`: (counts or weighted sums or densities, edges); values outside the edges
    are dropped, the last bin includes its right edge.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.histogram(np.array([0.0, 1.0, 1.5, 4.0]), 4)[0]
    array([1, 2, 0, 1])
    """
    (x,) = promote(ravel(asarray(a)), to_float=True)
    edges = histogram_bin_edges(x, bins, range)
    nb = shape_of(edges)[0] - 1
    idx = ew.subtract(searchsorted(edges, x, side="right"), 1)
    last = bind("take", edges, np.int64(nb), axis=0)
    idx = ew.where(ew.equal(x, last), nb - 1, idx)
    inside = ew.logical_and(ew.greater_equal(idx, 0), ew.less(idx, nb))
    slot = ew.where(inside, idx, nb)
    if weights is None:
        w = np.ones(shape_of(x), np.int64)
    else:
        (w,) = promote(ravel(asarray(weights)))
    zeros = np.zeros(nb + 1, w.dtype)
    counts = slice_axis(bind("take_add", zeros, slot, w, axis=0), 0, 0, nb)
    if density:
        widths = ew.subtract(slice_axis(edges, 0, 1, nb + 1), slice_axis(edges, 0, 0, nb))
        counts = ew.divide(ew.divide(counts, red.sum(counts)), widths)
    return counts, edges


def _bin_index(x, edges):
    """(bin of each value along `edges`, whether it falls inside them)."""
    nb = shape_of(edges)[0] - 1
    idx = ew.subtract(searchsorted(edges, x, side="right"), 1)
    idx = ew.where(ew.equal(x, bind("take", edges, np.int64(nb), axis=0)), nb - 1, idx)
    return idx, ew.logical_and(ew.greater_equal(idx, 0), ew.less(idx, nb))


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """`np.histogramdd` of an (N, D) sample: (counts, [edges per dimension]).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.histogramdd(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), 2)[0]
    array([[1., 0.],
           [1., 1.]])
    """
    (x,) = promote(asarray(sample), to_float=True)
    d = shape_of(x)[1]
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    ranges = [None] * d if range is None else list(range)
    cols = [reshape(slice_axis(x, 1, i, i + 1), (-1,)) for i in np.arange(d)]
    edges = [histogram_bin_edges(c, b, r) for c, b, r in zip(cols, bins, ranges)]
    sizes = [shape_of(e)[0] - 1 for e in edges]
    linear, inside = None, None
    for c, e, n in zip(cols, edges, sizes):
        idx, ok = _bin_index(c, e)
        linear = idx if linear is None else ew.add(ew.multiply(linear, n), idx)
        inside = ok if inside is None else ew.logical_and(inside, ok)
    total = int(np.prod(sizes))
    w = np.ones(shape_of(cols[0]), np.float64) if weights is None else promote(
        ravel(asarray(weights)), to_float=True)[0]  # fmt: skip
    slots = ew.where(inside, linear, total)
    counts = slice_axis(bind("take_add", np.zeros(total + 1, w.dtype), slots, w, axis=0), 0, 0,
                        total)  # fmt: skip
    counts = reshape(counts, tuple(sizes))
    if density:
        cell = None
        for i, e in enumerate(edges):
            width = ew.subtract(slice_axis(e, 0, 1, sizes[i] + 1), slice_axis(e, 0, 0, sizes[i]))
            width = reshape(width, tuple(sizes[i] if j == i else 1 for j in np.arange(d)))
            cell = width if cell is None else ew.multiply(cell, width)
        counts = ew.divide(ew.divide(counts, red.sum(counts)), cell)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """`np.histogram2d`: (counts, x edges, y edges).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.histogram2d(np.array([0.0, 1.0]), np.array([1.0, 1.0]), 2)[0]
    array([[0., 1.],
           [0., 1.]])
    """
    counts, (ex, ey) = histogramdd(stack([asarray(x), asarray(y)], 1), bins, range, density,
                                   weights)  # fmt: skip
    return counts, ex, ey


def poly(seq_of_zeros):
    """`np.poly` of a 1-D sequence of real roots: the monic polynomial's coefficients.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.poly(np.array([1.0, 2.0]))
    array([ 1., -3.,  2.])
    """
    (r,) = promote(asarray(seq_of_zeros), to_float=True)
    if len(shape_of(r)) != 1:
        raise UnsupportedError("poly of a matrix needs its eigenvalues (linalg.eigvals): not yet")
    out = np.ones(1, r.dtype)
    for i in np.arange(shape_of(r)[0]):
        root = reshape(bind("take", r, np.int64(i), axis=0), (1,))
        out = convolve(out, concatenate([np.ones(1, r.dtype), ew.negative(root)]))
    return out


def gcd(x1, x2):
    """`np.gcd` of integers (Euclid's algorithm in a `while_loop`, all elements in step).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.gcd(np.array([12, -18, 0]), 8)
    array([4, 2, 8])
    """
    from tracejit.lax import while_loop

    a, b = promote(x1, x2)
    if a.dtype.kind not in "iu":
        raise TracejitTypeError(f"gcd is defined for integers, got {a.dtype}")
    a, b = broadcast_all([ew.absolute(a), ew.absolute(b)], "gcd")

    def step(ab):
        a, b = ab
        nonzero = ew.not_equal(b, 0)
        return ew.where(nonzero, b, a), ew.where(
            nonzero, ew.remainder(a, ew.where(nonzero, b, 1)), b
        )

    return while_loop(lambda ab: red.any(ew.not_equal(ab[1], 0)), step, (a, b))[0]


def lcm(x1, x2):
    """`np.lcm` of integers: |x1 * x2| / gcd (0 if either is 0).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.lcm(np.array([4, 6, 0]), 6)
    array([12,  6,  0])
    """
    a, b = promote(x1, x2)
    g = gcd(a, b)
    safe = ew.where(ew.equal(g, 0), 1, g)
    return ew.absolute(ew.multiply(ew.floor_divide(a, safe), b))


def apply_over_axes(func, a, axes):
    """`np.apply_over_axes`: `func(a, axis)` for each axis, keeping the rank.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.apply_over_axes(tnp.sum, np.ones((2, 3)), [0, 1])
    array([[6.]])
    """
    x = asarray(a)
    for axis in np.atleast_1d(axes):
        y = func(x, int(axis))
        if len(shape_of(y)) != len(shape_of(x)):
            y = reshape(y, tuple(1 if i == int(axis) % len(shape_of(x)) else d
                                 for i, d in enumerate(shape_of(x))))  # fmt: skip
        x = y
    return x


__all__ = defined_here(  # noqa: PLE0605
    globals(), exclude=("IndexUpdate",), extra=("einsum_path", "from_dlpack", "bool")
)
