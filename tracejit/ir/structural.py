"""Non-elementwise primitives: reductions, layout, gather/scatter, matmul and creation.

Attributes are normalized by `tracejit.numpy` before binding (axes non-negative and sorted,
shapes as tuples of ints), so rules can compare them directly.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import (
    InternalError,
    ShapeError,
    TracejitIndexError,
    TracejitTypeError,
    TracejitValueError,
    UnsupportedError,
)
from tracejit.ir import dtypes
from tracejit.ir.dtypes import is_low_precision
from tracejit.ir.graph import ConstValue
from tracejit.ir.primitives import (
    CONSTANT,
    CREATION,
    FOLDED,
    GATHER,
    KERNEL,
    LAYOUT,
    MATMUL,
    PARTIAL,
    REDUCTION,
    RESHAPE,
    register,
)


def _check_axes(name, ndim, axes):
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: axes {axes} out of range for rank {ndim}")


# ---------------------------------------------------------------- reductions


def _reduce_rule(name, out_dtype=None):
    def rule(avals, axes):
        ((shape, dt, weak),) = avals
        _check_axes(name, len(shape), axes)
        out = tuple(d for i, d in enumerate(shape) if i not in axes)
        return (out, np.dtype(out_dtype) if out_dtype else dt, weak and not out_dtype)

    return rule


def _reducer(name, fn, identity: bool):
    """NumPy's reduction `fn`; without an `identity`, an empty axis raises. Sums and products
    of float16/bfloat16 accumulate in float32 and round once, as compiled programs do
    (ir/passes/widen.py): NumPy's own add every term in the 16-bit type (the sum of 3000
    bfloat16 ones stalls at 256)."""

    def impl(x, axes):
        if not identity and any(x.shape[a] == 0 for a in axes):
            raise TracejitValueError(f"{name} of an empty axis has no identity")
        if identity and is_low_precision(x.dtype):
            return np.asarray(fn(x.astype(np.float32), axis=tuple(axes))).astype(x.dtype)
        return np.asarray(fn(x, axis=tuple(axes)))

    return impl


for _name, _fn, _identity in (
    ("reduce_sum", np.sum, True),
    ("reduce_prod", np.prod, True),
    ("reduce_max", np.max, False),
    ("reduce_min", np.min, False),
):
    register(_name, REDUCTION, _reduce_rule(_name), _reducer(_name, _fn, _identity))


def _arg_rule(name):
    def rule(avals, axis):
        ((shape, _, _),) = avals
        _check_axes(name, len(shape), (axis,))
        if shape[axis] == 0:
            raise ShapeError(f"{name} of an empty axis (shape {shape}, axis {axis})")
        return (shape[:axis] + shape[axis + 1 :], np.dtype(np.int64), False)

    return rule


register("argmax", REDUCTION, _arg_rule("argmax"), lambda x, axis: np.argmax(x, axis=axis))
register("argmin", REDUCTION, _arg_rule("argmin"), lambda x, axis: np.argmin(x, axis=axis))


def _scan_rule(name):
    def rule(avals, axis):
        ((shape, dt, weak),) = avals
        _check_axes(name, len(shape), (axis,))
        return (shape, dt, weak)

    return rule


def _scan(ufunc, x, axis):
    """`ufunc.accumulate` along `axis`; float16/bfloat16 in float32, each result rounded once
    (as the widened compiled scan)."""
    if is_low_precision(x.dtype):
        return ufunc.accumulate(x.astype(np.float32), axis=axis).astype(x.dtype)
    return ufunc.accumulate(x, axis=axis, dtype=x.dtype)


# Scans along one axis, in NumPy's sequential (`accumulate`) order in every backend's kernel
# (ir/cwriter/library.py SCAN_COMBINE), so their bits are NumPy's.
for _name, _ufunc in (("cumsum", np.add), ("cumprod", np.multiply)):
    register(
        _name,
        REDUCTION,
        _scan_rule(_name),
        lambda x, axis, _ufunc=_ufunc: _scan(_ufunc, x, axis),
        fusion=KERNEL,
    )


# ---------------------------------------------------------------- layout


def _reshape_rule(avals, shape):
    ((in_shape, dt, weak),) = avals
    if int(np.prod(in_shape, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
        raise ShapeError(f"reshape: cannot reshape {tuple(in_shape)} into {tuple(shape)}")
    return (tuple(shape), dt, weak)


register("reshape", LAYOUT, _reshape_rule, lambda x, shape: x.reshape(shape), fusion=RESHAPE)


def _transpose_rule(avals, perm):
    ((shape, dt, weak),) = avals
    if sorted(perm) != list(range(len(shape))):
        raise ShapeError(f"transpose: {perm} is not a permutation of the axes of {tuple(shape)}")
    return (tuple(shape[p] for p in perm), dt, weak)


register("transpose", LAYOUT, _transpose_rule, lambda x, perm: np.transpose(x, perm))


def _broadcast_rule(avals, shape, dims):
    ((in_shape, dt, weak),) = avals
    ok = len(dims) == len(in_shape) and list(dims) == sorted(set(dims))
    ok = ok and all(0 <= d < len(shape) for d in dims)
    ok = ok and all(s in (1, shape[d]) for s, d in zip(in_shape, dims))
    if not ok:
        raise ShapeError(f"cannot broadcast shape {tuple(in_shape)} to {tuple(shape)}")
    return (tuple(shape), dt, weak)


def _broadcast_impl(x, shape, dims):
    expanded = [1] * len(shape)
    for s, d in zip(x.shape, dims):
        expanded[d] = s
    return np.broadcast_to(x.reshape(expanded), shape)


register("broadcast_in_dim", LAYOUT, _broadcast_rule, _broadcast_impl)


def _slice_rule(avals, starts, stops, steps):
    ((shape, dt, weak),) = avals
    if not len(starts) == len(stops) == len(steps) == len(shape):
        raise ShapeError(f"slice: rank of {tuple(shape)} and slice rank differ")
    out = []
    for n, a, b, s in zip(shape, starts, stops, steps):
        if s <= 0 or not 0 <= a <= b <= n:
            raise ShapeError(f"slice: bad bounds {starts}:{stops}:{steps} for {tuple(shape)}")
        out.append(-(-(b - a) // s))
    return (tuple(out), dt, weak)


def _slice_impl(x, starts, stops, steps):
    return x[tuple(slice(a, b, s) for a, b, s in zip(starts, stops, steps))]


register("slice", LAYOUT, _slice_rule, _slice_impl)


def _rev_rule(avals, axes):
    ((shape, dt, weak),) = avals
    _check_axes("rev", len(shape), axes)
    return (shape, dt, weak)


register("rev", LAYOUT, _rev_rule, lambda x, axes: np.flip(x, axes) if axes else x)


def _concat_rule(avals, axis):
    shape0, dt, _ = avals[0]
    _check_axes("concatenate", len(shape0), (axis,))
    for shape, d, _ in avals[1:]:
        same = len(shape) == len(shape0) and all(
            a == b for i, (a, b) in enumerate(zip(shape, shape0)) if i != axis
        )
        if not same:
            shapes = ", ".join(str(tuple(a[0])) for a in avals)
            raise ShapeError(f"concatenate along axis {axis}: shapes do not fit: {shapes}")
        if d != dt:
            raise TracejitTypeError("concatenate: operand dtypes differ")
    total = sum(a[0][axis] for a in avals)
    out = tuple(total if i == axis else s for i, s in enumerate(shape0))
    return (out, dt, all(a[2] for a in avals))


register(
    "concatenate",
    LAYOUT,
    _concat_rule,
    lambda *xs, axis: np.concatenate(xs, axis=axis),
    fusion=PARTIAL,
)


def _pad_rule(avals, widths):
    (shape, dt, weak), (vshape, vdt, _) = avals
    if vshape != () or vdt != dt:
        raise TracejitTypeError("pad: the padding value must be a 0-d array of the operand's dtype")
    if len(widths) != len(shape) or any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ShapeError(f"pad: widths {widths} do not fit shape {tuple(shape)}")
    return (tuple(n + lo + hi for n, (lo, hi) in zip(shape, widths)), dt, weak)


def _pad_impl(x, value, widths):
    return np.pad(x, widths, mode="constant", constant_values=value)


register("pad", LAYOUT, _pad_rule, _pad_impl, fusion=PARTIAL)


# ---------------------------------------------------------------- gather / scatter
# Indices out of range are clamped (after wrapping negatives once), as in JAX: compiled code
# cannot raise on data, and clamping never reads out of bounds.


def _clamp_index(idx, n):
    idx = np.where(idx < 0, idx + n, idx)
    return np.clip(idx, 0, max(n - 1, 0))


def _take_rule(avals, axis):
    (shape, dt, weak), (ishape, idt, _) = avals
    _check_axes("take", len(shape), (axis,))
    if not dtypes.is_int(idt):
        raise TracejitTypeError(f"take: indices must be integers, got {idt}")
    return (tuple(shape[:axis]) + tuple(ishape) + tuple(shape[axis + 1 :]), dt, weak)


def _take_impl(x, idx, axis):
    if x.shape[axis] == 0:
        if idx.size:
            raise TracejitIndexError("take from an empty axis")
        return np.take(x, idx, axis=axis)
    return np.take(x, _clamp_index(idx, x.shape[axis]), axis=axis)


register("take", GATHER, _take_rule, _take_impl, fusion=KERNEL)


def _take_add_rule(avals, axis):
    (shape, dt, weak), idx, (ushape, udt, _) = avals
    expected = _take_rule([avals[0], idx], axis)[0]
    if tuple(ushape) != expected or udt != dt:
        raise ShapeError(f"take_add: updates {tuple(ushape)} do not match {expected}")
    return (shape, dt, weak)


def _take_add_impl(x, idx, updates, axis):
    if x.shape[axis] == 0 and idx.size:  # the gradient of a take that raises
        raise TracejitIndexError("take from an empty axis")
    out = np.array(x, copy=True)
    idx = _clamp_index(idx, x.shape[axis])
    moved = np.moveaxis(out, axis, 0)
    upd = np.moveaxis(updates, list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    np.add.at(moved, idx, upd)
    return out


register("take_add", GATHER, _take_add_rule, _take_add_impl, fusion=KERNEL)


def _along_rule(avals, axis):
    (shape, dt, weak), (ishape, idt, _) = avals[:2]
    _check_axes("take_along_axis", len(shape), (axis,))
    if not dtypes.is_int(idt):
        raise TracejitTypeError(f"take_along_axis: indices must be integers, got {idt}")
    fits = len(ishape) == len(shape) and all(
        a == b for i, (a, b) in enumerate(zip(ishape, shape)) if i != axis
    )
    if not fits:
        raise ShapeError(
            f"take_along_axis: indices {tuple(ishape)} do not fit {tuple(shape)} on axis {axis}"
        )
    return (tuple(ishape), dt, weak)


def _along_impl(x, idx, axis):
    if x.shape[axis] == 0 and idx.size:
        raise TracejitIndexError("take_along_axis from an empty axis")
    return np.take_along_axis(x, _clamp_index(idx, x.shape[axis]), axis=axis)


register("take_along_axis", GATHER, _along_rule, _along_impl, fusion=KERNEL)


def _along_add_rule(avals, axis):
    out = _along_rule(avals[:2], axis)
    if tuple(avals[2][0]) != out[0]:
        raise ShapeError("take_along_add: updates must have the indices' shape")
    return avals[0]


def _along_add_impl(x, idx, updates, axis):
    if x.shape[axis] == 0 and idx.size:  # the gradient of a take_along_axis that raises
        raise TracejitIndexError("take_along_axis from an empty axis")
    out = np.array(x, copy=True)
    idx = _clamp_index(idx, x.shape[axis])
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    np.add.at(out, tuple(grids), updates)
    return out


register("take_along_add", GATHER, _along_add_rule, _along_add_impl, fusion=KERNEL)


# ---------------------------------------------------------------- matmul


def _matmul_rule(avals):
    (a, adt, aw), (b, bdt, bw) = avals
    if len(a) < 2 or len(b) < 2 or a[:-2] != b[:-2] or a[-1] != b[-2]:
        raise ShapeError(f"matmul: shapes {tuple(a)} and {tuple(b)} do not fit")
    if adt != bdt or adt == np.bool_:
        raise TracejitTypeError(f"matmul: operands must share a numeric dtype, got {adt} and {bdt}")
    return (tuple(a[:-1]) + (b[-1],), adt, aw and bw)


register("matmul", MATMUL, _matmul_rule, np.matmul)


# ---------------------------------------------------------------- creation


def _const_rule(avals, value, weak=False):
    if not isinstance(value, ConstValue):
        raise InternalError(f"const holds a {type(value).__name__}, not a ConstValue")
    return (value.array.shape, dtypes.canonical(value.array.dtype), weak)


register("const", CREATION, _const_rule, lambda value, weak=False: value.array, fusion=CONSTANT)


def _iota_rule(avals, shape, dtype, axis):
    _check_axes("iota", len(shape), (axis,))
    return (tuple(shape), dtypes.canonical(dtype), False)


def _iota_impl(shape, dtype, axis):
    ramp = np.arange(shape[axis], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[axis] = shape[axis]
    return np.broadcast_to(ramp.reshape(expanded), shape)


register("iota", CREATION, _iota_rule, _iota_impl, fusion=FOLDED)

__all__ = ["UnsupportedError"]
