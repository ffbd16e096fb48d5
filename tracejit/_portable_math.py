"""Elementary functions built from correctly rounded operations only, for tracejit.random.

`np.log`, glibc's (vector) libm under the generated C++ and CUDA's libdevice each round their
elementary functions in their own way: the same float argument gives results 1 to 4 ulp apart,
so a sampler calling `tnp.log` gave different numbers eagerly, under `jit(device="cpu")` and
on a GPU. The functions here are compositions of + - * /, comparisons, `where` and `floor`,
which IEEE 754 rounds the same way everywhere (the C++ is compiled with -ffp-contract=off and
CUDA with -fmad=false, so no product is fused into an add), so their results are the same
bits on every path, by construction.

They compute in float64 (a float32 or narrower argument is widened exactly and the result
rounded once back, twice for float16/bfloat16: through float32, on every path), at these
accuracies against the exactly rounded result (tests/backend/test_portable_math.py):

- `log`, `exp`: below 1 ulp in float64, `log1p` below 1.2; float32 results are correctly rounded but
  for rare double roundings (<= 0.5 ulp and a hair).
- `sinpi`, `cospi` (sin and cos of pi x) and `tanpi`: below 2 ulp in float64.
- `power(x, y)` for x >= 0: exp(y log x), below 1 + 2 |y log x| ulp in float64 (the
  rounding of y log x is amplified by exp); float32 results as log's and exp's.
- `next_toward(x, up)`: `np.nextafter(x, +-inf)` exactly.

`sum_in_order` adds along an axis left to right (a cumulative sum's last element), so that a
sampler's sums too are the same bits everywhere: a compiled `sum` adds in a tree.

The reductions need a float's exponent, which without a bit cast comes from exact
comparisons with powers of two (`_split`), and 2^k is built by exact products (`_times_pow2`).
Special values are NumPy's: log(0) = -inf, log(x < 0) = nan, exp(inf) = inf, exp(-inf) = 0,
NaN gives NaN.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from tracejit import numpy as tnp
from tracejit.ir import dtypes

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


# k * _LN2_HI is exact for |k| < 2**21
_LN2_HI, _LN2_LO = _split_constant(_LN2_DIGITS, 32)
_INV_LN2 = 1.0 / math.log(2.0)
_SQRT2 = math.sqrt(2.0)
# log(1 + f) = 2 atanh(s), s = f / (2 + f): the series' terms after 2 s, 2 s^(2k+1)/(2k+1),
# as a polynomial in z = s^2 (|s| <= 0.1716: the first one dropped is below 2^-59 of log)
_LOG_TERMS = tuple(2.0 / (2 * k + 1) for k in range(1, 11))
# exp(r) - 1 - r = r^2 (1/2! + r/3! + ...) for |r| <= ln(2)/2 (dropped: below 2^-57)
_EXP_TERMS = tuple(1.0 / math.factorial(n) for n in range(2, 14))
# sin(t) / t - 1 and (cos(t) - 1 + t^2/2) / t^4 as polynomials in t^2, |t| <= pi/4
_SIN_TERMS = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(1, 10))
_COS_TERMS = tuple((-1) ** k / math.factorial(2 * k) for k in range(2, 11))
_PI_HI, _PI_LO = _split_constant(_PI_DIGITS, 53)  # math.pi and the rest


def horner(x, coefs):
    """coefs[0] + x (coefs[1] + x (...)), each step one rounded product and sum."""
    out = tnp.asarray(coefs[-1], x.dtype)
    for c in reversed(coefs[:-1]):
        out = tnp.add(tnp.multiply(out, x), c)
    return out


def in_float64(fn):
    """`fn` (float64 -> float64) applied to float arrays of any float dtype: float32 is
    widened exactly and the result rounded once; float16 and bfloat16 round through float32,
    the same two roundings eagerly and compiled. Python scalars take the arrays' dtype."""

    def wrapped(*args):
        arrays = [tnp.asarray(a) for a in args]
        typed = [a.dtype for a, arg in zip(arrays, args) if not isinstance(arg, (int, float))]
        dt = np.result_type(*typed, np.float16) if typed else _F64
        out = fn(*[tnp.astype(a, _F64) for a in arrays])
        if dt == _F64:
            return out
        out = tnp.astype(out, _F32)
        return out if dt == _F32 else tnp.astype(out, dt)

    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _split(x):
    """(m, e) with x = m 2^e, m in [1, 2), for float64 x > 0 finite: scale tiny x up by
    2^1022 (and subnormals by 2^54 more), then halve the exponent range ten times, each step
    an exact product by a power of two."""
    small = tnp.less(x, 1.0)
    x = tnp.where(small, tnp.multiply(x, 2.0**1022), x)
    e = tnp.where(small, -1022.0, 0.0)
    sub = tnp.less(x, 1.0)  # was subnormal
    x = tnp.where(sub, tnp.multiply(x, 2.0**54), x)
    e = tnp.where(sub, tnp.subtract(e, 54.0), e)
    for k in (512, 256, 128, 64, 32, 16, 8, 4, 2, 1):
        big = tnp.greater_equal(x, 2.0**k)
        x = tnp.where(big, tnp.multiply(x, 2.0**-k), x)
        e = tnp.where(big, tnp.add(e, float(k)), e)
    return x, e


def _pow2_abs(k):
    """2^|k| for integral float64 |k| < 1024, as a product of the powers of its bits."""
    a = tnp.absolute(k)
    p = tnp.ones_like(a)
    for b in range(9, -1, -1):
        bit = tnp.greater_equal(a, float(2**b))
        a = tnp.where(bit, tnp.subtract(a, float(2**b)), a)
        p = tnp.where(bit, tnp.multiply(p, 2.0 ** (2**b)), p)
    return p


def _times_pow2(y, k):
    """y * 2^k for integral float64 k in [-2046, 2046] and y within [0.5, 2]: two exact
    factors 2^floor(k/2) and 2^ceil(k/2), so only the last product rounds (to a subnormal, 0
    or inf where the exact result is out of range)."""
    half = tnp.floor(tnp.multiply(k, 0.5))
    p = _pow2_abs(half)
    p = tnp.where(tnp.less(half, 0.0), tnp.divide(1.0, p), p)
    q = tnp.where(tnp.equal(half, tnp.multiply(k, 0.5)), p, tnp.multiply(p, 2.0))
    return tnp.multiply(tnp.multiply(y, p), q)


@in_float64
def log(x):
    """Natural log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f / (2 + f)),
    f = m - 1 exact, summed as f - (f^2/2 - s (f^2/2 + R)) so that f carries the result."""
    ok = tnp.logical_and(tnp.greater(x, 0.0), tnp.less(x, np.inf))
    m, e = _split(tnp.where(ok, x, 1.0))
    high = tnp.greater(m, _SQRT2)
    m = tnp.where(high, tnp.multiply(m, 0.5), m)
    e = tnp.where(high, tnp.add(e, 1.0), e)
    f = tnp.subtract(m, 1.0)
    s = tnp.divide(f, tnp.add(f, 2.0))
    z = tnp.multiply(s, s)
    r = tnp.multiply(z, horner(z, _LOG_TERMS))
    hfsq = tnp.multiply(tnp.multiply(f, f), 0.5)
    low = tnp.add(tnp.multiply(s, tnp.add(hfsq, r)), tnp.multiply(e, _LN2_LO))
    out = tnp.subtract(tnp.multiply(e, _LN2_HI), tnp.subtract(tnp.subtract(hfsq, low), f))
    out = tnp.where(tnp.equal(x, 0.0), -np.inf, out)
    out = tnp.where(tnp.equal(x, np.inf), np.inf, out)
    return tnp.where(tnp.logical_or(tnp.less(x, 0.0), tnp.isnan(x)), np.nan, out)


@in_float64
def log1p(x):
    """log(1 + x): log(u) for u = 1 + x rounded, corrected by (x - (u - 1)) / u, the first
    order term of the rounding error (exact where u = 1: the result is x)."""
    u = tnp.add(x, 1.0)
    finite = tnp.logical_and(tnp.greater(u, 0.0), tnp.less(u, np.inf))
    safe = tnp.where(finite, u, 1.0)
    fix = tnp.divide(tnp.subtract(x, tnp.subtract(safe, 1.0)), safe)
    out = tnp.add(log(safe), tnp.where(finite, fix, 0.0))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.where(finite, out, log(u))


@in_float64
def exp(x):
    """e^x: x = k ln 2 + r with k = round(x / ln 2) (x - k _LN2_HI is exact), e^r by its
    Taylor series, times 2^k; -inf gives 0, inf gives inf, NaN gives NaN."""
    xc = tnp.clip(x, -746.0, 710.0)  # beyond: 0 or inf (and NaN stays NaN)
    k = tnp.floor(tnp.add(tnp.multiply(xc, _INV_LN2), 0.5))
    hi = tnp.subtract(xc, tnp.multiply(k, _LN2_HI))
    lo = tnp.multiply(k, _LN2_LO)
    r = tnp.subtract(hi, lo)
    p = tnp.multiply(tnp.multiply(r, r), horner(r, _EXP_TERMS))
    y = tnp.add(tnp.subtract(hi, tnp.subtract(lo, p)), 1.0)
    out = _times_pow2(y, tnp.where(tnp.isnan(k), 0.0, k))
    return tnp.where(tnp.isnan(x), x, out)


@in_float64
def power(x, y):
    """x ** y for x >= 0 as exp(y log x), with NumPy's x ** 0 = 1 (also at x = 0, inf, NaN)
    and 1 ** y = 1."""
    out = exp(tnp.multiply(y, log(x)))
    return tnp.where(tnp.logical_or(tnp.equal(y, 0.0), tnp.equal(x, 1.0)), 1.0, out)


def _sincos_pi(x):
    """(sin(pi r), cos(pi r), q mod 4) for float64 x = r + q/2, q = round(2x): r is exact,
    |r| <= 1/4, and pi r is r _PI_HI + r _PI_LO (pi beyond float64's rounding of it)."""
    q = tnp.floor(tnp.add(tnp.multiply(x, 2.0), 0.5))
    r = tnp.subtract(x, tnp.multiply(q, 0.5))
    t = tnp.add(tnp.multiply(r, _PI_HI), tnp.multiply(r, _PI_LO))
    t2 = tnp.multiply(t, t)
    sin = tnp.add(t, tnp.multiply(tnp.multiply(t, t2), horner(t2, _SIN_TERMS)))
    hz = tnp.multiply(t2, 0.5)
    cos = tnp.add(tnp.subtract(1.0, hz), tnp.multiply(tnp.multiply(t2, t2), horner(t2, _COS_TERMS)))
    quarter = tnp.subtract(q, tnp.multiply(tnp.floor(tnp.multiply(q, 0.25)), 4.0))  # q mod 4
    return sin, cos, quarter


def _by_quarter(quarter, values):
    """values[quarter] for quarter in {0, 1, 2, 3}."""
    out = values[3]
    for i in (2, 1, 0):
        out = tnp.where(tnp.equal(quarter, float(i)), values[i], out)
    return out


@in_float64
def sinpi(x):
    """sin(pi x), exact argument reduction for every finite x; inf and NaN give NaN."""
    s, c, quarter = _sincos_pi(x)
    out = _by_quarter(quarter, (s, c, tnp.negative(s), tnp.negative(c)))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.where(tnp.isfinite(x), out, np.nan)


@in_float64
def cospi(x):
    """cos(pi x), exact argument reduction for every finite x; inf and NaN give NaN."""
    s, c, quarter = _sincos_pi(x)
    out = _by_quarter(quarter, (c, tnp.negative(s), tnp.negative(c), s))
    return tnp.where(tnp.isfinite(x), out, np.nan)


@in_float64
def tanpi(x):
    """tan(pi x): sin / cos of the reduced argument (-cos / sin in odd quarters)."""
    s, c, quarter = _sincos_pi(x)
    odd = tnp.equal(tnp.subtract(quarter, tnp.multiply(tnp.floor(tnp.multiply(quarter, 0.5)),
                                                       2.0)), 1.0)  # fmt: skip
    out = tnp.where(odd, tnp.negative(tnp.divide(c, s)), tnp.divide(s, c))
    out = tnp.where(tnp.equal(x, 0.0), x, out)  # keeps -0.0
    return tnp.where(tnp.isfinite(x), out, np.nan)


def next_toward(x, up: bool):
    """`np.nextafter(x, inf if up else -inf)` for a float array x of its own dtype: x plus
    or minus its unit in the last place, a power of two the sum represents exactly."""
    x = tnp.asarray(x)
    info = dtypes.finfo(x.dtype)
    a = tnp.astype(tnp.absolute(x), _F64)
    finite = tnp.logical_and(tnp.isfinite(a), tnp.greater(a, 0.0))
    m, e = _split(tnp.where(finite, a, 1.0))
    # toward zero from a power of two (above the subnormals) the step is half as large
    away = tnp.equal(tnp.greater(x, 0.0), up)
    shrink = tnp.logical_and(tnp.logical_not(away), tnp.equal(m, 1.0))
    e = tnp.where(
        tnp.logical_and(shrink, tnp.greater(e, float(info.minexp))), tnp.subtract(e, 1.0), e
    )
    k = tnp.maximum(tnp.subtract(e, float(info.nmant)), float(info.minexp - info.nmant))
    ulp = tnp.where(finite, _times_pow2(tnp.ones_like(k), k), 2.0 ** (info.minexp - info.nmant))
    step = tnp.astype(ulp, x.dtype)
    out = tnp.add(x, step) if up else tnp.subtract(x, step)
    out = tnp.where(tnp.logical_and(tnp.equal(out, 0.0), tnp.less(x, 0.0)), -0.0, out)
    edge = np.inf if up else -np.inf
    out = tnp.where(tnp.equal(x, -edge), -float(info.max) if up else float(info.max), out)
    return tnp.where(tnp.equal(x, edge), x, out)


def sum_in_order(x, axis: int = -1, keepdims: bool = False):
    """The sum along `axis` taken left to right, as NumPy's `cumsum` and tracejit's (eager,
    compiled and on a GPU) do, where a compiled `sum` adds in a tree of its own."""
    x = tnp.asarray(x)
    last = [slice(None)] * tnp.ndim(x)
    last[axis] = slice(-1, None)
    total = tnp.cumsum(x, axis=axis)[tuple(last)]
    return total if keepdims else tnp.squeeze(total, axis=axis)


__all__ = ["cospi", "exp", "log", "log1p", "next_toward", "power", "sinpi", "sum_in_order", "tanpi"]
