"""Array creation (`zeros`, `arange`, `eye`, `asarray`, ...) and dtype helpers (`astype`).

With no tracer among the arguments these return NumPy arrays, exactly as NumPy would; inside
`jit` such an array becomes a constant node when it meets a traced value. Arguments that are
traced (`zeros_like(t)`, `full(shape, t)`, `asarray([t, 1.0])`) give traced results.
Shapes and `arange` bounds must be static Python numbers: a traced one raises
ConcretizationError naming the line.
"""

from __future__ import annotations

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import ShapeError, TracejitValueError
from tracejit.ir import dtypes
from tracejit.ir.primitives import get
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._array_api_info import check_array_device
from tracejit.numpy._const_array import returns_const_array
from tracejit.numpy._core import asarray as core_asarray
from tracejit.numpy._core import (
    aval_of,
    broadcast_to,
    cast,
    constant,
    innermost_trace,
    promote,
    shape_of,
)
from tracejit.tracer.checks import check_int_fits
from tracejit.tracer.core import Tracer, bind

_FLOAT64 = np.dtype(np.float64)


# ---------------------------------------------------------------- helpers


def _static(x, what: str):
    """A Python number for `x`; a tracer raises ConcretizationError naming `what`."""
    if isinstance(x, Tracer):
        raise x._concretization_error(f"Using as {what}")
    return x


def _shape(shape, what: str = "a shape") -> tuple[int, ...]:
    if isinstance(shape, Tracer):
        raise shape._concretization_error(f"Using as {what}")
    dims = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    out = tuple(int(_static(d, what)) for d in dims)
    if any(d < 0 for d in out):
        raise ShapeError(f"negative dimensions are not allowed: {out}")
    return out


def _dtype(dtype, default) -> np.dtype:
    return dtypes.canonical(default if dtype is None else dtype)


def _filled(shape, value, dtype, trace):
    """`value` broadcast to `shape`: NumPy when `trace` is None, else a const in `trace`."""
    if trace is None:
        return np.full(shape, value, dtype=dtype)
    return broadcast_to(constant(value, dtype, weak=False, trace=trace), shape)


def iota(shape, dtype, axis: int, trace=None, source: str | None = None):
    """`0, 1, 2, ...` along `axis`, broadcast to `shape`; a node in `trace` when given.

    Used instead of NumPy constants (eye, masks) so the graph holds no large arrays.

    >>> import numpy as np
    >>> iota((2, 3), np.int64, axis=1)
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    attrs = {"shape": tuple(int(d) for d in shape), "dtype": dtypes.canonical(dtype), "axis": axis}
    if trace is None:
        return bind("iota", **attrs)
    (v,) = trace.record(get("iota"), [], attrs, source=source)
    return Tracer(trace, v, None)


def offset_mask(n: int, m: int, k: int, cmp: str, trace=None):
    """Boolean (n, m) mask of `col - row <= k` (`cmp` "le": a triangle) or `== k` ("eq": a
    diagonal), built from `iota` (no constant array)."""
    rows = iota((n, m), np.int64, 0, trace)
    cols = iota((n, m), np.int64, 1, trace)
    return bind(cmp, cols, bind("add", rows, _filled((n, m), k, np.int64, trace)))


# ---------------------------------------------------------------- filled arrays


def zeros(shape, dtype=None) -> np.ndarray:
    """`np.zeros` (float64 by default).

    >>> import tracejit.numpy as tnp
    >>> tnp.zeros((2,), dtype="int32")
    array([0, 0], dtype=int32)
    """
    return np.zeros(_shape(shape), dtype=_dtype(dtype, _FLOAT64))


def ones(shape, dtype=None) -> np.ndarray:
    """`np.ones` (float64 by default).

    >>> import tracejit.numpy as tnp
    >>> tnp.ones(2)
    array([1., 1.])
    """
    return np.ones(_shape(shape), dtype=_dtype(dtype, _FLOAT64))


empty = zeros  # compiled code has no uninitialized memory worth exposing


def full(shape, fill_value, dtype=None):
    """`np.full`; a traced `fill_value` (of any broadcastable shape) gives a traced result.

    >>> import tracejit.numpy as tnp
    >>> tnp.full((2,), 7)
    array([7, 7])
    """
    shape = _shape(shape)
    if isinstance(fill_value, Tracer):
        value = cast(fill_value, dtype) if dtype is not None else cast(fill_value, fill_value.dtype)
        return broadcast_to(value, shape)
    dt = _dtype(dtype, aval_of(fill_value)[0])
    check_int_fits(fill_value, dt, "fill_value")
    return np.full(shape, fill_value, dtype=dt)


def _like(a, value, dtype, shape):
    dt = _dtype(dtype, aval_of(a)[0])
    shape = _shape(shape_of(a) if shape is None else shape)
    if isinstance(value, Tracer):
        return broadcast_to(cast(value, dt), shape)
    return _filled(shape, value, dt, innermost_trace([a]))


def zeros_like(a, dtype=None, shape=None):
    """`np.zeros_like`; traced when `a` is traced (a broadcast scalar, not a big constant).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.zeros_like(np.ones(2, np.float32))
    array([0., 0.], dtype=float32)
    """
    return _like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    """`np.ones_like`; traced when `a` is traced.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.ones_like(np.zeros(2, np.int32))
    array([1, 1], dtype=int32)
    """
    return _like(a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """`np.full_like`; traced when `a` or `fill_value` is traced.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.full_like(np.zeros(2), 0.5)
    array([0.5, 0.5])
    """
    return _like(a, fill_value, dtype, shape)


empty_like = zeros_like


# ---------------------------------------------------------------- ranges


def arange(start, stop=None, step=None, dtype=None) -> np.ndarray:
    """`np.arange` over static Python numbers (int64 for ints, float64 for floats).

    >>> import tracejit.numpy as tnp
    >>> tnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    start, stop, step = (_static(b, "an arange bound") for b in (start, stop, step))
    if step is not None and not step:
        raise TracejitValueError("arange: step must not be zero")
    out = np.arange(start, stop, step, dtype=None if dtype is None else dtypes.canonical(dtype))
    return out.astype(dtypes.canonical(aval_of(out)[0]), copy=False)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):  # fmt: skip
    """`np.linspace`; traced `start`/`stop` give a traced result (built from `iota`).

    >>> import tracejit.numpy as tnp
    >>> tnp.linspace(0.0, 1.0, 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = int(_static(num, "the number of linspace samples"))
    if num < 0:
        raise TracejitValueError(f"linspace: num must be non-negative, got {num}")
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        dt = None if dtype is None else dtypes.canonical(dtype)
        out = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dt, axis=axis)
        return out
    return _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis)


def _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis):
    start, stop = promote(start, stop, float(num), to_float=True)[:2]
    start, stop = cast(start, start.dtype), cast(stop, stop.dtype)  # strong, like NumPy
    dt = start.dtype
    div = (num - 1) if endpoint else num
    bshape = np.broadcast_shapes(shape_of(start), shape_of(stop))
    out_shape = (num, *bshape)
    trace = innermost_trace([start, stop])
    delta = ew.subtract(stop, start)
    ramp = cast(iota(out_shape, np.int64, 0, trace), dt)
    step = ew.divide(delta, div) if div > 0 else ew.multiply(delta, np.nan)
    y = ew.add(ew.multiply(ramp, step if div > 0 else delta), start)
    if endpoint and num > 1:
        is_last = bind(
            "eq", iota(out_shape, np.int64, 0, trace), _filled(out_shape, num - 1, np.int64, trace)
        )
        y = ew.where(is_last, broadcast_to(stop, out_shape), y)
    if dtype is not None:
        target = dtypes.canonical(dtype)
        y = cast(ew.floor(y) if not dtypes.is_float(target) else y, target)
    if axis != 0:
        y = _move_first_axis(y, axis)
    return (y, step) if retstep else y


def _move_first_axis(y, axis: int):
    ndim = len(shape_of(y))
    axis = axis % ndim
    perm = list(range(1, ndim))
    perm.insert(axis, 0)
    return bind("transpose", y, perm=tuple(perm))


# ---------------------------------------------------------------- matrices


def eye(N: int, M: int | None = None, k: int = 0, dtype=None) -> np.ndarray:
    """`np.eye`: ones on the `k`-th diagonal of an N x M matrix (float64 by default).

    >>> import tracejit.numpy as tnp
    >>> tnp.eye(2, dtype="int32")
    array([[1, 0],
           [0, 1]], dtype=int32)
    """
    return _offset_matrix("eye", "eq", N, M, k, dtype)


def identity(n: int, dtype=None) -> np.ndarray:
    """`np.identity`: the n x n identity matrix.

    >>> import tracejit.numpy as tnp
    >>> tnp.identity(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None) -> np.ndarray:
    """`np.tri`: ones at and below the `k`-th diagonal.

    >>> import tracejit.numpy as tnp
    >>> tnp.tri(2, dtype="int64")
    array([[1, 0],
           [1, 1]])
    """
    return _offset_matrix("tri", "le", N, M, k, dtype)


def _offset_matrix(what: str, cmp: str, N, M, k, dtype):
    """An N x M matrix of ones where `offset_mask(..., k, cmp)` holds (`eye`, `tri`)."""
    n = int(_static(N, f"the size of {what}"))
    m = n if M is None else int(_static(M, f"the size of {what}"))
    mask = offset_mask(n, m, int(_static(k, f"the diagonal of {what}")), cmp)
    return cast(mask, _dtype(dtype, _FLOAT64))


# ---------------------------------------------------------------- conversion


_PY_SCALARS = (bool, int, float, complex)


def asarray(a, dtype=None, *, copy: bool | None = None, device=None):
    """`np.asarray` with the Array API's `copy` and `device`; nested lists holding tracers
    are stacked into one traced array (numpy/_core.py).

    `copy=True` always copies NumPy data (the result shares no memory with `a`);
    `copy=False` raises ValueError where a copy is needed (a list, a scalar, another dtype),
    as NumPy 2's `np.asarray(copy=False)`; None copies only then. A traced value cannot be
    written to, so for one a copy changes nothing and is not made. `device` is None or
    "cpu", the device of every tnp array (numpy/_array_api_info.py).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> a = np.ones(2)
    >>> np.shares_memory(tnp.asarray(a, copy=True), a), np.shares_memory(tnp.asarray(a), a)
    (False, True)
    >>> tnp.asarray([1, 2], dtype="float32")
    array([1., 2.], dtype=float32)
    """
    if device is not None:
        check_array_device(device, "asarray")
    if copy is None:
        return core_asarray(a, dtype)
    if not copy:
        _check_no_copy_needed(a, dtype)
        return core_asarray(a, dtype)
    out = core_asarray(a, dtype)
    if isinstance(out, Tracer) or isinstance(a, (list, tuple, _PY_SCALARS)):
        return out  # made anew already (a list's stacked tracers are a new value too)
    return np.array(out, copy=True)


def _check_no_copy_needed(a, dtype) -> None:
    """ValueError naming what would be copied when `asarray(a, dtype)` cannot view `a`."""
    dt = None if dtype is None else dtypes.canonical(dtype)
    if isinstance(a, Tracer):
        if dt is None or dt == a.dtype:
            return
        what = f"a traced {a.dtype} value"
    elif isinstance(a, (list, tuple)):  # NumPy never views one; it may hold tracers
        what = f"a Python {type(a).__name__}"
    else:
        dt = aval_of(a)[0] if dt is None else dt
        try:
            np.asarray(a, dtype=dt, copy=False)
            return
        except ValueError:
            what = _described(a)
    of = "" if dt is None else f" of {dt}"
    raise TracejitValueError(
        f"asarray(copy=False): making an array{of} from {what} needs a copy; pass copy=None "
        "to copy only where needed, or copy=True"
    )


def _described(a) -> str:
    if isinstance(a, (np.ndarray, np.generic)):
        return f"a NumPy {'array' if isinstance(a, np.ndarray) else 'scalar'} of {a.dtype}"
    return f"a {'Python ' if isinstance(a, _PY_SCALARS) else ''}{type(a).__name__}"


def array(object, dtype=None, copy: bool = True, ndmin: int = 0):
    """`np.array`: like `asarray`, and a copy for NumPy input.

    >>> import tracejit.numpy as tnp
    >>> tnp.array([[1.0, 2.0]], ndmin=3).shape
    (1, 1, 2)
    """
    out = asarray(object, dtype)
    if not isinstance(out, Tracer) and copy:
        out = np.array(out, copy=True)
    extra = ndmin - len(shape_of(out))
    if extra > 0:
        out = bind("reshape", out, shape=(1,) * extra + tuple(shape_of(out)))
    return out


def astype(x, dtype, /, *, copy: bool = True):
    """Array-API `astype`: `x` converted to `dtype` (float -> int truncates toward zero).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.astype(np.array([1.7, -1.7]), "int32")
    array([ 1, -1], dtype=int32)
    """
    if not isinstance(x, Tracer):
        x = np.asarray(x, dtype=aval_of(x)[0])
    out = cast(x, dtype)
    if copy and not isinstance(out, Tracer) and out is x:
        out = np.array(out, copy=True)
    return out


# Concrete results are ConstArrays: `.at[...]` and traced indices work on them, as in JAX.
zeros, ones, full, arange, linspace = map(
    returns_const_array, (zeros, ones, full, arange, linspace)
)
zeros_like, ones_like, full_like = map(returns_const_array, (zeros_like, ones_like, full_like))
eye, identity, tri = map(returns_const_array, (eye, identity, tri))
asarray, array = returns_const_array(asarray), returns_const_array(array)
empty, empty_like = zeros, zeros_like

__all__ = defined_here(  # noqa: PLE0605
    globals(), exclude=("iota", "offset_mask"), extra=("asarray",)
)
