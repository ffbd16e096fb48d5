"""Reductions and scans (`sum`, `mean`, `max`, `argmax`, `cumsum`, ...) over primitives.

Result dtypes follow NumPy 2: `sum`/`prod`/`cumsum` of bool and int32 accumulate in int64,
`mean`/`var`/`std` of bool and ints are float64, `max`/`min` keep the input dtype.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitValueError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._core import (
    asarray,
    broadcast_to,
    cast,
    constant,
    innermost_trace,
    normalize_axes,
    normalize_axis,
    promote,
    shape_of,
)
from tracejit.numpy._creation import _filled
from tracejit.numpy._linalg import _reshape
from tracejit.tracer.core import Tracer, bind

_INT64 = np.dtype(np.int64)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


# ---------------------------------------------------------------- helpers


def _keep(x, in_shape, axes, keepdims: bool):
    """Re-insert the reduced `axes` as size-1 dimensions when `keepdims`."""
    if not keepdims:
        return x
    return _reshape(x, tuple(1 if i in axes else d for i, d in enumerate(in_shape)))


def _axes(axis, shape, name: str, scalar_axis: bool = True) -> tuple[int, ...]:
    """Normalized axes; NumPy's ufunc reductions accept axis 0 or -1 on a 0-d array."""
    if not shape and scalar_axis and axis is not None:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        if builtins.all(isinstance(a, (int, np.integer)) and a in (0, -1) for a in axes):
            return ()
    return normalize_axes(axis, len(shape), name)


def _count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def _full(value, shape, dtype, like):
    """An array of `value` with `shape`; a broadcast constant in `like`'s trace if it has one."""
    return _filled(shape, value, dtype, innermost_trace([like]))


def _accumulator_dtype(dt: np.dtype) -> np.dtype:
    """NumPy's sum/prod/cumsum dtype: bool and narrower ints accumulate in int64 (uint64 if
    unsigned)."""
    if dt.kind == "u":
        return np.dtype(np.uint64)
    return _INT64 if dt.kind in "bi" else dt


def _masked(x, where, fill):
    """`x` with `fill` where the `where=` mask is False (broadcast to x's shape)."""
    if where is None or where is True:
        return x
    return ew.where(where, x, constant(fill, x.dtype, False, innermost_trace([x, where])))


def _reduce(prim: str, x, axes):
    no_kernel = prim in ("reduce_prod", "reduce_max", "reduce_min")  # for complex operands
    if axes and no_kernel and dtypes.is_complex(x.dtype) and isinstance(x, Tracer):
        from tracejit.numpy import _complex_order

        if prim == "reduce_prod":
            return _complex_order.prod(x, axes)
        return _complex_order.extremum(x, axes, prim == "reduce_max")
    return x if not axes else bind(prim, x, axes=axes)


def _sum_like(prim: str, name: str, a, axis, dtype, keepdims: bool, initial, where=None):
    x = _masked(promote(a)[0], where, 0 if prim == "reduce_sum" else 1)
    shape = tuple(shape_of(x))
    axes = _axes(axis, shape, name)
    dt = dtypes.canonical(dtype) if dtype is not None else _accumulator_dtype(x.dtype)
    out = _reduce(prim, cast(x, dt), axes)
    if initial is not None:
        combine = "add" if prim == "reduce_sum" else "mul"
        init = constant(initial, dt, weak=False, trace=innermost_trace([out]))
        out = bind(combine, out, broadcast_to(init, shape_of(out)))
    return _keep(out, shape, axes, keepdims)


# ---------------------------------------------------------------- sums and products


def sum(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
    """`np.sum`: int32 and bool sum in int64; a size-0 axis sums to 0.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.sum(np.arange(6, dtype=np.int32).reshape(2, 3), axis=1)
    array([ 3, 12])
    """
    _no_out(out, "sum")
    return _sum_like("reduce_sum", "sum", a, axis, dtype, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
    """`np.prod`: int32 and bool multiply in int64; a size-0 axis gives 1.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.prod(np.array([1.0, 2.0, 3.0]))
    array(6.)
    """
    _no_out(out, "prod")
    return _sum_like("reduce_prod", "prod", a, axis, dtype, keepdims, initial, where)


def _float_dtype(x, dtype) -> np.dtype:
    if dtype is not None:
        return dtypes.canonical(dtype)
    return x.dtype if dtypes.is_inexact(x.dtype) else _FLOAT64


def _work_dtype(dt: np.dtype) -> np.dtype:
    """The dtype a mean or variance of result dtype `dt` is computed in: float16 and bfloat16
    sum and divide in float32 (cast once at the end), as NumPy's mean of float16 does and as
    cuBLAS and JAX accumulate; a float16 sum of 70000 ones would overflow to inf."""
    return _FLOAT32 if dtypes.is_low_precision(dt) else dt


def mean(a, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=None):
    """`np.mean`: ints and bools average in float64, float16 and bfloat16 in float32 (the
    result in their dtype); a size-0 axis gives nan.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.mean(np.array([1, 2], dtype=np.int32))
    array(1.5)
    """
    _no_out(out, "mean")
    (x,) = promote(a)
    dt = _float_dtype(x, dtype)
    work = _work_dtype(dt)
    if where is not None and where is not True:
        x = broadcast_to(x, np.broadcast_shapes(shape_of(x), shape_of(where)))
        total = sum(x, axis=axis, dtype=work, keepdims=keepdims, where=where)
        count = sum(broadcast_to(where, shape_of(x)), axis=axis, dtype=work, keepdims=keepdims)
        return cast(bind("div", total, count), dt)
    shape = tuple(shape_of(x))
    axes = _axes(axis, shape, "mean", scalar_axis=False)
    total = _reduce("reduce_sum", cast(x, work), axes)
    out = cast(_divide_by(total, _count(shape, axes), work), dt)
    return _keep(out, shape, axes, keepdims)


def _no_out(out, name: str) -> None:
    if out is not None:
        raise UnsupportedError(f"{name}(..., out=...) writes in place; use the returned value")


def _divide_by(x, n: float, dt):
    """`x / n` in dtype `dt` (n = 0 gives nan or inf, as NumPy does with a warning)."""
    if not dtypes.is_inexact(dt):  # mean(dtype=int): NumPy divides, then casts back
        return cast(_divide_by(cast(x, _FLOAT64), n, _FLOAT64), dt)
    denom = constant(n, dt, weak=False, trace=innermost_trace([x]))
    return bind("div", x, broadcast_to(denom, shape_of(x)))


# ---------------------------------------------------------------- extrema


def _extremum(prim: str, name: str, a, axis, keepdims: bool, initial, where=None):
    (x,) = promote(a)
    if where is not None and where is not True:
        if initial is None:
            raise TracejitValueError(f"reduction operation '{name}' does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")  # fmt: skip
        x = _masked(x, where, initial)
    shape = tuple(shape_of(x))
    axes = _axes(axis, shape, name)
    if builtins.any(shape[i] == 0 for i in axes):
        if initial is None:
            raise ShapeError(
                f"{name}: cannot reduce the size-0 axis of an array of shape {shape}: a "
                f"{name} of nothing has no value. Pass initial=..., or check the shape first."
            )
        out_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
        return _keep(_full(initial, out_shape, x.dtype, x), shape, axes, keepdims)
    out = _reduce(prim, x, axes)
    if initial is not None:
        init = constant(initial, x.dtype, weak=False, trace=innermost_trace([out]))
        combine = ew.maximum if prim == "reduce_max" else ew.minimum  # complex: NumPy's order
        out = combine(out, broadcast_to(init, shape_of(out)))
    return _keep(out, shape, axes, keepdims)


def max(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """`np.max`: NaN propagates; a size-0 axis raises ShapeError (a ValueError) unless `initial`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.max(np.array([[1, 5], [7, 2]]), axis=0)
    array([7, 5])
    """
    _no_out(out, "max")
    return _extremum("reduce_max", "max", a, axis, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """`np.min`: NaN propagates; a size-0 axis raises ShapeError (a ValueError) unless `initial`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.min(np.array([[1, 5], [7, 2]]), axis=1)
    array([1, 2])
    """
    _no_out(out, "min")
    return _extremum("reduce_min", "min", a, axis, keepdims, initial, where)


amax = max
amin = min


def _arg(prim: str, name: str, a, axis, keepdims: bool):
    (x,) = promote(a)
    shape = tuple(shape_of(x))
    if axis is None:
        flat = _reshape(x, (math.prod(shape),))
        if not flat.shape[0]:
            raise ShapeError(f"{name}: the array of shape {shape} is empty")
        out = _arg_reduce(prim, flat, 0)
        return _reshape(out, (1,) * len(shape)) if keepdims else out
    if not shape and axis in (0, -1):
        return _full(0, (), _INT64, x)  # NumPy: argmax of a 0-d array along axis 0/-1 is 0
    ax = normalize_axis(axis, len(shape), name)
    if shape[ax] == 0:
        raise ShapeError(
            f"{name}: axis {ax} of the array of shape {shape} has size 0, so there is no "
            f"{name[3:]}imum to point at"
        )
    return _keep(_arg_reduce(prim, x, ax), shape, (ax,), keepdims)


def _arg_reduce(prim: str, x, ax: int):
    if dtypes.is_complex(x.dtype) and isinstance(x, Tracer):  # NumPy's lexicographic order
        from tracejit.numpy._complex_order import arg_extremum

        return arg_extremum(x, ax, prim == "argmax")
    return bind(prim, x, axis=ax)


def argmax(a, axis=None, keepdims: bool = False):
    """`np.argmax`: index of the first maximum (of the flattened array when `axis` is None).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.argmax(np.array([1.0, 3.0, 3.0]))
    array(1)
    """
    return _arg("argmax", "argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims: bool = False):
    """`np.argmin`: index of the first minimum (of the flattened array when `axis` is None).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.argmin(np.array([2.0, 1.0, 1.0]))
    array(1)
    """
    return _arg("argmin", "argmin", a, axis, keepdims)


# ---------------------------------------------------------------- logical reductions


def _logical(prim: str, name: str, empty: bool, a, axis, keepdims: bool, where=None):
    x = _masked(cast(promote(a)[0], np.bool_), where, empty)
    shape = tuple(shape_of(x))
    axes = _axes(axis, shape, name)
    if builtins.any(shape[i] == 0 for i in axes):
        out_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
        return _keep(_full(empty, out_shape, np.bool_, x), shape, axes, keepdims)
    return _keep(_reduce(prim, x, axes), shape, axes, keepdims)


def all(a, axis=None, out=None, keepdims: bool = False, *, where=None):
    """`np.all`: True where every element is nonzero (True over a size-0 axis).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.all(np.array([[1, 0], [2, 3]]), axis=1)
    array([False,  True])
    """
    _no_out(out, "all")
    return _logical("reduce_min", "all", True, a, axis, keepdims, where)


def any(a, axis=None, out=None, keepdims: bool = False, *, where=None):
    """`np.any`: True where some element is nonzero (False over a size-0 axis).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.any(np.array([[1, 0], [0, 0]]), axis=1)
    array([ True, False])
    """
    _no_out(out, "any")
    return _logical("reduce_max", "any", False, a, axis, keepdims, where)


# ---------------------------------------------------------------- scans


def scan(prim: str, a, axis=None, dtype=None):
    """The scan primitive `prim` (cumsum, cumprod) of `a` along `axis` (of the flattened
    array when None), in NumPy's accumulator dtype unless `dtype` is given."""
    (x,) = promote(a)
    shape = tuple(shape_of(x))
    if axis is None:
        x, ax = _reshape(x, (math.prod(shape),)), 0
    elif not shape and axis in (0, -1):
        x, ax = _reshape(x, (1,)), 0  # NumPy: cumsum of a 0-d array along axis 0 has shape (1,)
    else:
        ax = normalize_axis(axis, len(shape), prim)
    dt = dtypes.canonical(dtype) if dtype is not None else _accumulator_dtype(x.dtype)
    x = cast(x, dt)
    return bind(prim, x, axis=ax) if shape_of(x)[ax] else x


def cumsum(a, axis=None, dtype=None, out=None):
    """`np.cumsum`: running sum along `axis` (of the flattened array when None).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cumsum(np.array([[1, 2], [3, 4]], dtype=np.int32))
    array([ 1,  3,  6, 10])
    """
    _no_out(out, "cumsum")
    return scan("cumsum", a, axis, dtype)


def _cumulative(prim: str, name: str, x, axis, dtype, include_initial: bool):
    """Array-API `cumulative_sum` / `cumulative_prod` (NumPy's): the scan `prim`, `axis`
    required above rank 1 (a 0-d array scans as shape (1,)), with the identity first when
    `include_initial`."""
    (x,) = promote(x)
    rank = len(shape_of(x))
    if axis is None:
        if rank > 1:
            raise ShapeError(f"{name}: pass axis= for an array of rank {rank}")
        axis = 0
    out = scan(prim, x, axis, dtype)
    if not include_initial:
        return out
    ax = normalize_axis(axis, len(shape_of(out)), name)
    widths = tuple((1, 0) if i == ax else (0, 0) for i in range(len(shape_of(out))))
    identity = constant(int(prim == "cumprod"), out.dtype, weak=False, trace=innermost_trace([out]))
    return bind("pad", out, identity, widths=widths)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Array-API `cumulative_sum`: `cumsum` that requires `axis` for rank > 1.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.cumulative_sum(np.array([1.0, 2.0]), include_initial=True)
    array([0., 1., 3.])
    """
    return _cumulative("cumsum", "cumulative_sum", x, axis, dtype, include_initial)


# ---------------------------------------------------------------- NaN-ignoring


def _nan_to(x, value):
    """NaN (in either part of a complex value, as np.isnan) as `value`."""
    (x,) = promote(asarray(x))
    return ew.where(ew.isnan(x), value, x) if dtypes.is_inexact(x.dtype) else x


def nansum(a, axis=None, dtype=None, keepdims: bool = False):
    """`np.nansum`: `sum` that treats NaN as zero.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.nansum(np.array([1.0, np.nan, 2.0]))
    array(3.)
    """
    return sum(_nan_to(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims: bool = False):
    """`np.nanmean`: the mean of the non-NaN elements (nan where there are none); float16 and
    bfloat16 sum and divide in float32, as `mean` (NumPy's nanmean of float16 sums in float16).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.nanmean(np.array([1.0, np.nan, 2.0]))
    array(1.5)
    """
    (x,) = promote(a)
    if not dtypes.is_inexact(x.dtype):
        return mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    dt = _float_dtype(x, dtype)
    work = _work_dtype(dt)
    total = sum(_nan_to(x, 0), axis=axis, dtype=work, keepdims=keepdims)
    count = sum(bind("not", ew.isnan(x)), axis=axis, dtype=work, keepdims=keepdims)
    return cast(bind("div", total, count), dt)


__all__ = defined_here(globals())  # noqa: PLE0605
