"""`pow`'s reference, VJP and float C rendering (the arith family's `pow` entry uses them)."""

from __future__ import annotations

import numpy as np

from tracejit.ir.c_render import LIBM_BINARY, libm_call, literal, math_call
from tracejit.ir.c_types import c_type


def _int_pow(x, y):
    # NumPy raises for negative integer exponents; a compiled kernel cannot, so 0 (1 for base 1).
    # Both branches in x's dtype: a where of uint64 with the int64 constants is float64,
    # which rounded uint64 powers (3**40, (2**64 - 1)**7) in the reference and eager runs.
    y = np.asarray(y)
    safe = np.where(y < 0, 0, y)
    out = np.power(x, safe).astype(x.dtype)
    ones = np.where(x == 1, 1, np.where(y % 2 == 0, 1, -1))
    neg = np.where(np.abs(x) == 1, ones, 0).astype(x.dtype)
    return np.where(y < 0, neg, out)


def pow_impl(x, y):
    if x.dtype.kind == "f":
        return np.power(x, y)
    return _int_pow(x, y)


def pow_vjp(e, ct, x, y, *, out):
    # d/dx = y * x**(y-1), taken as 0 where y == 0 (0**-1 would give nan at x == 0);
    # d/dy = out * log(x), taken as 0 where x == 0 (the limit along y > 0), as in JAX.
    zero, one = e.full(0.0, x), e.full(1.0, x)
    dx = e.mul(y, e.pow(x, e.sub(y, one)))
    dx = e.select(e.eq(y, zero), zero, dx)
    safe_x = e.select(e.eq(x, zero), one, x)
    dy = e.mul(out, e.log(safe_x))
    return [e.mul(ct, dx), e.mul(ct, dy)]


LIBM_BINARY["pow"] = "pow"
_sqrt, _pow = math_call("sqrt"), libm_call("pow")


def pow_c(args, dt, out_dt, attrs, uses, d):
    """x ** y: `tj_pow_int` on integers; on floats a literal exponent of 2, 0.5, 1, 0 or -1
    takes NumPy's fast path for a scalar exponent (`power`'s loop with a stride-0 exponent):
    square, sqrt, copy, one, reciprocal. So `x ** 0.5` is sqrt at every position (-inf -> nan,
    -0.0 -> -0.0, as NumPy gives), and x ** 2 costs one product, not a pow (~40 instructions
    on a GPU)."""
    a, b = args
    if dt.kind != "f":
        return f"tj_pow_int<{c_type(dt)}>({a}, {b})"
    fast = {
        literal(2, dt): f"({a} * {a})",
        literal(0.5, dt): _sqrt([a], dt, dt, attrs, uses, d),
        literal(1, dt): f"({a})",
        literal(0, dt): literal(1, dt),
        literal(-1, dt): f"({literal(1, dt)} / {a})",
    }
    if b in fast:
        return fast[b]
    # NumPy: x ** 0 and 1 ** y are 1 for every x and y, signaling NaNs too (libm's pow
    # gives NaN for a signaling NaN; found by the fuzzer)
    one = literal(1, dt, d)
    call = _pow([a, b], dt, dt, attrs, uses, d)
    return f"((({b}) == 0 || ({a}) == {one}) ? {one} : {call})"
