"""Shared machinery of tracejit.numpy: promotion, broadcasting, axis normalization.

Every function here accepts tracers, NumPy arrays, NumPy scalars and Python scalars.
"""

from __future__ import annotations

import functools
import operator
import struct

import numpy as np

from tracejit.errors import (
    AxisError,
    DeviceError,
    IntegerOverflowError,
    ShapeError,
    TracejitTypeError,
    UnsupportedError,
)
from tracejit.ir import dtypes
from tracejit.ir.graph import ConstValue
from tracejit.tracer.checks import check_int_fits, reject_subclass
from tracejit.tracer.core import Trace, Tracer, bind, innermost_trace

ArrayLike = object  # Tracer | np.ndarray | np.generic | bool | int | float


def is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def aval_of(x) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an operand."""
    if isinstance(x, Tracer):
        v = x._value
        return v.dtype, v.weak
    if is_python_scalar(x):
        return dtypes.python_scalar_dtype(x), True
    reject_subclass(x, "an operand")
    if hasattr(x, "__cuda_array_interface__"):
        raise DeviceError(
            f"a GPU array ({type(x).__module__}.{type(x).__name__} of shape {tuple(x.shape)}) "
            "reached tracejit.numpy outside a jitted function's arguments: eager tracejit.numpy "
            "and the constants a jitted function closes over live on the host. Pass it as an "
            "argument of a function jitted with device='cuda', or copy it with tj.device_get(x)"
        )
    arr = np.asarray(x)
    if arr.dtype == object:
        raise UnsupportedError(f"cannot use a value of type {type(x).__name__} as an array")
    return dtypes.canonical(arr.dtype), False


def constant(x, dtype, weak: bool, trace: Trace | None):
    """`x` as an array of `dtype`: a NumPy array when eager, a const node when tracing."""
    key = None
    if trace is not None:  # a Python scalar's tracer is made once per trace (`x * 0.5` in a loop)
        key = _scalar_key(x, dtype, weak)
        found = trace.scalar_consts.get(key) if key is not None else None
        if found is not None:
            return found
    if is_python_scalar(x):
        check_int_fits(x, dtype)
    arr = np.asarray(x, dtype=dtype)
    if trace is None:
        return arr
    attrs = {"value": ConstValue(arr)}
    if weak:
        attrs["weak"] = True
    (v,) = trace.record(bind_prim("const"), [], attrs, source=None)
    out = Tracer(trace, v, None)
    if key is not None:
        trace.scalar_consts[key] = out
    return out


def _scalar_key(x, dtype, weak: bool) -> tuple | None:
    """A key telling apart every Python bool, int and float bit pattern (0.0 and -0.0, NaN
    payloads), or None for anything else (those are not remembered)."""
    kind = type(x)
    if kind is float:
        return (kind, struct.pack("<d", x), dtype, weak)
    if kind is int or kind is bool:
        return (kind, x, dtype, weak)
    return None


def bind_prim(name):
    from tracejit.ir.primitives import get

    return get(name)


def asarray(a, dtype=None):
    """`np.asarray`; nested lists holding tracers are stacked into one traced array.

    >>> import tracejit.numpy as tnp
    >>> tnp.asarray([1, 2], dtype="float32")
    array([1., 2.], dtype=float32)
    """
    if isinstance(a, Tracer):
        return a if dtype is None else cast(a, dtype)
    if isinstance(a, (list, tuple)) and _has_tracer(a):
        out = _stack_nested(a)
        return out if dtype is None else cast(out, dtype)
    dt = aval_of(a)[0] if dtype is None else dtypes.canonical(dtype)
    try:
        return np.asarray(a, dtype=dt)
    except OverflowError as err:  # a Python int beyond the dtype (NumPy's message says which)
        raise IntegerOverflowError(
            f"{err}: use a wider dtype (e.g. np.int64 or float) for the array"
        ) from None


def _has_tracer(xs) -> bool:
    return any(
        isinstance(e, Tracer) or (isinstance(e, (list, tuple)) and _has_tracer(e)) for e in xs
    )


def _stack_nested(xs):
    """One traced array from a nested list of arrays and tracers of one shape."""
    if not xs:
        raise UnsupportedError("asarray: an empty list mixed with traced values")
    items = [_stack_nested(e) if isinstance(e, (list, tuple)) else e for e in xs]
    items = promote(*items)
    shapes = {tuple(shape_of(e)) for e in items}
    if len(shapes) > 1:
        raise ShapeError(
            f"asarray: the elements have different shapes {sorted(shapes)}; a nested list must "
            "be rectangular"
        )
    (shape,) = shapes
    rows = [bind("reshape", e, shape=(1, *shape)) for e in items]
    return bind("concatenate", *rows, axis=0)


def cast(x, dtype, weak: bool = False):
    dt = dtypes.canonical(dtype)
    if isinstance(x, Tracer):
        if x.dtype == dt and x.weak == weak:
            return x
        attrs = {"dtype": dt}
        if weak:
            attrs["weak"] = True
        return bind("convert", x, **attrs)
    arr = np.asarray(x)
    return arr if arr.dtype == dt else arr.astype(dt)


def promote(*xs, to_float: bool | str = False):
    """Operands cast to their NumPy 2 result dtype; with `to_float`, bool and ints become
    float64, or with `to_float="ufunc"` the smallest float holding them, as NumPy's float
    ufuncs do (`np.exp(int8)` is float16, `np.exp(int32)` float64)."""
    avals = tuple([aval_of(x) for x in xs])
    found = _RESULT_TYPES.get(avals)
    if found is None:
        found = _RESULT_TYPES[avals] = dtypes.result_type(*avals)
    dt, weak = found
    if to_float and not dtypes.is_inexact(dt):
        smallest = to_float == "ufunc" and not weak
        dt = _smallest_float(avals, dt) if smallest else np.dtype(np.float64)
    return unify(xs, dt, weak)


def _smallest_float(avals, promoted) -> np.dtype:
    """NumPy's float ufunc loop for integer/bool operands: the first of float16, float32,
    float64 that every operand casts to safely; int8 with uint8 is float16, not the float32
    of their promoted int16. A weak Python int adopts an integer operand's type (int8 with
    7: float16) but not a bool's (bool with 7 is int64: float64), as `promoted` says."""
    floats = [np.promote_types(d, np.float16) for d, w in avals if not w]
    if len(floats) < len(avals):
        floats.append(np.promote_types(promoted, np.float16))
    return functools.reduce(np.promote_types, floats)


# (dtype, weak) of the operands -> their promoted (dtype, weak): promote runs for nearly
# every traced operation, over a handful of distinct combinations.
_RESULT_TYPES: dict[tuple, tuple[np.dtype, bool]] = {}


def as_float(x):
    """`x` as a float array or tracer (ints and bools become float64, as NumPy's ufuncs do)."""
    (x,) = promote(x, to_float=True)
    return x


def unify(xs, dt, weak):
    out = []
    for x in xs:
        if isinstance(x, Tracer):
            v = x._value
            same = (v.dtype is dt or v.dtype == dt) and v.weak == weak
            out.append(x if same else cast(x, dt, weak))
        elif is_python_scalar(x):
            out.append(constant(x, dt, weak, innermost_trace(xs)))
        else:
            out.append(cast(np.asarray(x), dt))
    return out


def shape_of(x) -> tuple[int, ...]:
    return x._value.shape if isinstance(x, Tracer) else np.shape(x)


def broadcast_shapes(*shapes, op: str = "broadcast") -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dims = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(dims) > 1:
            shown = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(f"{op}: shapes {shown} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_to(x, shape):
    xs = tuple(shape_of(x))
    if type(shape) is not tuple or xs != shape:
        shape = tuple(map(int, shape))
    if xs == shape:
        return x
    lead = len(shape) - len(xs)
    if lead < 0:
        raise ShapeError(f"cannot broadcast shape {xs} to {shape}")
    for i, s in enumerate(xs):
        if s != 1 and s != shape[lead + i]:
            raise ShapeError(f"cannot broadcast shape {xs} to {shape}")
    if not isinstance(x, Tracer):
        return np.broadcast_to(x, shape)
    return bind("broadcast_in_dim", x, shape=shape, dims=tuple(range(lead, len(shape))))


# The operands' shapes -> their broadcast shape (elementwise operations of an unrolled loop
# broadcast the same few shapes over and over); incompatible shapes raise and are not kept.
_BROADCASTS: dict[tuple, tuple[int, ...]] = {}


def broadcast_all(xs, op: str):
    shapes = tuple([shape_of(x) for x in xs])
    first = shapes[0] if shapes else ()
    if all(s == first for s in shapes):  # nothing to broadcast: the common case
        return list(xs)
    shape = _BROADCASTS.get(shapes)
    if shape is None:
        if len(_BROADCASTS) > 4096:  # a bound for long-lived processes tracing many shapes
            _BROADCASTS.clear()
        shape = _BROADCASTS[shapes] = broadcast_shapes(*shapes, op=op)
    trace = innermost_trace(xs)
    if trace is not None:  # a NumPy operand that grows is broadcast in the graph, not here:
        # np.broadcast_to would make a full-size constant (where(x > 0, 1.0, 2.0) on 4096 x
        # 4096 float32 took 4.5 s to compile and 1.7 s a call through its 128 MiB constant)
        size = int(np.prod(shape, dtype=np.int64))
        xs = [
            constant(x, np.asarray(x).dtype, weak=False, trace=trace)
            if not isinstance(x, Tracer) and np.size(x) < size
            else x
            for x in xs
        ]
    return [broadcast_to(x, shape) for x in xs]


def elementwise(prim: str, *xs, to_float: bool | str = False, op: str | None = None):
    """Promote, broadcast and bind an elementwise primitive, NumPy-style."""
    xs = promote(*xs, to_float=to_float)
    xs = broadcast_all(xs, op or prim)
    return bind(prim, *xs)


def normalize_axis(axis: int, ndim: int, op: str = "") -> int:
    axis = _static_int(axis, "axis")
    bound = max(ndim, 1)  # NumPy lets reductions of 0-d arrays name axis 0 or -1
    if not -bound <= axis < bound:
        raise AxisError(f"{op}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str = "") -> tuple[int, ...]:
    """Sorted non-negative axes; None means all axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, op) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {tuple(axis)}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim, op),)


def _static_int(x, what: str) -> int:
    """x as a Python int; as NumPy, a float or a sequence is not one (int() truncated 1.5)."""
    if isinstance(x, Tracer):
        raise x._concretization_error(f"Using as {what}")
    try:
        return operator.index(x)
    except TypeError:
        raise TracejitTypeError(f"{what} must be an integer, got {x!r}") from None


def _static_ints(seq, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of Python ints (a tracer cannot be one)."""
    if isinstance(seq, (int, np.integer, Tracer)):
        seq = (seq,)
    return tuple(_static_int(s, what) for s in seq)
