"""`argsort`: the stable sorting permutation along one axis (NaN last, as NumPy).

The primitive is O(n log n) per row: NumPy's stable sort (radix sort for small integers,
timsort otherwise), run by the reference interpreter and called back from the compiled CPU
program; the CUDA program runs CuPy's stable sort on the device (ir/array_library.py). Its output is an
int64 permutation, so it has no cotangent; `tnp.sort` gathers by it (`take_along_axis`) and
differentiates through the gather.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import ShapeError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.primitives import OPAQUE, register


def _argsort_rule(avals, *, axis):
    shape, dtype, _ = avals[0]
    if not 0 <= axis < len(shape):
        raise ShapeError(f"argsort: axis {axis} out of range for shape {tuple(shape)}")
    if dtypes.category(dtype) not in "bif":  # bfloat16 included
        raise UnsupportedError(f"argsort needs bool, integer or float operands, got {dtype}")
    return (tuple(shape), np.dtype(np.int64), False)


def _sortable(x):
    # ml_dtypes' own bfloat16 sort misplaces NaN; float32 (bfloat16 is its top half) keeps
    # every value's order and sorts NaN last.
    return x.astype(np.float32) if x.dtype == dtypes.BFLOAT16 else x


def _argsort_impl(x, *, axis, xp=np):
    return xp.argsort(_sortable(x), axis=axis, kind="stable").astype(np.int64)


register("argsort", OPAQUE, _argsort_rule, _argsort_impl, rules={ARRAY_IMPLS: _argsort_impl})


@defvjp("argsort")
def _argsort_vjp(e, ct, x, *, out, axis):
    return [None]  # an integer permutation: piecewise constant in x


__all__: list[str] = []
