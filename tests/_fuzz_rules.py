"""Error-bound rules of the elementwise operations (see _fuzz_bounds for the model).

A rule takes NumPy's result `out` and the operands' `Shadow`s (broadcast to `out`'s shape)
and returns `out`'s Shadow. Integer and bool results are exact wherever their operands are
decided; float results follow the rounding class of the operation.
"""

from __future__ import annotations

import math

import numpy as np
from _fuzz_bounds import (
    LIBM_ULPS,
    TINY,
    Shadow,
    any_err,
    any_unk,
    compare_unknown,
    finish,
    libm,
    rounded,
    scaled,
    straddles,
    ulp,
    unit_roundoff,
)

ERRSTATE = {"all": "ignore"}


def exact_rule(out, *args) -> Shadow:
    """Integer/bool arithmetic, bit operations, and float ops that only move or flip bits."""
    err = np.zeros(out.shape)
    for a in args:
        err = np.maximum(err, a.err)
    return finish(out, err, any_unk(*args))


def add_rule(out, a, b) -> Shadow:
    return finish(out, rounded(out, a.err + b.err, any_err(a, b)), any_unk(a, b))


def mul_rule(out, a, b) -> Shadow:
    prop = scaled(a.err, b.f64) + scaled(b.err, a.f64) + a.err * b.err
    err = rounded(out, prop, any_err(a, b))
    # a zero product of an uncertain operand keeps an undetermined sign (TINY * 0.5 is 0)
    zero_sign = (np.asarray(out) == 0) & any_err(a, b)
    return finish(out, np.where(zero_sign, np.maximum(err, TINY), err), any_unk(a, b))


def square_rule(out, a) -> Shadow:
    return mul_rule(out, a, a)


def div_rule(out, a, b) -> Shadow:
    with np.errstate(**ERRSTATE):
        den = np.abs(b.f64) - b.err
        prop = (a.err + scaled(b.err, out.astype(np.float64))) / den
    unk = any_unk(a, b) | ((b.err > 0) & ~(den > 0))
    return finish(out, rounded(out, prop, any_err(a, b)), unk)


def reciprocal_rule(out, a) -> Shadow:
    one = Shadow(np.ones_like(a.value), np.zeros(a.err.shape), np.zeros(a.unk.shape, bool))
    return div_rule(out, one, a)


def sign_rule(out, a) -> Shadow:
    return finish(out, 0.0, a.unk | ((a.err > 0) & ~(np.abs(a.f64) > a.err)))


def minmax_rule(out, a, b) -> Shadow:
    err = np.maximum(a.err, b.err)
    signed_zero_tie = (a.f64 == 0) & (b.f64 == 0) & (np.signbit(a.value) != np.signbit(b.value))
    return finish(out, np.where(signed_zero_tie, np.maximum(err, TINY), err), any_unk(a, b))


def compare_rule(out, a, b) -> Shadow:
    return finish(out, 0.0, compare_unknown(a, b))


def jump_rule(points: str):
    """floor, ceil, trunc, round, float % and //: exact unless a jump is within the bound."""

    def rule(out, *args) -> Shadow:
        unk = any_unk(*args) | any_err(*args[1:])
        a = args[0]
        unk |= (a.err > 0) & straddles(a.f64 - a.err, a.f64 + a.err, points)
        # a zero out of an uncertain zero keeps its undetermined sign (round(clip(-0.0, 0.0,
        # 2)): the clip's tie may give either zero, and round keeps it; an H200's NumPy did)
        zero_sign = (a.err > 0) & (a.f64 == 0) & (np.asarray(out) == 0)
        return finish(out, np.where(zero_sign, TINY, 0.0), unk)

    return rule


def divmod_rule(out, a, b) -> Shadow:
    if out.dtype.kind != "f":
        return exact_rule(out, a, b)
    return finish(out, 0.0, any_unk(a, b) | any_err(a, b))


def where_rule(out, c, x, y) -> Shadow:
    cond = c.value.astype(bool)
    err = np.where(cond, x.err, y.err)
    unk = c.unk | np.where(cond, x.unk, y.unk)
    return finish(out, err, unk)


def convert_rule(out, a) -> Shadow:
    src, dst = a.value.dtype, out.dtype
    inexact = a.err > 0
    if dst.kind == "f":
        narrowing = np.dtype(dst).itemsize < np.dtype(src).itemsize or src.kind != "f"
        err = np.where(inexact, a.err + (0.5 * ulp(out) if narrowing else 0.0), 0.0)
        return finish(out, err, a.unk)
    if dst.kind == "b":
        return finish(out, 0.0, a.unk | (inexact & ~(np.abs(a.f64) > a.err)))
    result = jump_rule("int")(out, a)
    if src.kind != "f" or dst in (np.dtype(np.int32), np.dtype(np.int64)):
        return result  # integer -> integer wraps (modular); float -> int32/int64: x86's cvtt
    # float -> a narrow or unsigned integer out of its range (or NaN) is undefined in C and
    # NumPy warns "invalid value encountered in cast": its result is whatever the C cast
    # compiled to (-1.0 -> uint8 255, 1e30 -> int8 0), not a contract; not compared
    info = np.iinfo(dst)
    with np.errstate(**ERRSTATE):
        t = np.trunc(a.f64)
        outside = ~((t >= info.min) & (t <= info.max))
    return finish(out, result.err, result.unk | outside)


def _annex_f(x: np.ndarray, mid: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Where C99 Annex F fixes a function's result: special operands and exact results."""
    with np.errstate(**ERRSTATE):
        special = ~np.isfinite(x) | ~np.isfinite(mid) | (mid == 0) | ((x == 0) & (mid == 1))
    return exact & special


def _overflow(out, mid, exact, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(decided, undecided) where NumPy's float result is +-inf but the input was finite."""
    big = float(np.finfo(dtype).max) * (1 + 2 * LIBM_ULPS * unit_roundoff(dtype))
    with np.errstate(**ERRSTATE):
        inf = np.isinf(out) & exact & ~np.isnan(mid)
        far = np.abs(mid) > big
    return inf & far, inf & ~far


def unary_libm_rule(f64, lipschitz=None):
    """A unary libm function; `f64` evaluates it in float64 at the interval's ends.

    Monotonic functions move by at most max |f(x +- e) - f(x)|. For sin and cos the interval
    may hold an extremum, so `lipschitz(x, e)` bounds |f'| on it instead.
    """

    def rule(out, a) -> Shadow:
        x, e = a.f64, a.err
        with np.errstate(**ERRSTATE):
            mid, lo, hi = f64(x), f64(x - e), f64(x + e)
            if lipschitz is None:
                prop = np.maximum(np.abs(lo - mid), np.abs(hi - mid))
            else:
                prop = lipschitz(x, e) * e
            prop = np.where(e > 0, prop + 2 * LIBM_ULPS * ulp(mid), 0.0)
        exact = e == 0
        decided_inf, undecided_inf = _overflow(out, mid, exact, out.dtype)
        err = libm(out, prop, _annex_f(x, mid, exact) | decided_inf)
        return finish(out, err, a.unk | undecided_inf)

    return rule


def sqrt_rule(out, a) -> Shadow:
    x, e = a.f64, a.err
    with np.errstate(**ERRSTATE):
        prop = np.where(e > 0, np.sqrt(x + e) - np.sqrt(x - e), 0.0)
    return finish(out, rounded(out, prop, e > 0), a.unk)


def _bounded_derivative(f_prime_max):
    return lambda x, e: f_prime_max(np.abs(x) + e)


SIN_COS_LIPSCHITZ = (lambda x, e: np.ones_like(x), lambda x, e: np.ones_like(x))
COSH_LIPSCHITZ = _bounded_derivative(np.sinh)


def tan_lipschitz(x, e):
    lo, hi = np.tan(x - e), np.tan(x + e)
    pole = (hi < lo) | (np.cos(x - e) * np.cos(x + e) <= 0)  # tan is increasing between poles
    return np.where(pole, np.inf, 1 + np.maximum(lo * lo, hi * hi))


def math_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.size(x) else x * 1.0


def binary_libm_rule(f64, domain_ok, annex_f):
    """pow and atan2: the bound at the four corners of the operand box (monotonic per axis
    where `domain_ok(x, ex, y, ey)`; elsewhere undecided); exact where `annex_f(x, y, mid)`
    on exact operands."""

    def rule(out, a, b) -> Shadow:
        x, ex, y, ey = a.f64, a.err, b.f64, b.err
        with np.errstate(**ERRSTATE):
            mid = f64(x, y)
            corners = [f64(x + sx * ex, y + sy * ey) for sx in (-1, 1) for sy in (-1, 1)]
            prop = np.max([np.abs(c - mid) for c in corners], axis=0)
            prop = np.where(any_err(a, b), prop + 2 * LIBM_ULPS * ulp(mid), 0.0)
        exact = ~any_err(a, b)
        decided_inf, undecided_inf = _overflow(out, mid, exact, out.dtype)
        with np.errstate(**ERRSTATE):
            annex = exact & (annex_f(x, y, mid) | np.isnan(x) | np.isnan(y) | (mid == 0))
        err = libm(out, prop, annex | decided_inf)
        unk = any_unk(a, b) | undecided_inf | (any_err(a, b) & ~domain_ok(x, ex, y, ey))
        return finish(out, err, unk)

    return rule


def pow_rule(out, a, b) -> Shadow:
    if out.dtype.kind != "f":
        return exact_rule(out, a, b)
    return binary_libm_rule(np.power, lambda x, ex, y, ey: x - ex > 0, _pow_annex_f)(out, a, b)


def _pow_annex_f(x, y, mid):
    """C99 F.9.4.4: pow(x, +-0) = 1, pow(1, y) = 1, and every zero, infinite or NaN operand
    or result (overflow and domain errors included) is fixed."""
    special = ~np.isfinite(x) | ~np.isfinite(y) | (x == 0) | (y == 0) | (x == 1)
    return special | ~np.isfinite(mid)


def _atan2_ok(y, ey, x, ex):
    return ~((y - ey <= 0) & (y + ey >= 0) & (x - ex <= 0))


# atan2: only its zero results are fixed exactly (its +-pi, +-pi/2 cases are rounded constants).
atan2_rule = binary_libm_rule(np.arctan2, _atan2_ok, lambda y, x, mid: np.zeros(mid.shape, bool))

UNARY_LIBM = {
    "exp": unary_libm_rule(np.exp),
    "exp2": unary_libm_rule(np.exp2),
    "expm1": unary_libm_rule(np.expm1),
    "log": unary_libm_rule(np.log),
    "log2": unary_libm_rule(np.log2),
    "log10": unary_libm_rule(np.log10),
    "log1p": unary_libm_rule(np.log1p),
    "sin": unary_libm_rule(np.sin, SIN_COS_LIPSCHITZ[0]),
    "cos": unary_libm_rule(np.cos, SIN_COS_LIPSCHITZ[1]),
    "tan": unary_libm_rule(np.tan, tan_lipschitz),
    "arcsin": unary_libm_rule(np.arcsin),
    "arccos": unary_libm_rule(np.arccos),
    "arctan": unary_libm_rule(np.arctan),
    "sinh": unary_libm_rule(np.sinh),
    "cosh": unary_libm_rule(np.cosh, COSH_LIPSCHITZ),
    "tanh": unary_libm_rule(np.tanh),
    "arcsinh": unary_libm_rule(np.arcsinh),
    "arccosh": unary_libm_rule(np.arccosh),
    "arctanh": unary_libm_rule(np.arctanh),
    "erf": unary_libm_rule(math_erf),
}
