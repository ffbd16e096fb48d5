"""`var` and `std`, as NumPy's `_var`: the mean in `dtype` (a real `dtype` drops a complex
input's imaginary part there only), x - mean in their common dtype, |x - mean|**2 as
re**2 + im**2 when that is complex (a real result), summed and divided by `n - ddof`; with
`where=`, over the selected elements only (n counted per result element). float16 and
bfloat16 work in float32 throughout (the mean, the deviations, their squares' sum and the
division; `std`'s square root too), cast once at the end: NumPy's own float16 variance of
`arange(256)` overflows to inf."""

from __future__ import annotations

import builtins

import numpy as np

from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy import _reductions as red
from tracejit.numpy._core import broadcast_to, cast, promote, shape_of
from tracejit.tracer.core import bind


def _abs_squared(x):
    """|x|**2 elementwise: x * x, or re**2 + im**2 (a real value) for complex x."""
    if not dtypes.is_complex(x.dtype):
        return bind("mul", x, x)
    re, im = bind("real", x), bind("imag", x)
    return bind("add", bind("mul", re, re), bind("mul", im, im))


def _variance(a, axis, dtype, ddof: float, name: str, where=None, mean=None):
    """(sum |x - mean|**2 / (n - ddof) in the real dtype of the work, shape, axes, the real
    dtype of the result: that of the work but for float16 and bfloat16, worked in float32)."""
    (x,) = promote(a)
    where = None if where is True else where
    if where is not None:
        x = broadcast_to(x, np.broadcast_shapes(tuple(shape_of(x)), tuple(shape_of(where))))
    shape = tuple(shape_of(x))
    axes = red._axes(axis, shape, name, scalar_axis=False)
    dt = red._float_dtype(x, dtype)
    if not dtypes.is_inexact(dt):
        dt = red._FLOAT64
    result_dt, dt = dt, red._work_dtype(dt)
    work = np.result_type(x.dtype, dt) if dtypes.is_complex(x.dtype) else dt
    real = dtypes.real_dtype(work)
    x_dt = cast(x, dt)
    if where is None:
        n = red._count(shape, axes)
        centre = red._divide_by(red._reduce("reduce_sum", x_dt, axes), n, dt)
        centre = red._keep(centre, shape, axes, True)
    else:  # n is an array: one count per result element
        n = red.sum(broadcast_to(where, shape), axis=axes, dtype=real, keepdims=True)
        centre = ew.divide(red.sum(x_dt, axis=axes, dtype=dt, keepdims=True, where=where), n)
    if mean is not None:  # NumPy 2's mean=: the mean, shaped as with keepdims=True
        centre = mean
    x_work = x_dt if work == dt else cast(x, work)
    dev = bind("sub", x_work, broadcast_to(cast(centre, work), shape))
    if where is None:
        squares = red._reduce("reduce_sum", _abs_squared(dev), axes)
        res = red._divide_by(squares, builtins.max(n - ddof, 0), real)
        return res, shape, axes, dtypes.real_dtype(result_dt)
    # masked before squaring: an empty selection's nan mean stays out of the gradient
    squares = red.sum(_abs_squared(red._masked(dev, where, 0)), axis=axes)
    n = red._reshape(n, shape_of(squares))
    res = ew.divide(squares, ew.maximum(ew.subtract(n, ddof), 0))
    return res, shape, axes, dtypes.real_dtype(result_dt)


def var(a, axis=None, dtype=None, out=None, ddof: float = 0, keepdims: bool = False, *,
        where=None, mean=None, correction=None):  # fmt: skip
    """`np.var`: the mean squared deviation, divided by `n - ddof` (nan or inf when <= 0);
    of complex values, the mean of |x - mean|**2, a real value (as NumPy's).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.var(np.array([1.0, 3.0]))
    array(1.)
    >>> tnp.var(np.array([1j, -1j]))
    array(1.)
    """
    red._no_out(out, "var")
    ddof = ddof if correction is None else correction  # the array-API spelling
    res, shape, axes, result_dt = _variance(a, axis, dtype, ddof, "var", where, mean)
    res = cast(res, result_dt if dtype is None else dtype)
    return red._keep(res, shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof: float = 0, keepdims: bool = False, *,
        where=None, mean=None, correction=None):  # fmt: skip
    """`np.std`: the square root of `var` (a real value for complex input, as NumPy's).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.std(np.array([1.0, 3.0]))
    array(1.)
    """
    red._no_out(out, "std")
    ddof = ddof if correction is None else correction
    work_dtype = dtype if dtype is not None and dtypes.is_inexact(dtype) else None
    res, shape, axes, result_dt = _variance(a, axis, work_dtype, ddof, "std", where, mean)
    res = cast(bind("sqrt", res), result_dt if dtype is None else dtype)
    return red._keep(res, shape, axes, keepdims)


__all__ = ["std", "var"]
