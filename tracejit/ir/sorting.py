"""`argsort`: the stable sorting permutation along one axis (NaN last, as NumPy).

The primitive is O(n log n) per row: NumPy's stable sort (radix sort for small integers,
timsort otherwise), run by the reference interpreter and called back from the compiled CPU
program; the CUDA program runs CuPy's stable sort on the device (ir/array_library.py). Its output is an
int64 permutation, so it has no cotangent.

`sort`: the sorted values alone, by NumPy's default sort (SIMD quicksort, NaN last; CuPy's
on CUDA): a 1024 x 1024 float32 sort along rows took 1.3 ms where the stable argsort and a
gather took 110-160 ms (benchmarks/RESULTS.md). Equal values are interchangeable, so only
-0.0 and 0.0 (equal, of different sign) may come out in another order than a stable sort's.
Its VJP computes the stable `argsort` and sends each sorted slot's cotangent back along it.

On CUDA both run CuPy's sort, which orders a one-dimensional float32/float64 array by a radix
sort of its bits (cupy/cuda/cupy_thrust.cu): a NaN with its sign bit set (x86's default NaN,
0/0 computed on a CPU) came first and -0.0 before 0.0, silently (found on an H100 by the
fuzzer). `_radix_safe` gives that sort keys it orders as NumPy does; `sort` then returns each
NaN of such an array as NumPy's `np.nan` (sign and payload not kept): NaN, but not its bits.
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import ShapeError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.array_library import ARRAY_IMPLS, INTO_IMPLS
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


_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered_keys(x, xp):
    """Signed integers of the float array `x`'s width that order as NumPy orders `x`:
    -0.0 equal to 0.0, every NaN equal and above inf. Made with integer operations only:
    CuPy's own kernels flush float32 subnormals (`x == 0` is true for 1e-45 there;
    backend_cuda/nvrtc.py), and integer keys also sort by CuPy's radix sort in NumPy's order.

    >>> ordered_keys(np.array([np.nan, -0.0, 0.0, -1e-45, 1e-45, -np.inf], np.float32), np)
    array([ 2147483647,           0,           0,          -1,           1,
           -2139095040], dtype=int32)
    """
    it = _INTS[x.dtype.itemsize]
    bits = x.view(it)
    magnitude = bits & it(np.iinfo(it).max)  # the bits without the sign
    keys = xp.where(bits < 0, -magnitude, magnitude)
    inf = np.array(np.inf, x.dtype).view(it)
    return xp.where(magnitude > inf, it(np.iinfo(it).max), keys)  # NaN


def _radix_safe(x, xp, *, permutation: bool):
    """`x`, or where CuPy would radix-sort it (one axis, float32/float64) keys that sort as
    NumPy's: every NaN positive (`np.nan`); for a `permutation` (stable, ties in input
    order) the integer `ordered_keys`, which also tie -0.0 with 0.0."""
    if xp is np or x.ndim != 1 or x.dtype not in (np.float32, np.float64):
        return x
    if permutation:
        return ordered_keys(x, xp)
    nan = xp.isnan(x)  # (not `abs`: CuPy's kept a float64 NaN's sign on an H100)
    return xp.where(nan, np.nan, x).astype(x.dtype, copy=False)


def _argsort_impl(x, *, axis, xp=np):
    keys = _radix_safe(_sortable(x), xp, permutation=True)
    return xp.argsort(keys, axis=axis, kind="stable").astype(np.int64, copy=False)


register("argsort", OPAQUE, _argsort_rule, _argsort_impl, rules={ARRAY_IMPLS: _argsort_impl})


@defvjp("argsort")
def _argsort_vjp(e, ct, x, *, out, axis):
    return [None]  # an integer permutation: piecewise constant in x


def _sort_rule(avals, *, axis):
    _argsort_rule(avals, axis=axis)
    return avals[0]


def _sort_impl(x, *, axis, xp=np):
    return xp.sort(_radix_safe(_sortable(x), xp, permutation=False), axis=axis).astype(
        x.dtype, copy=False
    )


def _sort_into(x, outs, *, axis):
    (out,) = outs  # compiled code sorts bfloat16 as float32 (ir/passes/widen.py)
    np.copyto(out, x)  # what np.sort does, then its in-place sort (no result to copy over)
    out.sort(axis=axis)


register("sort", OPAQUE, _sort_rule, _sort_impl,
         rules={ARRAY_IMPLS: _sort_impl, INTO_IMPLS: _sort_into})  # fmt: skip


@defvjp("sort")
def _sort_vjp(e, ct, x, *, out, axis):
    # each sorted slot's cotangent goes back to the element the stable order put there (ties
    # in input order, as gathering by `argsort` does); the permutation is only computed here
    perm = e.argsort(x, axis=axis)
    return [e.take_along_add(e.full(0.0, x), perm, ct, axis=axis)]


__all__ = ["ordered_keys"]
