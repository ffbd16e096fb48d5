"""The numerics rewrites and tj.nn functions: NumPy oracles and their error bounds.

tracejit rewrites the naive `log(exp(x) / sum(exp(x)))` and `log(sum(exp(x)))` into the
shifted forms (ir/passes/numerics.py), and tj.nn computes them the same way: with
m = max(x) (0 where not finite), logsumexp = log(sum(exp(x - m))) + m. The oracles below
compute exactly that in NumPy, in the program's dtype, so rows of +-inf or NaN must match
bit for bit. Where a row is finite, the bound is twice the first-order bound: input bounds
move logsumexp by at most their maximum (its gradient is the softmax, which sums to 1); each
exp is within LIBM_ULPS ulp (<= 2 LIBM_ULPS u relative), x - m rounds by u |x - m| (which exp
turns into a relative error of at most u, since |t| exp(t) <= 1 for t <= 0), the sum of n
terms adds (n - 1) u, and log and the final add or subtract round once more.
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import LIBM_ULPS, Shadow, finish, ulp, unit_roundoff
from _fuzz_rules import unary_libm_rule

ERRSTATE = {"all": "ignore"}


def _shift(x, axes):
    with np.errstate(**ERRSTATE):
        m = np.max(x, axis=axes, keepdims=True)
        m = np.where(np.isfinite(m), m, np.zeros((), x.dtype))
        return x - m, m


def logsumexp(x, axes, keepdims=False):
    if any(x.shape[a] == 0 for a in axes):  # no shift on an empty axis: log(0) = -inf
        with np.errstate(**ERRSTATE):
            return np.log(np.sum(np.exp(x), axis=axes, keepdims=keepdims))
    s, m = _shift(x, axes)
    with np.errstate(**ERRSTATE):
        out = np.log(np.sum(np.exp(s), axis=axes, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axes)


def log_softmax(x, axes):
    if any(x.shape[a] == 0 for a in axes):
        return x.copy()
    s, _ = _shift(x, axes)
    with np.errstate(**ERRSTATE):
        return s - np.log(np.sum(np.exp(s), axis=axes, keepdims=True))


def softmax(x, axes):
    if any(x.shape[a] == 0 for a in axes):
        return x.copy()
    s, _ = _shift(x, axes)
    with np.errstate(**ERRSTATE):
        e = np.exp(s)
        return e / np.sum(e, axis=axes, keepdims=True)


def _row_terms(a: Shadow, axes):
    """(max input bound, the rounding term in units of u, the bounded mask, row lse - m).

    A row whose max is +inf or NaN gives specials only (exact); so do -inf entries of
    softmax and log_softmax (0 and -inf); every other element is bounded."""
    x = a.f64
    n = int(np.prod([x.shape[i] for i in axes]))
    with np.errstate(**ERRSTATE):
        max_e = np.max(a.err, axis=axes, keepdims=True, initial=0.0)
        rounding = (2 * LIBM_ULPS + n + 2) * unit_roundoff(a.value.dtype)
        m = np.max(x, axis=axes, keepdims=True)
        finite = np.isfinite(m) & ~np.any(np.isnan(x), axis=axes, keepdims=True)
        s, _ = _shift(x, axes)
        log_s = np.log(np.sum(np.exp(s), axis=axes, keepdims=True))
    return max_e, rounding, finite, log_s


def _decided(out, err, finite, a: Shadow, axes) -> Shadow:
    unk = np.any(a.unk, axis=axes, keepdims=True)
    return finish(out, np.where(finite, err, 0.0), unk)


def logsumexp_rule(out, a: Shadow, axes) -> Shadow:
    if any(a.value.shape[i] == 0 for i in axes):
        return finish(out, 0.0, False)
    max_e, rounding, finite, log_s = _row_terms(a, axes)
    with np.errstate(**ERRSTATE):
        err = 2 * (max_e + rounding + LIBM_ULPS * ulp(log_s.astype(out.dtype)) + ulp(out))
    return _decided(out, err, finite, a, axes)


def log_softmax_rule(out, a: Shadow, axes) -> Shadow:
    if any(a.value.shape[i] == 0 for i in axes):
        return finish(out, 0.0, False)
    max_e, rounding, finite, log_s = _row_terms(a, axes)
    finite = finite & (a.f64 != -np.inf)
    s, _ = _shift(a.f64, axes)
    u = unit_roundoff(out.dtype)
    with np.errstate(**ERRSTATE):
        lse = LIBM_ULPS * ulp(log_s.astype(out.dtype))
        err = 2 * (a.err + max_e + rounding + u * np.abs(s) + lse + ulp(out))
    return _decided(out, err, finite, a, axes)


def softmax_rule(out, a: Shadow, axes) -> Shadow:
    if any(a.value.shape[i] == 0 for i in axes):
        return finish(out, 0.0, False)
    max_e, rounding, finite, _ = _row_terms(a, axes)
    finite = finite & (a.f64 != -np.inf)
    p = out.astype(np.float64)
    with np.errstate(**ERRSTATE):
        # the shift x - max rounds by up to u |x - max| absolutely, which exp turns into that
        # relative error: e**-433 on an H200 differed by 2.5e-14 relatively between orders
        s, _ = _shift(a.f64, axes)
        u = unit_roundoff(a.value.dtype)
        rel = np.where(np.isfinite(s) & (p > 0), np.abs(s), 0.0) * u  # of each exp
        # ... and of the row's sum: the exps' errors weighted by their shares
        shifted = p * (rel + np.sum(p * rel, axis=axes, keepdims=True))
        err = 2 * (
            p * (a.err + max_e + rounding + 2 * unit_roundoff(out.dtype)) + shifted + ulp(out)
        )
    return _decided(out, err, finite, a, axes)


def _in_float64(f):
    """`f` evaluated in float64 and rounded once to the operand's dtype: a near-exact oracle."""

    def oracle(x):
        with np.errstate(**ERRSTATE):
            return np.asarray(f(np.asarray(x, np.float64))).astype(x.dtype)

    return oracle


def _sigmoid64(v):
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1 / (1 + e), e / (1 + e))


def _log_sigmoid64(v):
    return np.minimum(v, 0) - np.log1p(np.exp(-np.abs(v)))


def _softplus64(v):
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


NN_ORACLES = {
    "sigmoid": _in_float64(_sigmoid64),
    "log_sigmoid": _in_float64(_log_sigmoid64),
    "softplus": _in_float64(_softplus64),
}


def composite_rule(f64):
    """A monotonic function built from a few libm calls and IEEE operations (tj.nn's sigmoid,
    log_sigmoid, softplus): the libm rule at the interval ends, plus LIBM_ULPS ulp more for
    the extra calls and roundings (each within 1 ulp of a well-conditioned result)."""
    base = unary_libm_rule(f64)

    def rule(out, a: Shadow) -> Shadow:
        first = base(out, a)
        with np.errstate(**ERRSTATE):
            extra = np.where(np.isfinite(a.f64) | (a.err > 0), LIBM_ULPS * ulp(out), 0.0)
        return finish(out, first.err + np.where(first.unk, 0.0, extra), first.unk)

    return rule


NN_RULES = {
    "sigmoid": composite_rule(_sigmoid64),
    "log_sigmoid": composite_rule(_log_sigmoid64),
    "softplus": composite_rule(_softplus64),
}
