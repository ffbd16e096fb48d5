"""Elementary functions built from correctly rounded operations only, for tracejit.random.

`np.log`, glibc's (vector) libm under the generated C++ and CUDA's libdevice each round their
elementary functions in their own way: the same float argument gives results 1 to 4 ulp apart,
so a sampler calling `tnp.log` gave different numbers eagerly, under `jit(device="cpu")` and
on a GPU. The functions here are compositions of + - * /, comparisons, `where`, `rint` and
bit casts (`lax.bitcast_convert_type`, with integer shifts and masks), which IEEE 754 and
two's complement define the same way everywhere (the C++ is compiled with -ffp-contract=off
and CUDA with -fmad=false, so no product is fused into an add), so their results are the same
bits on every path, by construction.

float64 arguments compute in float64, float32 ones in float32 with series cut for float32
(twice the SIMD width; float16/bfloat16 widen exactly to float32 and round once back); `power`
and `tanpi` compute float32 in float64 and round once. Accuracies against the exact result
(tests/backend/test_portable_math.py):

- `log`, `exp`: below 1 ulp in float64 and in float32, `log1p` below 1.2 (float32: 1.5).
- `sinpi`, `cospi` (sin and cos of pi x): below 1.7 ulp in float64, 1.6 in float32;
  `tanpi` below 2.9 ulp in float64.
- `power(x, y)` for x >= 0: exp(y log x), below 1 + 2 |y log x| ulp in float64 (the
  rounding of y log x is amplified by exp); float32 results are that rounded once.
- `next_toward(x, up)`: `np.nextafter(x, +-inf)` exactly.

`sum_in_order` adds along an axis left to right (a cumulative sum's last element), so that a
sampler's sums too are the same bits everywhere: a compiled `sum` adds in a tree.

A float's exponent and 2^k come from its bits (_portable_bits.py). The kernels vectorize under
GCC: `rint` rather than `floor` (which GCC does not vectorize while floating-point exceptions
may trap), and special values are added to a finite result rather than selected. Special values
are NumPy's: log(0) = -inf, log(x < 0) = nan, exp(inf) = inf, exp(-inf) = 0, NaN gives NaN.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from typing import NamedTuple

import numpy as np

from tracejit import numpy as tnp
from tracejit._portable_bits import next_toward, split, times_pow2

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_LN2_DIGITS = "0.69314718055994530941723212145817656807550013436025525412068"
_PI_DIGITS = "3.14159265358979323846264338327950288419716939937510582097494"


def _split_constant(digits: str, bits: int) -> tuple[float, float]:
    """(hi, lo): hi the constant truncated to `bits` significant bits (so that hi times a
    small integer or a short float is exact), lo the rest rounded to float64."""
    with localcontext() as ctx:
        ctx.prec = 60
        c = Decimal(digits)
        scale = bits - 1 - math.floor(math.log2(float(c)))
        hi = math.ldexp(int(c * Decimal(2) ** scale), -scale)
        return hi, float(c - Decimal(hi))


class _Consts(NamedTuple):
    """One working precision's constants: the series are cut where the first dropped term is
    below 2^-57 (float64) or 2^-27 (float32) of the result."""

    ln2: tuple[float, float]  # (hi, lo): k hi exact for every exponent k of the format
    log_terms: tuple  # log(1 + f) = 2 atanh(s): 2 s^(2k+1)/(2k+1), k >= 1, in z = s^2
    exp_terms: tuple  # exp(r) - 1 - r = r^2 (1/2! + r/3! + ...), |r| <= ln(2)/2
    exp_range: tuple[float, float]  # beyond: 0 or inf
    sin_terms: tuple  # (sin(pi r) - pi r) / r^3 in r^2, |r| <= 1/4
    cos_terms: tuple  # (cos(pi r) - 1) / r^2 in r^2
    pi: tuple[float, float]  # (hi, lo): hi pi rounded to the format


def _pi_series(first: int, n: int, odd: int) -> tuple:
    """(-1)^k pi^(2k + odd) / (2k + odd)! for k = first .. first + n - 1: the Taylor
    coefficients of sin(pi r) (odd = 1) or cos(pi r) (odd = 0), in 60-digit arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 60
        pi = Decimal(_PI_DIGITS)
        return tuple(float((-1) ** k * pi ** (2 * k + odd) / math.factorial(2 * k + odd))
                     for k in range(first, first + n))  # fmt: skip


def _consts(log_n, exp_n, sin_n, cos_n, ln2_bits, pi_bits, exp_range) -> _Consts:
    return _Consts(
        _split_constant(_LN2_DIGITS, ln2_bits),
        tuple(2.0 / (2 * k + 1) for k in range(1, log_n + 1)),
        tuple(1.0 / math.factorial(n) for n in range(2, exp_n + 2)),
        exp_range,
        _pi_series(1, sin_n, 1),
        _pi_series(1, cos_n, 0),
        _split_constant(_PI_DIGITS, pi_bits),
    )


_CONSTS = {
    _F64: _consts(10, 12, 9, 10, 32, 53, (-746.0, 710.0)),  # |k| < 2^21: 32 + 21 bits
    _F32: _consts(4, 6, 4, 5, 16, 24, (-104.0, 89.0)),  # |k| <= 150: 16 + 8 bits
}
_INV_LN2 = 1.0 / math.log(2.0)


def horner(x, coefs):
    """coefs[0] + x (coefs[1] + x (...)), each step one rounded product and sum (at least
    two coefficients: the last one is a literal of the product, never a broadcast array)."""
    out = tnp.add(tnp.multiply(x, coefs[-1]), coefs[-2])
    for c in reversed(coefs[:-2]):
        out = tnp.add(tnp.multiply(out, x), c)
    return out


def portable(float32: bool):
    """`fn` (of float64 or, with `float32`, of float32 arrays) applied to float arrays of any
    float dtype. float64 computes in float64; the narrower dtypes in float32 where `float32`
    (float16 and bfloat16 widened exactly, the result rounded once), else in float64 (the
    result rounded once to float32, float16 and bfloat16 through it): the same roundings
    eagerly and compiled. Python scalars take the arrays' dtype."""

    def decorate(fn):
        def wrapped(*args):
            arrays = [tnp.asarray(a) for a in args]
            typed = [a.dtype for a, arg in zip(arrays, args) if not isinstance(arg, (int, float))]
            dt = np.result_type(*typed, np.float16) if typed else _F64
            work = _F32 if float32 and dt != _F64 else _F64
            out = fn(*[tnp.astype(a, work) for a in arrays])
            if dt == work:
                return out
            out = tnp.astype(out, _F32)
            return out if dt == _F32 else tnp.astype(out, dt)

        wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
        return wrapped

    return decorate


in_float64 = portable(float32=False)


@portable(float32=True)
def log(x):
    """Natural log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f / (2 + f)),
    f = m - 1 exact, summed as f - (f^2/2 - s (f^2/2 + R)) so that f carries the result."""
    c = _CONSTS[x.dtype]
    ok = tnp.logical_and(tnp.greater(x, 0.0), tnp.not_equal(x, np.inf))  # != never traps
    m, e = split(tnp.where(ok, x, 1.0))
    f = tnp.subtract(m, 1.0)
    s = tnp.divide(f, tnp.add(f, 2.0))
    z = tnp.multiply(s, s)
    r = tnp.multiply(z, horner(z, c.log_terms))
    hfsq = tnp.multiply(tnp.multiply(f, f), 0.5)
    low = tnp.add(tnp.multiply(s, tnp.add(hfsq, r)), tnp.multiply(e, c.ln2[1]))
    out = tnp.subtract(tnp.multiply(e, c.ln2[0]), tnp.subtract(tnp.subtract(hfsq, low), f))
    # special results are added (to finite out; -0.0 + y is y): selects between computed values
    # and special constants let GCC thread ordered comparisons of the result into branches,
    # and a comparison that may trap (-ftrapping-math) there stops the loop's vectorization
    special = tnp.where(tnp.equal(x, 0.0), -np.inf, tnp.full_like(x, -0.0))  # (full_like:
    special = tnp.where(tnp.equal(x, np.inf), np.inf, special)  # a where of two constants is
    special = tnp.where(tnp.greater_equal(x, 0.0), special, np.nan)  # an array constant)
    return tnp.add(out, special)


@portable(float32=True)
def log1p(x):
    """log(1 + x): log(u) for u = 1 + x rounded, corrected by (x - (u - 1)) / u, the first
    order term of the rounding error (exact where u = 1: the result is x)."""
    u = tnp.add(x, 1.0)
    finite = tnp.logical_and(tnp.greater(u, 0.0), tnp.not_equal(u, np.inf))
    safe = tnp.where(finite, u, 1.0)
    fix = tnp.divide(tnp.subtract(x, tnp.subtract(safe, 1.0)), safe)
    out = tnp.add(log(safe), tnp.where(finite, fix, 0.0))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.where(finite, out, log(u))


@portable(float32=True)
def exp(x):
    """e^x: x = k ln 2 + r with k = round(x / ln 2) (x - k ln2_hi is exact), e^r by its
    Taylor series, times 2^k; -inf gives 0, inf gives inf, NaN gives NaN."""
    c = _CONSTS[x.dtype]
    xc = tnp.clip(x, *c.exp_range)  # NaN stays NaN
    k = tnp.rint(tnp.multiply(xc, _INV_LN2))
    hi = tnp.subtract(xc, tnp.multiply(k, c.ln2[0]))
    lo = tnp.multiply(k, c.ln2[1])
    r = tnp.subtract(hi, lo)
    p = tnp.multiply(tnp.multiply(r, r), horner(r, c.exp_terms))
    y = tnp.add(tnp.subtract(hi, tnp.subtract(lo, p)), 1.0)
    return times_pow2(y, tnp.where(tnp.isnan(k), 0.0, k))  # NaN: y is NaN


@in_float64  # in float32, exp would amplify the rounding of y log x by |y log x|
def power(x, y):
    """x ** y for x >= 0 as exp(y log x), with NumPy's x ** 0 = 1 (also at x = 0, inf, NaN)
    and 1 ** y = 1."""
    out = exp(tnp.multiply(y, log(x)))
    return tnp.where(tnp.logical_or(tnp.equal(y, 0.0), tnp.equal(x, 1.0)), 1.0, out)


def _sincos_pi(x):
    """(sin(pi r), cos(pi r), q mod 4 as -2 .. 2) for x = r + q/2, q = rint(2x): r is
    exact, |r| <= 1/4; sin(pi r) = r pi_hi + r (pi_lo + r^2 S(r^2)) (pi_lo: pi beyond its
    rounding) and cos(pi r) = 1 + r^2 C(r^2), Taylor polynomials in r^2."""
    c = _CONSTS[x.dtype]
    q = tnp.rint(tnp.multiply(x, 2.0))  # (2x is exact) ties to even: |r| <= 1/4 still
    r = tnp.subtract(x, tnp.multiply(q, 0.5))
    r2 = tnp.multiply(r, r)
    tail = tnp.multiply(r, tnp.add(tnp.multiply(r2, horner(r2, c.sin_terms)), c.pi[1]))
    sin = tnp.add(tnp.multiply(r, c.pi[0]), tail)
    cos = tnp.add(tnp.multiply(r2, horner(r2, c.cos_terms)), 1.0)
    quarter = tnp.subtract(q, tnp.multiply(tnp.rint(tnp.multiply(q, 0.25)), 4.0))  # in -2 .. 2
    return sin, cos, quarter


def _by_quarter(quarter, values):
    """values[quarter mod 4] for quarter in {-2, -1, 0, 1, 2}."""
    out = tnp.where(tnp.equal(quarter, -1.0), values[3], values[2])
    for i in (1, 0):
        out = tnp.where(tnp.equal(quarter, float(i)), values[i], out)
    return out


def _nan_beyond(x):
    """-0.0 where 2x is finite, else NaN (NumPy's sin(pi x) is NaN where pi x overflows), to
    be added to a result (as log's special values, not selected; -0.0 + y is y)."""
    return tnp.where(tnp.isfinite(tnp.multiply(x, 2.0)), -0.0, tnp.full_like(x, np.nan))


@portable(float32=True)
def sinpi(x):
    """sin(pi x), exact argument reduction for every finite 2x; else NaN."""
    s, c, quarter = _sincos_pi(x)
    out = _by_quarter(quarter, (s, c, tnp.negative(s), tnp.negative(c)))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.add(out, _nan_beyond(x))


@portable(float32=True)
def cospi(x):
    """cos(pi x), exact argument reduction for every finite 2x; else NaN."""
    s, c, quarter = _sincos_pi(x)
    out = _by_quarter(quarter, (c, tnp.negative(s), tnp.negative(c), s))
    return tnp.add(out, _nan_beyond(x))


@in_float64  # a quotient of float32 sin and cos could be 3 ulp off
def tanpi(x):
    """tan(pi x): sin / cos of the reduced argument (-cos / sin in odd quarters)."""
    s, c, quarter = _sincos_pi(x)
    odd = tnp.equal(tnp.absolute(quarter), 1.0)
    out = tnp.where(odd, tnp.negative(tnp.divide(c, s)), tnp.divide(s, c))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.add(out, _nan_beyond(x))


def sum_in_order(x, axis: int = -1, keepdims: bool = False):
    """The sum along `axis` taken left to right, as NumPy's `cumsum` and tracejit's (eager,
    compiled and on a GPU) do, where a compiled `sum` adds in a tree of its own."""
    x = tnp.asarray(x)
    last = [slice(None)] * tnp.ndim(x)
    last[axis] = slice(-1, None)
    total = tnp.cumsum(x, axis=axis)[tuple(last)]
    return total if keepdims else tnp.squeeze(total, axis=axis)


__all__ = ["cospi", "exp", "log", "log1p", "next_toward", "power", "sinpi", "sum_in_order", "tanpi"]
