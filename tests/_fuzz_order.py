"""Error-bound rules of the order operations: sort, argsort, searchsorted, median/percentile/
quantile and select (see _fuzz_bounds for the model).

- sort is 1-Lipschitz in the max norm (|sort(x)_i - sort(y)_i| <= max |x - y|), so each
  sorted element moves by at most the row's largest operand bound; exact rows sort exactly
  (NaNs last, as NumPy), except that -0.0 and 0.0 are equal keys whose order an unstable
  sort (NumPy's default) does not fix: such a zero's sign is undetermined.
- argsort is drawn with stable=True, so on exact rows it is exact (ties, -0.0 == 0.0 and NaNs
  in index order); a row where two operands' intervals overlap with a positive bound may
  swap them and is undecided.
- complex rows sort lexicographically (real part, then imaginary; NaN classes R+Rj, R+nanj,
  nan+Rj, nan+nanj last, as NumPy), which no bound survives: a row with any inexact element
  is undecided, an exact row exact (for sort, a value equal to another of the row but of
  other bits, a signed zero, is undecided: the unstable sort may put either first).
- searchsorted of exact operands is exact; an element within the bounds of a sorted element
  may land on either side and is undecided.
- median/percentile/quantile (every method: lower/higher/nearest are order statistics, under the
  linear bound too): the order statistics move by the row's largest
  bound, and the interpolation a + (b - a) t (NumPy's _lerp, or any other order of it) and
  the rounding of t = q (n - 1) add at most 4 u max |x| plus one rounding of the result
  (u of the coarser of the data's and the result's dtypes). A row
  with a NaN gives NaN (exact); a row with an infinity is undecided: inf - inf in the lerp
  gives NaN or inf depending on how it is written.
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish, ulp, unit_roundoff

ERRSTATE = {"all": "ignore"}


def _rows(s: Shadow, axis):
    """(value, err, unk) with the sorted axis last (flattened for axis None)."""
    if axis is None:
        return s.value.reshape(-1), s.err.reshape(-1), s.unk.reshape(-1)
    return (np.moveaxis(t, axis, -1) for t in (s.value, s.err, s.unk))


def _back(t, out, axis):
    return t.reshape(out.shape) if axis is None else np.moveaxis(t, -1, axis)


def _complex_rows(a: Shadow, axis):
    """(rows, each element's row undecided): complex order has no error bound."""
    x, e, unk = _rows(a, axis)
    return x, np.broadcast_to(np.any(unk | (e > 0), axis=-1, keepdims=True), x.shape)


def _complex_sort_rule(out, a: Shadow, axis) -> Shadow:
    _, row_unk = _complex_rows(a, axis)
    s = out.reshape(-1) if axis is None else np.moveaxis(out, axis, -1)
    bits = np.ascontiguousarray(s).view(np.int32 if s.dtype == np.complex64 else np.int64)
    bits = bits.reshape(*s.shape, 2)
    with np.errstate(**ERRSTATE):
        equal = s[..., :, None] == s[..., None, :]
    other = np.any(bits[..., :, None, :] != bits[..., None, :, :], axis=-1)
    unk = row_unk | np.any(equal & other, axis=-1)
    return finish(out, 0.0, _back(unk, out, axis))


def sort_rule(out, a: Shadow, axis) -> Shadow:
    if a.value.dtype.kind == "c":
        return _complex_sort_rule(out, a, axis)
    x, e, unk = _rows(a, axis)
    err = np.broadcast_to(np.max(e, axis=-1, keepdims=True, initial=0.0), x.shape)
    row_unk = np.broadcast_to(np.any(unk, axis=-1, keepdims=True), x.shape)
    if x.dtype.kind == "f":
        zero = x == 0
        mixed = np.any(zero & np.signbit(x), -1, keepdims=True)
        mixed = mixed & np.any(zero & ~np.signbit(x), -1, keepdims=True)
        sorted_x = out.reshape(-1) if axis is None else np.moveaxis(out, axis, -1)
        err = np.where(mixed & (sorted_x == 0), np.maximum(err, TINY), err)
    return finish(out, _back(err, out, axis), _back(row_unk, out, axis))


def argsort_rule(out, a: Shadow, axis) -> Shadow:
    if a.value.dtype.kind == "c":  # stable: an exact row's permutation is exact
        _, row_unk = _complex_rows(a, axis)
        return finish(out, 0.0, _back(np.array(row_unk), out, axis))
    x, e, unk = _rows(a, axis)
    x = x.astype(np.float64)
    with np.errstate(**ERRSTATE):
        gap = np.abs(x[..., :, None] - x[..., None, :])
        width = e[..., :, None] + e[..., None, :]
        may_swap = (width > 0) & ~(gap > width)
    n = x.shape[-1]
    may_swap &= ~np.eye(n, dtype=bool)
    row = np.any(may_swap, axis=(-2, -1)) | np.any(unk, axis=-1)
    row_unk = np.broadcast_to(row[..., None], x.shape)
    return finish(out, 0.0, _back(row_unk, out, axis))


def searchsorted_rule(out, a: Shadow, v: Shadow) -> Shadow:
    """`a` is the raveled operand the step sorts; `v` any shape."""
    keys = a.value.reshape(-1).astype(np.float64)
    e_max = float(np.max(a.err, initial=0.0))
    width = v.err + e_max
    with np.errstate(**ERRSTATE):
        lo = np.searchsorted(np.sort(keys), v.f64 - width, side="left")
        hi = np.searchsorted(np.sort(keys), v.f64 + width, side="right")
    near = (width > 0) & (hi > lo)
    unk = v.unk | near | bool(np.any(a.unk))
    return finish(out, 0.0, unk)


def _squeezed(t, axes, keepdims, ndim):
    if keepdims:
        return t
    return t.reshape([d for i, d in enumerate(t.shape) if i not in axes]) if ndim else t


def quantile_rule(out, a: Shadow, axes, keepdims: bool) -> Shadow:
    """`axes`: the normalized reduced axes; a leading axis of `out` (several q) broadcasts."""
    x, e = a.f64, a.err
    ndim = x.ndim
    # NumPy's lerp takes b - a in the data's dtype even where q (a list: float64) promotes
    # the result: the coarser of the two roundings
    u = max(unit_roundoff(out.dtype), unit_roundoff(a.value.dtype))
    with np.errstate(**ERRSTATE):
        finite = np.isfinite(x)
        big = np.max(np.where(finite, np.abs(x), 0.0), axis=axes, keepdims=True, initial=0.0)
        row_err = np.max(e, axis=axes, keepdims=True, initial=0.0) + 4 * u * big
    # a NaN row, or an empty one (NumPy warns and gives NaN), is NaN: exact
    nan = np.any(np.isnan(x), axis=axes, keepdims=True) | any(x.shape[i] == 0 for i in axes)
    inf = np.any(np.isinf(x), axis=axes, keepdims=True) & ~nan
    row_unk = np.any(a.unk, axis=axes, keepdims=True) | inf
    err, unk, nan = (
        np.broadcast_to(_squeezed(t, axes, keepdims, ndim), out.shape)
        for t in (row_err, row_unk, nan)
    )
    with np.errstate(**ERRSTATE):
        err = err + ulp(out)
        err = np.where(out == 0, np.maximum(err, TINY), err)
    return finish(out, np.where(nan, 0.0, err), unk & ~nan)
