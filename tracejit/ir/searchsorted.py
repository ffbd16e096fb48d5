"""`searchsorted`: where each value of `v` goes in the sorted one-axis `a`, by binary search.

O(v.size log a.size), NumPy's `np.searchsorted` (the reference interpreter and the compiled
CPU program call it back) and CuPy's on CUDA (ir/array_library.py); both order NaN last and
-0.0 equal to 0.0, as `sort`. CuPy's search runs on the integer `sorting.ordered_keys` of
float operands: its own kernel compares float32 with subnormals flushed (1e-45 equal to 0.0,
found by the fuzzer on an H100). Before, `tnp.searchsorted` compared every value with every
element (O(v.size * a.size) work and memory): a 2^16 array searched with 2^14 values took
57.7 ms where NumPy took 1.7. `a` and `v` arrive with one real dtype (`tnp` promotes; complex
keeps the comparisons, which order complex values as `sort` does). The output is int64
positions: no cotangent. Under `vmap` with a batched `a`, the batching rule
(batching/linalg.py) counts comparisons instead.

>>> _searchsorted_impl(np.array([1.0, 2.0, np.nan]), np.array([np.nan, 2.0]), side="right")
array([3, 2])
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import ShapeError, TracejitTypeError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS, INTO_IMPLS
from tracejit.ir.autodiff import defvjp
from tracejit.ir.primitives import OPAQUE, register
from tracejit.ir.sorting import ordered_keys

SIDES = ("left", "right")


def _searchsorted_rule(avals, *, side):
    (ashape, adt, _), (vshape, vdt, _) = avals
    if len(ashape) != 1:
        raise ShapeError(f"searchsorted: a must have one axis, got shape {tuple(ashape)}")
    if side not in SIDES:
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if adt != vdt or dtypes.category(adt) not in "bif":
        raise TracejitTypeError(f"searchsorted: a and v of one real dtype, got {adt} and {vdt}")
    return (tuple(vshape), np.dtype(np.int64), False)


def _searchsorted_impl(a, v, *, side, xp=np):
    if a.dtype == dtypes.BFLOAT16:  # (eagerly; compiled programs widen it to float32 first)
        a, v = a.astype(np.float32), v.astype(np.float32)
    if xp is not np and a.dtype.kind == "f":  # CuPy's compares flushed float32: integer keys
        a, v = ordered_keys(a, xp), ordered_keys(v, xp)
    return xp.asarray(xp.searchsorted(a, v, side=side)).astype(np.int64, copy=False)


def _searchsorted_into(a, v, outs, *, side):
    outs[0][...] = np.searchsorted(a, v, side=side)


register("searchsorted", OPAQUE, _searchsorted_rule, _searchsorted_impl,
         rules={ARRAY_IMPLS: _searchsorted_impl, INTO_IMPLS: _searchsorted_into})  # fmt: skip


@defvjp("searchsorted")
def _searchsorted_vjp(e, ct, a, v, *, out, side):
    return [None, None]  # integer positions: piecewise constant in a and v


__all__ = ["SIDES"]
