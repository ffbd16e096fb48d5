"""Sorting and order statistics: sort, argsort, searchsorted, quantile, ...

`argsort` binds the `argsort` primitive (tracejit/ir/sorting.py: NumPy's stable O(n log n)
sort, NaN last, run as a host step by the compiled programs); `sort` binds the `sort`
primitive (NumPy's default SIMD sort; its VJP sends each cotangent back along the stable
argsort), and `sort(descending=True)` gathers by the descending argsort. `searchsorted` still counts comparisons (O(len(a) * v.size)).
`median`/`percentile`/`quantile` index the sorted rows and interpolate (NumPy's 'linear').
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import TracejitTypeError, TracejitValueError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._complex import real_only
from tracejit.numpy._complex_order import sort_keys, sorts_before
from tracejit.numpy._core import asarray, cast, normalize_axes, promote, shape_of
from tracejit.numpy._quantile_methods import DISCRETE, METHODS, integer_positions, positions
from tracejit.numpy._shape import moveaxis, ravel, reshape
from tracejit.tracer.core import bind

_INT64 = np.dtype(np.int64)


def _before(a, b):
    """a sorts strictly before b: a < b, and any number before NaN (complex: sort's order)."""
    if dtypes.is_complex(a.dtype):
        return sorts_before(a, b)
    lt = ew.less(a, b)
    if dtypes.is_float(a.dtype) or dtypes.is_float(getattr(b, "dtype", a.dtype)):
        lt = ew.logical_or(lt, ew.logical_and(ew.isnan(b), ew.logical_not(ew.isnan(a))))
    return lt


def _last_axis(a, axis):
    """(x with `axis` moved last (flattened when None), the axis it came from or None)."""
    (x,) = promote(asarray(a))
    if axis is None:
        return ravel(x), None
    ax = normalize_axes(axis, len(shape_of(x)), "sort")[0]
    return moveaxis(x, ax, -1), ax


def _argsort_last(x):
    return bind("argsort", x, axis=len(shape_of(x)) - 1)


def argsort(a, axis: int | None = -1, kind=None, order=None, *, stable: bool = True,
            descending: bool = False):  # fmt: skip
    """`np.argsort` (always stable; NaN last; `descending` keeps ties in order, as JAX does).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.argsort(np.array([3.0, np.nan, 1.0, 3.0]))
    array([2, 0, 3, 1])
    """
    if order is not None:
        raise UnsupportedError("argsort: order= (structured arrays) is not supported")
    x, ax = _last_axis(a, axis)
    if dtypes.is_complex(x.dtype):  # NumPy's lexicographic order, NaN classes last
        out = lexsort(sort_keys(x, descending), axis=-1)
        return out if ax is None else moveaxis(out, -1, ax)
    if descending:
        x = ew.negative(x) if x.dtype != np.bool_ else ew.logical_not(x)
    out = _argsort_last(x)
    return out if ax is None else moveaxis(out, -1, ax)


def sort(a, axis: int | None = -1, kind=None, order=None, *, stable: bool = True,
         descending: bool = False):  # fmt: skip
    """`np.sort` (NaN last), by NumPy's default sort: equal values are interchangeable, so only
    -0.0 and 0.0 may come out in another order than a stable sort's. Differentiable: each
    cotangent goes back along the stable argsort (ties in input order).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.sort(np.array([[3, 1, 2], [0, 5, 4]]), axis=1)
    array([[1, 2, 3],
           [0, 4, 5]])
    """
    x, ax = _last_axis(a, axis)
    if descending or dtypes.is_complex(x.dtype):  # by the stable (complex: lexicographic)
        idx = argsort(x, -1, descending=descending)  # argsort; ties keep their order (JAX)
        out = bind("take_along_axis", x, idx, axis=len(shape_of(x)) - 1)
    else:
        out = bind("sort", x, axis=len(shape_of(x)) - 1)
    return out if ax is None else moveaxis(out, -1, ax)


def partition(a, kth, axis: int = -1):
    """`np.partition`: the fully sorted array satisfies its contract (and is what we return).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.partition(np.array([3, 1, 2]), 1)[1])
    2
    """
    return sort(a, axis)


def argpartition(a, kth, axis: int = -1):
    """`np.argpartition`: a full stable `argsort` satisfies its contract."""
    return argsort(a, axis)


def lexsort(keys, axis: int = -1):
    """`np.lexsort`: indices sorting by the last key, then the one before it, ...

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.lexsort((np.array([1, 0, 2]), np.array([1, 1, 0])))
    array([2, 1, 0])
    """
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TracejitTypeError("need sequence of keys with len > 0 in lexsort")
    last = len(shape_of(keys[0])) - 1
    idx = argsort(keys[0], axis)
    for k in keys[1:]:
        k = moveaxis(k, axis, -1)
        moved = moveaxis(idx, axis, -1)
        order = argsort(bind("take_along_axis", k, moved, axis=last), -1)
        idx = moveaxis(bind("take_along_axis", moved, order, axis=last), -1, axis)
    return idx


def searchsorted(a, v, side: str = "left", sorter=None):
    """`np.searchsorted` on a 1-D sorted `a`: a binary search (ir/searchsorted.py; complex
    values count comparisons, O(len(a) * v.size)).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.searchsorted(np.array([1, 2, 2, 3]), np.array([2, 5]), side="right")
    array([3, 4])
    """
    a = asarray(a)
    if len(shape_of(a)) != 1:
        raise TracejitValueError("searchsorted: a must be 1-D")
    if sorter is not None:
        a = bind("take", a, asarray(sorter), axis=0)
    a, v = promote(a, asarray(v))
    if side not in ("left", "right"):
        raise TracejitValueError(f"side must be 'left' or 'right', got {side!r}")
    if not dtypes.is_complex(a.dtype):
        return bind("searchsorted", a, v, side=side)
    vs = tuple(shape_of(v))
    ve = reshape(v, vs + (1,))
    hit = _before(a, ve) if side == "left" else ew.logical_not(_before(ve, a))
    return red.sum(hit, axis=-1)


def digitize(x, bins, right: bool = False):
    """`np.digitize`: the bin of each value (bins increasing, or decreasing if concrete).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.digitize(np.array([0.5, 1.0, 2.5]), np.array([1.0, 2.0]))
    array([0, 1, 2])
    """
    real_only("digitize", x, bins)  # NumPy: x may not be complex
    b = asarray(bins)
    side = "left" if right else "right"
    if isinstance(b, np.ndarray) and b.size > 1 and b[0] > b[-1]:
        n = b.shape[0]
        return ew.subtract(n, searchsorted(b[::-1], x, side=side))
    return searchsorted(b, x, side=side)


def _moved_rows(a, axis, keepdims, to_float: bool = True):
    """(x with the reduced axes merged last, output shape without q, keepdims shape)."""
    x = asarray(a)
    if to_float:
        (x,) = promote(x, to_float=True)
    shape = tuple(shape_of(x))
    axes = normalize_axes(axis, len(shape), "quantile")
    rest = [i for i in range(len(shape)) if i not in axes]
    x = moveaxis(x, axes, tuple(range(len(shape) - len(axes), len(shape))))
    n = math.prod(shape[i] for i in axes)
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    out_shape = kept if keepdims else tuple(shape[i] for i in rest)
    return reshape(x, tuple(shape[i] for i in rest) + (n,)), out_shape


def _interpolate(s, qs: np.ndarray, method: str, dtype: np.dtype):
    """Sorted rows `s` at NumPy's positions for quantiles `qs` by `method`
    (numpy/_quantile_methods.py), in the result `dtype`; q's axes come first. As NumPy's
    `_lerp`: the difference of the two values in their own dtype, then the weighting in the
    result's (float32 data and a float64 q: a float32 difference, weighted in float64).
    Integer data are converted first: NumPy's int8 difference wraps (percentile of [0, -128]
    at 90 is 12.8 in NumPy, with an overflow warning; -12.8 here)."""
    last = len(shape_of(s)) - 1

    def at(p):
        vals = bind("take", s, np.asarray(p, np.int64), axis=last)
        return moveaxis(vals, tuple(range(last, last + p.ndim)), tuple(range(p.ndim)))

    lo, hi, gamma = positions(method, shape_of(s)[-1], qs)
    if hi is None or np.dtype(s.dtype).kind == "b":  # (bool: linear at q = 0 or 1, an end)
        return cast(at(lo), dtype)
    a, b = at(lo), at(hi)
    if np.dtype(s.dtype).kind in "iu":  # not NumPy's: its b - a wraps in int8 (a warning)
        a, b = cast(a, dtype), cast(b, dtype)
    diff = cast(ew.subtract(b, a), dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    shape = gamma.shape + (1,) * (len(shape_of(a)) - gamma.ndim)
    # 1 - t in the weight's own dtype (float64 for a Python q, as NumPy's Python float)
    t, rest = gamma.reshape(shape).astype(dtype), (1 - gamma).reshape(shape).astype(dtype)
    # NumPy's lerp: from the nearer end, so t = 0 and t = 1 give the end values exactly
    high = (gamma >= 0.5).reshape(shape)  # (as NumPy: the weight before any rounding)
    return ew.where(high, ew.subtract(b, ew.multiply(diff, rest)), ew.add(a, ew.multiply(diff, t)))


def _real_only(x, name: str) -> None:
    if dtypes.is_complex(x.dtype):  # NumPy's TypeError (its median takes complex values)
        raise TracejitTypeError(f"{name}: a must be an array of real numbers, got {x.dtype}")


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights=None, interpolation=None):  # fmt: skip
    """`np.quantile` (concrete q in [0, 1]); NaN anywhere in a row gives NaN.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.quantile(np.array([[1.0, 2.0, 4.0], [0.0, 10.0, 5.0]]), 0.5, axis=1)
    array([2., 5.])
    """
    method = interpolation or method
    if method not in METHODS:
        raise TracejitValueError(f"quantile: {method!r} is not a method; use one of {METHODS}")
    if weights is not None or out is not None:
        raise UnsupportedError("quantile: weights= and out= are not supported")
    qs = np.asarray(q)  # a traced q raises ConcretizationError here
    if qs.dtype.kind not in "iuf":  # NumPy computes positions in q's own dtype (float32 too)
        qs = qs.astype(np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise TracejitValueError("Quantiles must be in the range [0, 1]")
    x, out_shape = _moved_rows(a, axis, keepdims, to_float=False)
    _real_only(x, "quantile")
    dtype = _quantile_dtype(np.dtype(x.dtype), q, method)
    if integer_positions(method, shape_of(x)[-1], q) and np.dtype(x.dtype).kind in "iu":
        dtype = np.dtype(x.dtype)  # NumPy: integer data at integer positions stay integers
    return _quantile_rows(x, qs, out_shape, method, dtype)


def _quantile_dtype(dt: np.dtype, q, method: str) -> np.dtype:
    """NumPy's result dtype: the data's for an order statistic (a discrete method, or linear
    at an integer q, which is 0 or 1); else the data's promoted with q's (a Python
    float weakly: float32 data stay float32, integers give float64; a list is float64)."""
    q_kind = np.asarray(q).dtype.kind
    if method in DISCRETE or (method == "linear" and q_kind in "biu"):
        return dt
    if dt.kind == "b":  # NumPy's TypeError: it subtracts bools to interpolate
        raise TracejitTypeError(
            f"quantile: method {method!r} interpolates between values, which NumPy refuses "
            "for a bool array; cast it to a number type, or use method 'lower', 'higher' "
            "or 'nearest'"
        )
    if type(q) in (int, float):  # a Python scalar: weak
        return np.result_type(dt, float(q))
    return np.result_type(dt, np.asarray(q).dtype if q_kind in "fc" else np.float64)


def _quantile_rows(x, qs, out_shape, method: str, dtype: np.dtype):
    """The quantiles qs of each row of x (rows last), of `dtype`; complex rows in NumPy's
    order."""
    s = sort(x, -1)
    vals = _interpolate(s, qs, method, dtype)
    if np.dtype(x.dtype).kind in "fc":
        vals = ew.where(red.any(ew.isnan(x), axis=-1), np.nan, vals)
    return reshape(vals, qs.shape + out_shape)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights=None,
               interpolation=None):  # fmt: skip
    """`np.percentile`: `quantile` with q in percent.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.percentile(np.arange(5.0), 25))
    1.0
    """
    # a Python scalar q stays one (weak: float32 data stay float32, as in NumPy)
    # (NumPy's q / 100: a numpy float32 q stays float32, an integer array becomes float64)
    qs = q / 100 if type(q) in (int, float) else np.asarray(q) / 100
    return quantile(a, qs, axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation)  # fmt: skip


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """`np.median`: the middle value (mean of the two middle ones for even sizes).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.median(np.array([3.0, 1.0, 4.0, 2.0])))
    2.5
    """
    if out is not None:
        raise UnsupportedError("median: no out=; use the returned value")
    x, out_shape = _moved_rows(a, axis, keepdims)
    if shape_of(x)[-1] == 0:  # NumPy: the mean of no values, NaN (quantile raises instead)
        return reshape(red.mean(x, axis=-1), out_shape)
    n = shape_of(x)[-1]
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]  # NumPy: the mean of these
    vals = red.mean(bind("take", sort(x, -1), np.array(middle), axis=len(shape_of(x)) - 1), axis=-1)
    if np.dtype(x.dtype).kind in "fc":
        vals = ew.where(red.any(ew.isnan(x), axis=-1), np.nan, vals)
    return reshape(vals, out_shape)


__all__ = defined_here(globals())  # noqa: PLE0605
