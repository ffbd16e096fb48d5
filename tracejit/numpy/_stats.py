"""Statistics composed from reductions: cumprod, the nan-functions, average, cov, corrcoef, ...

`cumprod` is a scan primitive (NumPy's sequential products; ir/structural.py) whose VJP is
that of a log-depth scan of multiplies, without dividing (zeros are fine). NaN-ignoring
reductions replace NaN by the operation's identity and count the non-NaN elements.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import TracejitTypeError, TracejitValueError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._complex import conj, imag, make_complex, real
from tracejit.numpy._core import asarray, broadcast_to, cast, normalize_axis, promote, shape_of
from tracejit.numpy._join import concatenate
from tracejit.numpy._shape import moveaxis, reshape
from tracejit.numpy._sorting import _moved_rows, _real_only, sort
from tracejit.numpy._variance import _abs_squared
from tracejit.tracer.core import bind

_INT64 = np.dtype(np.int64)


def cumprod(a, axis=None, dtype=None, out=None):
    """`np.cumprod`: running product, NumPy's bits (the `cumprod` scan primitive multiplies
    in NumPy's sequential order; its VJP is the log-depth scan's: exact with zeros).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cumprod(np.array([1, 2, 0, 4]))
    array([1, 2, 0, 0])
    """
    red._no_out(out, "cumprod")
    return red.scan("cumprod", a, axis, dtype)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Array-API `cumulative_prod` (needs `axis` for rank > 1).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cumulative_prod(np.array([2.0, 3.0]), include_initial=True)
    array([1., 2., 6.])
    """
    return red._cumulative("cumprod", "cumulative_prod", x, axis, dtype, include_initial)


def nancumsum(a, axis=None, dtype=None, out=None):
    """`np.nancumsum`: cumsum with NaN as 0.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.nancumsum(np.array([1.0, np.nan, 2.0]))
    array([1., 1., 3.])
    """
    red._no_out(out, "nancumsum")
    return red.cumsum(red._nan_to(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """`np.nancumprod`: cumprod with NaN as 1."""
    red._no_out(out, "nancumprod")
    return cumprod(red._nan_to(a, 1), axis=axis, dtype=dtype)


def nanprod(a, axis=None, dtype=None, out=None, keepdims: bool = False):
    """`np.nanprod`: prod with NaN as 1.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.nanprod(np.array([2.0, np.nan, 3.0])))
    6.0
    """
    return red.prod(red._nan_to(a, 1), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def _nan_extremum(reduce, fill, a, axis, keepdims):
    (x,) = promote(asarray(a))
    if not dtypes.is_inexact(x.dtype):
        return reduce(x, axis=axis, keepdims=keepdims)
    out = reduce(ew.where(ew.isnan(x), fill, x), axis=axis, keepdims=keepdims)
    all_nan = red.all(ew.isnan(x), axis=axis, keepdims=keepdims)
    return ew.where(all_nan, np.nan, out)


def nanmax(a, axis=None, out=None, keepdims: bool = False):
    """`np.nanmax`: max ignoring NaN (NaN where every element is NaN).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.nanmax(np.array([1.0, np.nan, 3.0])))
    3.0
    """
    return _nan_extremum(red.max, -np.inf, a, axis, keepdims)


def nanmin(a, axis=None, out=None, keepdims: bool = False):
    """`np.nanmin`: min ignoring NaN (NaN where every element is NaN)."""
    return _nan_extremum(red.min, np.inf, a, axis, keepdims)


def nanargmax(a, axis=None, keepdims: bool = False):
    """`np.nanargmax`: argmax ignoring NaN (an all-NaN row gives 0; NumPy raises).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.nanargmax(np.array([1.0, np.nan, 3.0])))
    2
    """
    return red.argmax(red._nan_to(a, -np.inf), axis=axis, keepdims=keepdims)


def nanargmin(a, axis=None, keepdims: bool = False):
    """`np.nanargmin`: argmin ignoring NaN (an all-NaN row gives 0; NumPy raises)."""
    return red.argmin(red._nan_to(a, np.inf), axis=axis, keepdims=keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof: float = 0, keepdims: bool = False):
    """`np.nanvar`: var of the non-NaN elements (float16 and bfloat16 worked in float32, as
    `var`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.nanvar(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    res, result_dt = _nanvar(a, axis, dtype, ddof, keepdims)
    return cast(res, result_dt)


def nanstd(a, axis=None, dtype=None, out=None, ddof: float = 0, keepdims: bool = False):
    """`np.nanstd`: the square root of `nanvar` (taken before a float16 result is rounded)."""
    res, result_dt = _nanvar(a, axis, dtype, ddof, keepdims)
    return cast(ew.sqrt(res), result_dt)


def _nanvar(a, axis, dtype, ddof: float, keepdims: bool):
    """(nanvar in the dtype of the work, the result's dtype): float16 works in float32."""
    (x,) = promote(asarray(a), to_float=True)
    if dtype is not None:
        x = cast(x, dtype)
    x_dt = x.dtype
    x = cast(x, red._work_dtype(x.dtype))
    valid = ew.logical_not(ew.isnan(x))
    count = red.sum(valid, axis=axis, keepdims=True, dtype=x.dtype)
    centre = ew.divide(red.sum(red._nan_to(x, 0), axis=axis, keepdims=True), count)
    dev = ew.where(valid, ew.subtract(x, centre), 0)
    sq = red.sum(_abs_squared(dev), axis=axis, keepdims=keepdims)
    n = red.sum(valid, axis=axis, keepdims=keepdims, dtype=sq.dtype)
    res = ew.divide(sq, ew.maximum(ew.subtract(n, ddof), 0))
    return res, x_dt if dtypes.is_low_precision(x_dt) else res.dtype


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False):  # fmt: skip
    """`np.nanquantile` ('linear'): quantiles of the non-NaN elements of each row.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.nanquantile(np.array([1.0, np.nan, 3.0, 2.0]), 0.5))
    2.0
    """
    if method != "linear":
        raise UnsupportedError("nanquantile: only method='linear' is supported")
    qs = np.asarray(q, dtype=np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise TracejitValueError("Quantiles must be in the range [0, 1]")
    x, out_shape = _moved_rows(a, axis, keepdims)
    _real_only(x, "nanquantile")
    return _nanquantile(x, qs, out_shape)


def _nanquantile(x, qs, out_shape):
    """The quantiles qs of the non-NaN elements of each row of x (rows last)."""
    last = len(shape_of(x)) - 1
    s = sort(x, -1)  # NaN last (complex: NumPy's lexicographic order)
    real = dtypes.real_dtype(x.dtype)
    count = red.sum(ew.logical_not(ew.isnan(x)), axis=-1, keepdims=True, dtype=real)
    vals = []
    for qi in qs.ravel():
        pos = ew.multiply(ew.maximum(ew.subtract(count, 1), 0), qi)
        lo, hi = ew.floor(pos), ew.ceil(pos)
        va = bind("take_along_axis", s, cast(lo, _INT64), axis=last)
        vb = bind("take_along_axis", s, cast(hi, _INT64), axis=last)
        t = ew.subtract(pos, lo)
        v = ew.add(va, ew.multiply(ew.subtract(vb, va), t))
        vals.append(ew.where(ew.equal(count, 0), np.nan, v))
    stacked = concatenate(vals, last) if vals else None
    stacked = moveaxis(stacked, -1, 0)
    return reshape(stacked, qs.shape + out_shape)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False):  # fmt: skip
    """`np.nanpercentile`: `nanquantile` with q in percent."""
    qs = np.asarray(q, dtype=np.float64) / 100
    return nanquantile(a, qs, axis, out, overwrite_input, method, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """`np.nanmedian`: the median of the non-NaN elements.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.nanmedian(np.array([1.0, np.nan, 3.0])))
    2.0
    """
    x, out_shape = _moved_rows(a, axis, keepdims)
    return _nanquantile(x, np.asarray(0.5), out_shape)


def ptp(a, axis=None, out=None, keepdims: bool = False):
    """`np.ptp`: max - min.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.ptp(np.array([4, 9, 2])))
    7
    """
    return ew.subtract(
        red.max(a, axis=axis, keepdims=keepdims), red.min(a, axis=axis, keepdims=keepdims)
    )


def count_nonzero(a, axis=None, *, keepdims: bool = False):
    """`np.count_nonzero` (int64).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> int(tnp.count_nonzero(np.array([0, 1, 2])))
    2
    """
    return red.sum(ew.not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=_INT64)


def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """`np.average`: the (weighted) mean; 1-D `weights` apply along a single `axis`; float16
    and bfloat16 sum and divide in float32, as `mean`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> float(tnp.average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
    1.5
    """
    (x,) = promote(asarray(a), to_float=True)
    if weights is None:
        avg = red.mean(x, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        count = math.prod(shape_of(x)) // max(math.prod(shape_of(avg)), 1)  # as NumPy: a constant
        return avg, red._full(count, shape_of(avg), avg.dtype, avg)
    w = asarray(weights)
    if tuple(shape_of(w)) != tuple(shape_of(x)):
        if axis is None or len(shape_of(w)) != 1:
            raise TracejitTypeError("Axis must be specified when shapes of a and weights differ.")
        ax = normalize_axis(axis, len(shape_of(x)), "average")
        w = reshape(w, tuple(shape_of(w)[0] if i == ax else 1 for i in range(len(shape_of(x)))))
    x, w = promote(x, w)
    avg_dt, work = x.dtype, red._work_dtype(x.dtype)
    x, w = cast(x, work), cast(broadcast_to(w, shape_of(x)), work)
    scl = red.sum(w, axis=axis, keepdims=keepdims)
    avg = ew.divide(red.sum(ew.multiply(x, w), axis=axis, keepdims=keepdims), scl)
    avg, scl = cast(avg, avg_dt), cast(scl, avg_dt)
    return (avg, scl) if returned else avg


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, *, dtype=None):  # fmt: skip
    """`np.cov` (no fweights/aweights): rows are variables unless `rowvar=False`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if fweights is not None or aweights is not None:
        raise UnsupportedError("cov: fweights and aweights are not supported")
    (x,) = promote(asarray(m), to_float=True)
    x = reshape(x, (1, -1)) if len(shape_of(x)) < 2 else x
    if not rowvar:
        x = moveaxis(x, 0, 1)
    if y is not None:
        (yy,) = promote(asarray(y), to_float=True)
        yy = reshape(yy, (1, -1)) if len(shape_of(yy)) < 2 else yy
        x = concatenate(promote(x, yy if rowvar else moveaxis(yy, 0, 1)), 0)
    if dtype is not None:
        x = cast(x, dtype)
    n = shape_of(x)[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    xc = ew.subtract(x, red.mean(x, axis=1, keepdims=True))
    from tracejit.numpy._linalg import matmul

    c = ew.divide(matmul(xc, conj(moveaxis(xc, 0, 1))), max(n - ddof, 0))  # X X^H
    return reshape(c, ()) if shape_of(c) == (1, 1) else c


def corrcoef(x, y=None, rowvar: bool = True, *, dtype=None):
    """`np.corrcoef`: `cov` normalized by the standard deviations, clipped to [-1, 1].

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if not shape_of(c):
        return ew.divide(c, c)
    d = ew.sqrt(real(red.sum(ew.multiply(c, _eye_like(c)), axis=1)))
    c = ew.divide(ew.divide(c, reshape(d, (-1, 1))), reshape(d, (1, -1)))
    if dtypes.is_complex(c.dtype):  # each part clipped alone, as NumPy's
        return make_complex(ew.clip(real(c), -1, 1), ew.clip(imag(c), -1, 1))
    return ew.clip(c, -1, 1)


def _eye_like(c):
    from tracejit.numpy._creation import eye

    return eye(shape_of(c)[0], dtype=c.dtype)


__all__ = defined_here(globals())  # noqa: PLE0605
