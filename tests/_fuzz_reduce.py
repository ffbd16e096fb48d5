"""Error-bound rules of reductions and matmul (see _fuzz_bounds for the model).

A reduction rule gets the operand's Shadow and the normalized `axes`; the result keeps the
reduced axes (keepdims) and the caller reshapes. Bounds for any summation order: Higham,
"Accuracy and Stability of Numerical Algorithms" (2nd ed.), (4.4) and section 3.1;
cumprod in NumPy's order only (its documented contract): a chain of mul_rule steps.
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish, rounded, ulp, unit_roundoff
from _fuzz_rules import mul_rule

ERRSTATE = {"all": "ignore"}


def count(shape, axes) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _sum(x, axes):
    return np.sum(x, axis=axes, keepdims=True)


def _any(x, axes):
    return np.any(x, axis=axes, keepdims=True)


def _finite_abs(x):
    # as float first: np.abs of int64's minimum overflows to itself (a negative bound; an
    # H100 campaign's complex128 @ int64 matmul had one)
    x = x if x.dtype.kind in "fc" else x.astype(np.float64)
    with np.errstate(**ERRSTATE):
        return np.where(np.isfinite(x), np.abs(x), 0.0)


def sum_rule(out, a: Shadow, axes, acc_dtype=None) -> Shadow:
    """sum in `acc_dtype` (the out dtype unless given, e.g. float64 for an integer mean)."""
    acc = np.dtype(acc_dtype or out.dtype)
    unk = _any(a.unk, axes)
    if acc.kind != "f":
        return finish(out, 0.0, unk)
    n = count(a.value.shape, axes)
    x = a.f64
    magnitude = _sum(_finite_abs(x), axes)
    err = _sum(a.err, axes) + max(n - 1, 0) * unit_roundoff(acc) * magnitude
    special = _any(~np.isfinite(x), axes)
    big = float(np.finfo(acc).max)
    unk |= special & (magnitude * (1 + n * unit_roundoff(acc)) >= big)  # finite partials overflow
    # A zero sum's sign depends on the accumulator's start (+0 or the first term): NumPy's
    # own sum([-0.0]) is -0.0 but mean([-0.0]) is 0.0.
    err = np.where(out == 0, np.maximum(err, TINY), err)
    return finish(out, np.where(special, 0.0, err), unk)


def mean_rule(out, a: Shadow, axes) -> Shadow:
    n = count(a.value.shape, axes)
    acc = out.dtype if a.value.dtype.kind == "f" else np.float64
    total = sum_rule(np.asarray(np.sum(a.f64, axis=axes, keepdims=True), acc), a, axes, acc)
    prop = total.err / max(n, 1)
    return finish(out, rounded(out, prop, total.err > 0), total.unk)


def prod_rule(out, a: Shadow, axes) -> Shadow:
    unk = _any(a.unk, axes)
    if out.dtype.kind != "f":
        return finish(out, 0.0, unk)
    n = count(a.value.shape, axes)
    x, e = a.f64, a.err
    with np.errstate(**ERRSTATE):
        rel = _sum(np.where(e > 0, e / np.abs(x), 0.0), axes)
        unk |= _any(e >= np.abs(x), axes) & _any(e > 0, axes)
        ax = _finite_abs(x)
        grow = np.prod(np.where(ax > 1, ax, 1.0), axis=axes, keepdims=True)
        shrink = np.prod(np.where((ax < 1) & (ax > 0), ax, 1.0), axis=axes, keepdims=True)
    fi = np.finfo(out.dtype)
    zero_or_special = _any((x == 0) | ~np.isfinite(x), axes)
    big, tiny = grow >= float(fi.max) / 2, shrink <= float(fi.smallest_normal)
    # a partial product may overflow (big) or underflow to 0 (tiny) in one order and not in
    # another; the result is fixed anyway with a NaN, with both 0 and inf (NaN), with a 0
    # and no overflow (0), or with an inf and no underflow (inf): [tiny, 7.5, -inf, tiny]
    # is inf in NumPy's order and NaN where the two tiny values meet first
    zero, inf = _any(x == 0, axes), _any(np.isinf(x), axes)
    fixed = _any(np.isnan(x), axes) | (zero & inf) | (zero & ~big) | (inf & ~zero & ~tiny)
    unk |= (big | tiny) & ~fixed
    with np.errstate(**ERRSTATE):
        err = np.abs(out.astype(np.float64)) * (rel + max(n - 1, 0) * unit_roundoff(out.dtype))
    return finish(out, np.where(zero_or_special, 0.0, err), unk)


def extremum_rule(out, a: Shadow, axes) -> Shadow:
    """max/min: moves by at most the largest operand bound; +-0 ties have no fixed sign."""
    x = a.value
    err = np.max(a.err, axis=axes, keepdims=True, initial=0.0)
    zero = x == 0
    mixed = _any(zero & np.signbit(x), axes) & _any(zero & ~np.signbit(x), axes)
    err = np.where(mixed & (out == 0), np.maximum(err, TINY), err)
    with np.errstate(**ERRSTATE):
        err = np.where(np.isfinite(out.astype(np.float64)), err, 0.0)
    return finish(out, err, _any(a.unk, axes))


def arg_rule(out, a: Shadow, axis: int, largest: bool) -> Shadow:
    """argmax/argmin: undecided where another element is within the bounds of the winner."""
    x = np.moveaxis(a.f64, axis, -1)
    e = np.moveaxis(a.err, axis, -1)
    idx = np.moveaxis(out, axis, -1)  # `out` keeps the reduced axis
    best = np.take_along_axis(x, idx, -1)
    best_e = np.take_along_axis(e, idx, -1)
    sign = 1.0 if largest else -1.0
    with np.errstate(**ERRSTATE):
        close = sign * (x - best) + e + best_e >= 0
    others = close & ((e + best_e) > 0)
    np.put_along_axis(others, idx, False, -1)
    unk = np.any(others, -1) & ~np.any(np.isnan(x), -1)
    unk |= np.any(np.moveaxis(a.unk, axis, -1), -1)
    return finish(out, 0.0, unk.reshape(out.shape))


def cumsum_rule(out, a: Shadow, axis: int) -> Shadow:
    unk = np.logical_or.accumulate(a.unk, axis=axis) if a.unk.size else a.unk
    if out.dtype.kind != "f":
        return finish(out, 0.0, unk)
    x = a.f64
    steps = np.arange(x.shape[axis]).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    err = np.cumsum(a.err, axis) + steps * unit_roundoff(out.dtype) * np.cumsum(
        _finite_abs(x), axis
    )
    special = np.logical_or.accumulate(~np.isfinite(x), axis=axis) if x.size else unk
    return finish(out, np.where(special, 0.0, err), unk)


def cumprod_rule(out, a: Shadow, axis: int) -> Shadow:
    """NumPy's order, tracejit's contract (ir/structural.py): p_k = p_(k-1) * x_k rounded,
    a chain of mul_rule steps. Exact where the factors are (every overflow, zero sign and NaN
    is NumPy's), else about k u plus the factors' relative errors; an inexact prefix near the
    overflow threshold, or one times an infinity, is undecided (finish). float16: see
    _half_products."""
    unk = np.logical_or.accumulate(a.unk, axis=axis) if a.unk.size else a.unk
    if out.dtype.kind != "f" or out.size == 0:
        return finish(out, 0.0, unk)

    def at(t, k):
        return np.take(t, k, axis)

    p = [finish(at(out, 0), at(a.err, 0), at(a.unk, 0))]
    for k in range(1, out.shape[axis]):
        x = Shadow(at(a.value, k), at(a.err, k), at(a.unk, k))
        p.append(mul_rule(at(out, k), p[-1], x))
    err = np.stack([s.err for s in p], axis)
    unk = unk | np.stack([s.unk for s in p], axis)
    if out.dtype == np.float16:
        err, unk = _half_products(out, a, axis, err, unk)
    return finish(out, err, unk)


def _half_products(out, a: Shadow, axis: int, err, unk):
    """float16 products: NumPy rounds each partial product to half, tracejit keeps them in
    float32 (as JAX) and rounds once, so they differ by up to k u (the k-th product's k - 1
    roundings, one more for the final one); a finite prefix that may overflow or underflow
    half's range (inf or 0 in one, not the other) is undecided."""
    x = a.f64
    u = unit_roundoff(np.float16)
    k = np.arange(1, x.shape[axis] + 1).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    with np.errstate(**ERRSTATE):
        mags = np.cumprod(np.where(np.isfinite(x), np.abs(x), 1.0), axis=axis)
        exact_zero = np.logical_or.accumulate(x == 0, axis=axis)
        rounding = k * u * np.abs(out.astype(np.float64))
        err = err + np.where(np.isfinite(out) & ~exact_zero, rounding, 0.0)
    fi = np.finfo(np.float16)
    edge = (mags >= float(fi.max) / 2) | (mags <= 2 * float(fi.smallest_normal))
    # from a prefix at the edge on, later zeros decide nothing either: NumPy's half prefix
    # may already be inf there, and inf * 0 is NaN where float32's finite * 0 is 0
    return err, unk | np.logical_or.accumulate(edge & ~exact_zero, axis=axis)


def nancumprod_rule(out, a: Shadow, axis: int) -> Shadow:
    """cumprod with each NaN as an exact 1 (an undecided NaN stays undecided)."""
    nan = np.isnan(a.value) if a.value.dtype.kind == "f" else np.zeros(a.value.shape, bool)
    ones = Shadow(np.where(nan, 1, a.value).astype(a.value.dtype), np.where(nan, 0.0, a.err), a.unk)
    return cumprod_rule(out, ones, axis)


def var_rule(out, a: Shadow, axes, ddof: int) -> Shadow:
    """Two-pass variance: 2x the first-order bound (input bounds through d var / d x_i =
    2 (x_i - m) / (n - ddof), the mean's rounding through n dm^2, (n + 4) u per square)."""
    n = count(a.value.shape, axes)
    x, e, u = a.f64, a.err, unit_roundoff(out.dtype)
    unk = _any(a.unk, axes)
    if n - ddof <= 0:
        return finish(out, 0.0, unk | (n > 0))
    with np.errstate(**ERRSTATE):
        m = np.mean(x, axis=axes, keepdims=True)
        dev = np.abs(x - m)
        dm = n * u * np.mean(np.abs(x), axis=axes, keepdims=True)
        first = 2 * _sum(dev * e, axes) + _sum(e * e, axes) + (n + 4) * u * _sum(dev * dev, axes)
        err = 2 * (first + n * dm * dm) / (n - ddof) + 0.5 * ulp(out)
    special = _any(~np.isfinite(x), axes)
    return finish(out, np.where(special, 0.0, err), unk)


def matmul_rule(out, a: Shadow, b: Shadow) -> Shadow:
    """|C - C'| <= |A| E_B + E_A |B| + E_A E_B + K u |A||B| for any order (K: contraction);
    complex: (K + 2) 2 sqrt(2) u |A||B| (a complex product rounds within sqrt(2) gamma_2,
    Higham 3.6; the sums as real ones), and an inexact non-finite result is undecided."""
    if out.dtype.kind == "c":
        return _complex_matmul_rule(out, a, b)
    x, y = a.f64, b.f64
    k = x.shape[-1]
    with np.errstate(**ERRSTATE):
        ax, ay = _finite_abs(x), _finite_abs(y)
        nonfinite = (~np.isfinite(x)).astype(float) @ np.ones(y.shape) + np.ones(x.shape) @ (
            ~np.isfinite(y)
        ).astype(float)
        unk = (a.unk.astype(float) @ np.ones(y.shape) + np.ones(x.shape) @ b.unk) > 0
        magnitude = ax @ ay
        if out.dtype.kind != "f":
            return finish(out, 0.0, unk)
        u = unit_roundoff(out.dtype)
        err = ax @ b.err + a.err @ ay + a.err @ b.err + k * u * magnitude
    special = nonfinite > 0
    unk |= special & (magnitude * (1 + k * u) >= float(np.finfo(out.dtype).max))
    return finish(out, np.where(special, 0.0, err), unk)


def _complex_matmul_rule(out, a: Shadow, b: Shadow) -> Shadow:
    x, y = a.value, b.value
    k = x.shape[-1]
    with np.errstate(**ERRSTATE):
        ax, ay = _finite_abs(x).astype(np.float64), _finite_abs(y).astype(np.float64)
        nonfinite = (~np.isfinite(x)).astype(float) @ np.ones(y.shape) + np.ones(x.shape) @ (
            ~np.isfinite(y)
        ).astype(float)
        unk = (a.unk.astype(float) @ np.ones(y.shape) + np.ones(x.shape) @ b.unk) > 0
        u = unit_roundoff(out.real.dtype)
        err = ax @ b.err + a.err @ ay + a.err @ b.err + (k + 2) * 2 * np.sqrt(2) * u * (ax @ ay)
    unk |= (nonfinite > 0) | ((err > 0) & ~np.isfinite(out))
    return finish(out, np.where(nonfinite > 0, 0.0, err), unk)
