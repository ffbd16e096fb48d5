"""Elementary functions of complex arguments: sqrt, log (log2, log10, log1p), exp2, expm1,
sin, cos, tan, sinh, cosh, tanh, reciprocal, power, sign and the NaN/Inf tests.

Each is written in real arithmetic on the real and imaginary parts (tracejit/numpy/_complex.py
splits and joins them), so it traces, compiles on both backends and differentiates in JAX's
convention through the `real`/`imag`/`complex` primitives without a rule of its own. The
formulas are the careful ones of the C99 library NumPy calls (glibc's csqrt, clog, ctanh;
Kahan, "Branch cuts for complex elementary functions", 1987): a scaled hypot, log1p near
|z| = 1, sinh/cosh products that keep signed zeros, and ctanh's form that does not overflow.
`tnp.<name>` calls them for complex operands (`COMPLEX_UFUNCS`, keyed by primitive name).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy import _complex_order as _order
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._complex import imag, make_complex, real
from tracejit.numpy._core import aval_of, cast, promote
from tracejit.numpy._math import copysign, hypot
from tracejit.tracer.core import Tracer


def _parts(z):
    (z,) = promote(z)
    return real(z), imag(z)


def sqrt(z):
    """The principal square root; the branch cut on the negative real axis follows the
    sign of the imaginary part (also of -0.0), as C99's csqrt."""
    x, y = _parts(z)
    h = hypot(x, y)
    t = ew.sqrt(ew.add(ew.multiply(ew.absolute(x), 0.5), ew.multiply(h, 0.5)))
    zero = ew.equal(t, 0.0)
    u = ew.divide(y, ew.multiply(ew.where(zero, 1.0, t), 2.0))
    re = ew.where(ew.greater_equal(x, 0.0), t, ew.absolute(u))
    im = ew.where(ew.greater_equal(x, 0.0), u, copysign(t, y))
    re, im = ew.where(zero, 0.0, re), ew.where(zero, y, im)
    inf_y = ew.isinf(y)  # sqrt(x +- i inf) = inf +- i inf, even for a NaN x
    return make_complex(ew.where(inf_y, np.inf, re), ew.where(inf_y, y, im))


def log(z):
    """log|z| + i arg z; near |z| = 1 the real part is log1p((m - 1)(m + 1) + s**2) / 2 (m,
    s the larger and smaller magnitude), free of the cancellation in log(hypot)."""
    x, y = _parts(z)
    ax, ay = ew.absolute(x), ew.absolute(y)
    big, small = ew.maximum(ax, ay), ew.minimum(ax, ay)
    h = hypot(x, y)
    near = ew.logical_and(ew.greater(h, 0.5), ew.less(h, 2.0))
    big, small = ew.where(near, big, 1.0), ew.where(near, small, 0.0)
    inner = ew.add(ew.multiply(ew.subtract(big, 1.0), ew.add(big, 1.0)), ew.multiply(small, small))
    re = ew.where(near, ew.multiply(ew.log1p(inner), 0.5), ew.log(ew.where(near, 1.0, h)))
    return make_complex(re, ew.arctan2(y, x))


def _scaled(w, factor: float):
    return make_complex(ew.multiply(real(w), factor), ew.multiply(imag(w), factor))


def log10(z):
    return _scaled(log(z), 1.0 / math.log(10.0))


def log2(z):
    return _scaled(log(z), 1.0 / math.log(2.0))


def log1p(z):
    """log(1 + z); where |1 + z| is near 1 the real part is log1p(x (2 + x) + y**2) / 2,
    accurate for small z (NumPy's nc_log1p, log(hypot(1 + x, y)), loses the low digits)."""
    x, y = _parts(z)
    x1 = ew.add(x, 1.0)
    h = hypot(x1, y)
    near = ew.logical_and(ew.greater(h, 0.5), ew.less(h, 2.0))
    xs, ys = ew.where(near, x, 0.0), ew.where(near, y, 0.0)
    inner = ew.add(ew.multiply(xs, ew.add(xs, 2.0)), ew.multiply(ys, ys))
    re = ew.where(near, ew.multiply(ew.log1p(inner), 0.5), ew.log(ew.where(near, 1.0, h)))
    return make_complex(re, ew.arctan2(y, x1))


def exp(z):
    """exp(x) (cos y + i sin y), as NumPy's npy_cexp computes it, with its special values
    (C99 Annex G): a zero y stays (exp(inf + 0j) is inf + 0j, not inf + nan j; nan + 0j
    stays); an infinite or NaN y gives inf + nan j after x = +inf and 0 + 0j after -inf
    (the zero with y's sign, as glibc's cexp that NumPy calls)."""
    x, y = _parts(z)
    r = ew.exp(x)
    c, s = ew.cos(y), ew.sin(y)
    # where exp(x) overflows but exp(x) cos y need not (x past 709.78 in double, 88.72 in
    # single), exp(x / 2) twice, as npy_cexp scales: exp(710 + 0.5j) is inf + 1.07e308 j
    h = ew.exp(ew.multiply(x, 0.5))
    over = ew.logical_and(ew.isinf(r), ew.isfinite(x))
    re = ew.where(over, ew.multiply(ew.multiply(h, c), h), ew.multiply(r, c))
    im = ew.where(over, ew.multiply(ew.multiply(h, s), h), ew.multiply(r, s))
    zero_y, bad_y = ew.equal(y, 0.0), ew.logical_not(ew.isfinite(y))
    inf_x = ew.isinf(x)
    to_zero = ew.logical_and(bad_y, ew.logical_and(inf_x, ew.less(x, 0.0)))
    keep_r = ew.logical_or(zero_y, ew.logical_and(bad_y, ew.logical_and(inf_x, ew.greater(x, 0.0))))
    re = ew.where(keep_r, r, ew.where(to_zero, 0.0, re))
    im = ew.where(zero_y, y, ew.where(to_zero, copysign(0.0, y), im))
    return make_complex(re, im)


def exp2(z):
    x, y = _parts(z)
    return exp(make_complex(ew.multiply(x, math.log(2.0)), ew.multiply(y, math.log(2.0))))


def expm1(z):
    """exp(z) - 1 = expm1(x) cos y - 2 sin(y/2)**2 + i exp(x) sin y (NumPy's nc_expm1)."""
    x, y = _parts(z)
    half = ew.sin(ew.multiply(y, 0.5))
    re = ew.subtract(ew.multiply(ew.expm1(x), ew.cos(y)), ew.multiply(ew.multiply(half, half), 2.0))
    return make_complex(re, ew.multiply(ew.exp(x), ew.sin(y)))


# The special values of C99 Annex G as glibc's csinh/ccosh/ctanh (which NumPy calls) give them:
# the product formulas are right wherever both parts are finite or x is infinite and y finite
# and nonzero; elsewhere they would multiply inf by 0 or NaN. sin, cos and tan are the
# hyperbolic functions of i z, as Annex G defines them (sin z = -i sinh(i z)).


def _sinh_parts(x, y):
    re, im = ew.multiply(ew.sinh(x), ew.cos(y)), ew.multiply(ew.cosh(x), ew.sin(y))
    bad_y, zero_y, inf_x = ew.logical_not(ew.isfinite(y)), ew.equal(y, 0.0), ew.isinf(x)
    # x + i0: (sinh x, y) (cosh x overflowing times 0 would be NaN); 0 + i inf|nan: (x, nan);
    # +-inf + i inf|nan: (+inf, nan)
    re = ew.where(ew.logical_and(ew.equal(x, 0.0), bad_y), x, re)
    re = ew.where(ew.logical_and(inf_x, bad_y), np.inf, re)
    im = ew.where(zero_y, y, im)
    return re, im


def _cosh_parts(x, y):
    re, im = ew.multiply(ew.cosh(x), ew.cos(y)), ew.multiply(ew.sinh(x), ew.sin(y))
    bad_y, zero_y, inf_x = ew.logical_not(ew.isfinite(y)), ew.equal(y, 0.0), ew.isinf(x)
    # x + i0: (cosh x, y sign(x)) (sinh x overflowing times 0 would be NaN; NaN x: y);
    # 0 + i inf|nan: (nan, +0); inf + i inf|nan: (inf, nan)
    im = ew.where(zero_y, ew.where(ew.isnan(x), y, ew.multiply(y, copysign(1.0, x))), im)
    im = ew.where(ew.logical_and(ew.equal(x, 0.0), bad_y), 0.0, im)
    re = ew.where(ew.logical_and(inf_x, bad_y), np.inf, re)
    return re, im


def sin(z):
    """sin z = -i sinh(i z); glibc's csin gives +inf for the imaginary part of an infinite
    or NaN x with an infinite y (whatever their signs)."""
    x, y = _parts(z)
    a, b = _sinh_parts(ew.negative(y), x)
    up = ew.logical_and(ew.logical_not(ew.isfinite(x)), ew.isinf(y))
    return make_complex(b, ew.where(up, np.inf, ew.negative(a)))


def cos(z):
    """cos z = cosh(i z)."""
    x, y = _parts(z)
    return make_complex(*_cosh_parts(ew.negative(y), x))


def sinh(z):
    return make_complex(*_sinh_parts(*_parts(z)))


def cosh(z):
    return make_complex(*_cosh_parts(*_parts(z)))


def _tanh_parts(x, y):
    """(sinh x cosh x + i sin y cos y) / (sinh(x)**2 + cos(y)**2), glibc's ctanh; beyond the
    overflow threshold of cosh(x)**2 it is sign(x) + 4i sin y cos y exp(-2|x|). Special
    values as glibc's: inf + iy is sign(x) + a zero (of sin y cos y's sign for a finite
    |y| > 1, else y's); otherwise a NaN or infinite part gives x + iy where y is 0, x + i nan
    where x is 0, else NaN."""
    info = np.finfo(aval_of(x)[0])
    far = ew.greater(ew.absolute(x), (info.maxexp - 1) * math.log(2.0) / 2.0)
    xs = ew.where(far, 0.0, x)
    s, c = ew.sinh(xs), ew.cosh(xs)
    sy, cy = ew.sin(y), ew.cos(y)
    den = ew.add(ew.multiply(s, s), ew.multiply(cy, cy))
    scy = ew.multiply(sy, cy)
    tail = ew.multiply(ew.multiply(scy, 4.0), ew.exp(ew.multiply(ew.absolute(x), -2.0)))
    re = ew.where(far, copysign(1.0, x), ew.divide(ew.multiply(s, c), den))
    im = ew.where(far, tail, ew.divide(scy, den))
    inf_x, fin_y = ew.isinf(x), ew.isfinite(y)
    big_y = ew.logical_and(fin_y, ew.greater(ew.absolute(y), 1.0))
    im = ew.where(inf_x, ew.where(big_y, copysign(0.0, scy), copysign(0.0, y)), im)
    other = ew.logical_and(ew.logical_not(inf_x), ew.logical_or(ew.isnan(x), ew.logical_not(fin_y)))
    keep_x = ew.logical_and(other, ew.logical_or(ew.equal(y, 0.0), ew.equal(x, 0.0)))
    re = ew.where(keep_x, x, ew.where(other, np.nan, re))  # 0 + i inf|nan: (x, nan)
    im = ew.where(ew.logical_and(other, ew.equal(y, 0.0)), y, ew.where(other, np.nan, im))
    return re, im


def tanh(z):
    x, y = _parts(z)
    return make_complex(*_tanh_parts(x, y))


def tan(z):
    """tan z = -i tanh(i z)."""
    x, y = _parts(z)
    a, b = _tanh_parts(ew.negative(y), x)
    return make_complex(b, ew.negative(a))


def _sqrt_parts(x, y):
    w = sqrt(make_complex(x, y))
    return real(w), imag(w)


def _conj_times(a, b):
    """(re, im) of conj(a) * b for parts a = (ar, ai), b = (br, bi)."""
    (ar, ai), (br, bi) = a, b
    re = ew.add(ew.multiply(ar, br), ew.multiply(ai, bi))
    return re, ew.subtract(ew.multiply(ar, bi), ew.multiply(ai, br))


def _one_minus_plus(x, y):
    """sqrt(1 - z) and sqrt(1 + z) as part pairs (1 - z keeps -y: Kahan's signed zeros)."""
    return _sqrt_parts(ew.subtract(1.0, x), ew.negative(y)), _sqrt_parts(ew.add(1.0, x), y)


def _asin_parts(x, y):
    """Kahan's casin: atan2(x, Re(sqrt(1 - z) sqrt(1 + z))) + i asinh(Im(conj(sqrt(1 - z))
    sqrt(1 + z)))."""
    m, p = _one_minus_plus(x, y)
    den = ew.subtract(ew.multiply(m[0], p[0]), ew.multiply(m[1], p[1]))
    return ew.arctan2(x, den), ew.arcsinh(_conj_times(m, p)[1])


def _nonfinite_specials(x, y, cases):
    """(mask, re, im): where x or y is not finite, the first of `cases` ((condition, re, im)
    triples, in order) that holds; the caller keeps its formula elsewhere."""
    mask = ew.logical_not(ew.logical_and(ew.isfinite(x), ew.isfinite(y)))
    re, im = np.nan, np.nan
    for cond, r, i in reversed(cases):
        re, im = ew.where(cond, r, re), ew.where(cond, i, im)
    return mask, re, im


def _asinh_specials(x, y):
    """casinh's special values (C99 Annex G; odd, conj-symmetric)."""
    inf_x, inf_y, nan_x = ew.isinf(x), ew.isinf(y), ew.isnan(x)
    inf_sx = copysign(np.inf, x)
    return _nonfinite_specials(x, y, [
        (ew.logical_and(inf_x, inf_y), inf_sx, copysign(math.pi / 4, y)),
        (ew.logical_and(inf_x, ew.isnan(y)), inf_sx, np.nan),
        (inf_x, inf_sx, copysign(0.0, y)),
        (ew.logical_and(inf_y, nan_x), np.inf, np.nan),
        (inf_y, inf_sx, copysign(math.pi / 2, y)),
        (ew.logical_and(nan_x, ew.equal(y, 0.0)), np.nan, y),
    ])  # fmt: skip


def _atanh_specials(x, y):
    """catanh's special values (C99 Annex G; odd, conj-symmetric)."""
    inf_x, inf_y = ew.isinf(x), ew.isinf(y)
    return _nonfinite_specials(x, y, [
        (inf_y, copysign(0.0, x), copysign(math.pi / 2, y)),
        (ew.logical_and(inf_x, ew.isfinite(y)), copysign(0.0, x), copysign(math.pi / 2, y)),
        (inf_x, copysign(0.0, x), np.nan),
        (ew.logical_and(ew.equal(x, 0.0), ew.isnan(y)), x, np.nan),
    ])  # fmt: skip


def _with_specials(re, im, specials):
    mask, sre, sim = specials
    dt = aval_of(re)[0]
    return make_complex(ew.where(mask, cast(sre, dt), re), ew.where(mask, cast(sim, dt), im))


def _rotated(specials):
    """The specials of f(i z) turned into those of -i f(i z): (a, b) -> (b, -a)."""
    mask, a, b = specials
    return mask, b, ew.negative(a)


def arcsin(z):
    """Kahan's casin; special values those of -i asinh(i z), but +inf for the imaginary part
    of +-inf + nan j (glibc's casin)."""
    x, y = _parts(z)
    mask, re, im = _rotated(_asinh_specials(ew.negative(y), x))
    im = ew.where(ew.logical_and(ew.isinf(x), ew.isnan(y)), np.inf, im)
    return _with_specials(*_asin_parts(x, y), (mask, re, im))


def _acos_limits(x):
    """cacos's real part (cacosh's imaginary part, with y's sign) at an infinite x:
    (pi/4 or 3pi/4 where y is infinite too, 0 or pi where y is finite) by x's sign."""
    neg = ew.less(x, 0.0)
    both = ew.where(neg, 3 * math.pi / 4, math.pi / 4)
    return both, ew.where(neg, math.pi, 0.0)


def arccos(z):
    """Kahan's cacos: 2 atan2(Re sqrt(1 - z), Re sqrt(1 + z)) + i asinh(Im(conj(sqrt(1 + z))
    sqrt(1 - z))); special values as glibc's (C99 Annex G)."""
    x, y = _parts(z)
    m, p = _one_minus_plus(x, y)
    re = ew.multiply(ew.arctan2(m[0], p[0]), 2.0)
    both, along = _acos_limits(x)
    inf_x, inf_y, down = ew.isinf(x), ew.isinf(y), ew.negative(copysign(np.inf, y))
    specials = _nonfinite_specials(x, y, [
        (ew.logical_and(inf_x, inf_y), both, down),
        (ew.logical_and(inf_x, ew.isnan(y)), np.nan, -np.inf),
        (inf_x, along, down),
        (inf_y, ew.where(ew.isnan(x), np.nan, math.pi / 2), down),
        (ew.logical_and(ew.equal(x, 0.0), ew.isnan(y)), math.pi / 2, np.nan),
    ])  # fmt: skip
    return _with_specials(re, ew.arcsinh(_conj_times(p, m)[1]), specials)


def arcsinh(z):
    """asinh z = -i asin(i z)."""
    x, y = _parts(z)
    a, b = _asin_parts(ew.negative(y), x)
    return _with_specials(b, ew.negative(a), _asinh_specials(x, y))


def arccosh(z):
    """Kahan's cacosh: asinh(Re(conj(sqrt(z - 1)) sqrt(z + 1))) + 2i atan2(Im sqrt(z - 1),
    Re sqrt(z + 1))."""
    x, y = _parts(z)
    m, p = _sqrt_parts(ew.subtract(x, 1.0), y), _sqrt_parts(ew.add(x, 1.0), y)
    re = ew.arcsinh(_conj_times(m, p)[0])
    both, along = _acos_limits(x)
    inf_x, inf_y = ew.isinf(x), ew.isinf(y)
    specials = _nonfinite_specials(x, y, [
        (ew.logical_and(inf_x, inf_y), np.inf, copysign(both, y)),
        (ew.logical_and(inf_x, ew.isnan(y)), np.inf, np.nan),
        (inf_x, np.inf, copysign(along, y)),
        (ew.logical_and(inf_y, ew.isnan(x)), np.inf, np.nan),
        (inf_y, np.inf, copysign(math.pi / 2, y)),
        (ew.logical_and(ew.equal(x, 0.0), ew.isnan(y)), np.nan, math.pi / 2),
    ])  # fmt: skip
    return _with_specials(re, ew.multiply(ew.arctan2(m[1], p[0]), 2.0), specials)


def _atanh_parts(x, y):
    """(log1p(z) - log1p(-z)) / 2: no cancellation for small z (the terms have opposite
    signs)."""
    plus = log1p(make_complex(x, y))
    minus = log1p(make_complex(ew.negative(x), ew.negative(y)))
    re = ew.multiply(ew.subtract(real(plus), real(minus)), 0.5)
    return re, ew.multiply(ew.subtract(imag(plus), imag(minus)), 0.5)


def _atanh_signed(x, y):
    """atanh's parts with the signs of x and y (its real part has x's sign, its imaginary
    part y's, everywhere: -0 + 1j gives -0 + 0.785j, as NumPy, where the log1p difference
    gave +0)."""
    re, im = _atanh_parts(x, y)
    return copysign(re, x), copysign(im, y)


def arctanh(z):
    x, y = _parts(z)
    return _with_specials(*_atanh_signed(x, y), _atanh_specials(x, y))


def arctan(z):
    """atan z = -i atanh(i z); +-inf + nan j gives +-pi/2 + 0j (glibc's catan)."""
    x, y = _parts(z)
    a, b = _atanh_signed(ew.negative(y), x)
    mask, re, im = _rotated(_atanh_specials(ew.negative(y), x))
    im = ew.where(ew.logical_and(ew.isinf(x), ew.isnan(y)), 0.0, im)
    return _with_specials(b, ew.negative(a), (mask, re, im))


def reciprocal(z):
    """1 / z as NumPy's complex `reciprocal` (and `z ** -1`) computes it: Smith's quotient
    with no special cases, so 0 gives nan + nan j (1 / z, a division, gives inf + nan j) and
    inf gives 0 - 0j; each part rounds as NumPy's C loop (no fused multiply-add)."""
    (z,) = promote(z)
    x, y = _parts(z)
    smaller = ew.less_equal(ew.absolute(y), ew.absolute(x))  # |Im z| <= |Re z|
    r1 = ew.divide(y, x)
    d1 = ew.add(x, ew.multiply(y, r1))
    r2 = ew.divide(x, y)
    d2 = ew.add(ew.multiply(x, r2), y)
    re = ew.where(smaller, ew.divide(1.0, d1), ew.divide(r2, d2))
    im = ew.where(smaller, ew.divide(ew.negative(r1), d1), ew.divide(-1.0, d2))
    return make_complex(re, im)


def sign(z):
    """z / |z| (0 at 0) as NumPy 2's complex sign: an infinite part gives its sign
    (1 + 0j for inf + nan j), both parts infinite give NaN."""
    x, y = _parts(z)
    m = hypot(x, y)
    inf_x, inf_y = ew.isinf(x), ew.isinf(y)
    zero = ew.equal(m, 0.0)
    safe = ew.where(ew.logical_or(zero, ew.isinf(m)), 1.0, m)
    re = ew.where(inf_x, copysign(1.0, x), ew.where(inf_y | zero, 0.0, ew.divide(x, safe)))
    im = ew.where(inf_x | zero, 0.0, ew.where(inf_y, copysign(1.0, y), ew.divide(y, safe)))
    both = ew.logical_and(inf_x, inf_y)
    return make_complex(ew.where(both, np.nan, re), ew.where(both, np.nan, im))


def isnan(z):
    x, y = _parts(z)
    return ew.logical_or(ew.isnan(x), ew.isnan(y))


def isinf(z):
    x, y = _parts(z)
    return ew.logical_or(ew.isinf(x), ew.isinf(y))


def isfinite(z):
    x, y = _parts(z)
    return ew.logical_and(ew.isfinite(x), ew.isfinite(y))


def _integer_exponent(b) -> int | None:
    """A concrete real integral exponent in (-100, 100), where NumPy multiplies."""
    if isinstance(b, Tracer) or np.ndim(b) != 0:
        return None
    v = complex(np.asarray(b).item())
    if v.imag != 0 or v.real != int(v.real) or not -100 < v.real < 100:
        return None
    return int(v.real)


def _integer_power(a, n: int):
    """NumPy's npy_cpow for an integer exponent 1 < |n| < 100 (a is not zero there): a * a,
    a * (a * a), else binary powering from 1 + 0j (its first product 1 * p is computed: it
    turns an infinite part's partner to NaN, as NumPy), then 1 / r for n < 0."""
    if n == 1:
        return a
    if n in (2, 3):
        return ew.multiply(a, a) if n == 2 else ew.multiply(a, ew.multiply(a, a))
    out, p, m, mask = _one_like(a), a, abs(n), 1
    while True:
        if m & mask:
            out = ew.multiply(out, p)
        mask <<= 1
        if m < mask:
            break
        p = ew.multiply(p, p)
    return ew.divide(_one_like(a), out) if n < 0 else out


def _one_like(a):
    return np.ones((), aval_of(a)[0])  # 1 + 0j of a's dtype (a constant, never folded away)


def power(a, b):
    """a ** b for complex operands, as NumPy's npy_cpow: b == 0 gives 1 + 0j (a NaN or
    infinite a too); a == 0 gives 0 + 0j for a positive real part of b, else NaN + NaN j;
    a small integer b multiplies (_integer_power); else exp(b log a)."""
    n = _integer_exponent(b)
    a, b = promote(a, b)
    a, b = _as_complex(a), _as_complex(b)
    base_zero = ew.equal(a, 0.0)
    if n is not None:
        if n == 0:  # (a's shape and dtype)
            return ew.where(base_zero, _one_like(a), _one_like(a))
        zero_pow = 0.0 if n > 0 else complex(np.nan, np.nan)
        return ew.where(base_zero, zero_pow, _integer_power(a, n))
    w = exp(_annex_g_multiply(log(ew.where(base_zero, 1.0, a)), b))
    dt = aval_of(w)[0]
    zero_pow = ew.where(
        ew.greater(real(b), 0.0), np.zeros((), dt), np.full((), complex(np.nan, np.nan), dt)
    )
    w = ew.where(base_zero, zero_pow, w)
    return ew.where(ew.equal(b, 0.0), 1.0, w)


def _times(a, b, c, d):
    """The parts of (a + ib)(c + id), as the textbook (and NumPy's cmul) computes them."""
    re = ew.subtract(ew.multiply(a, c), ew.multiply(b, d))
    return re, ew.add(ew.multiply(a, d), ew.multiply(b, c))


def _recovered(p, q, infinite):
    """A factor's parts for C99's recomputation: where `infinite` (the factor has an
    infinite part) +-1 for an infinite part and +-0 for another; elsewhere NaN parts as +-0."""
    dt = aval_of(p)[0]

    def part(t):
        boxed = copysign(cast(ew.where(ew.isinf(t), 1.0, 0.0), dt), t)
        return ew.where(infinite, boxed, ew.where(ew.isnan(t), copysign(0.0, t), t))

    return part(p), part(q)


def _annex_g_multiply(u, v):
    """u * v as C99's complex multiplication (Annex G, the __muldc3 that glibc's cpow uses
    for b log a): where the plain product is NaN + NaN j but a factor is infinite, the
    infinite factor's parts become +-1 / +-0, the other's NaNs +-0, and the product is
    scaled by inf (log(inf + nan j) * 0.5 is inf + nan j, not nan + nan j)."""
    a, b = _parts(u)
    c, d = _parts(v)
    x, y = _times(a, b, c, d)
    inf_u = ew.logical_or(ew.isinf(a), ew.isinf(b))
    inf_v = ew.logical_or(ew.isinf(c), ew.isinf(d))
    recalc = ew.logical_and(ew.logical_and(ew.isnan(x), ew.isnan(y)), ew.logical_or(inf_u, inf_v))
    x2, y2 = _times(*_recovered(a, b, inf_u), *_recovered(c, d, inf_v))
    # inf only where it is used: a gradient through the other branch stays finite
    scale = cast(ew.where(recalc, np.inf, 1.0), aval_of(a)[0])
    x2, y2 = ew.multiply(x2, scale), ew.multiply(y2, scale)
    return make_complex(ew.where(recalc, x2, x), ew.where(recalc, y2, y))


def _as_complex(x):
    if dtypes.is_complex(aval_of(x)[0]):
        return x
    return ew.add(x, np.zeros((), np.result_type(aval_of(x)[0], np.complex64)))


def complex_rounding(fn, name: str, z, decimals: int):
    """`round` of complex z rounds both parts (NumPy); floor, ceil, trunc are undefined."""
    if name not in ("round", "around", "round_"):
        raise UnsupportedError(f"{name} is not defined for complex values (NumPy: TypeError)")
    x, y = _parts(z)
    return make_complex(fn(x, decimals), fn(y, decimals))


COMPLEX_UFUNCS = {
    "pow": power,
    "max": _order.maximum,
    "min": _order.minimum,
    "lt": _order.less,
    "le": _order.less_equal,
    "gt": _order.greater,
    "ge": _order.greater_equal,
    "sign": sign,
    "sqrt": sqrt,
    "log": log,
    "log10": log10,
    "log2": log2,
    "log1p": log1p,
    "exp": exp,
    "exp2": exp2,
    "expm1": expm1,
    "sin": sin,
    "cos": cos,
    "tan": tan,
    "sinh": sinh,
    "cosh": cosh,
    "tanh": tanh,
    "asin": arcsin,
    "acos": arccos,
    "atan": arctan,
    "asinh": arcsinh,
    "acosh": arccosh,
    "atanh": arctanh,
    "isnan": isnan,
    "isinf": isinf,
    "isfinite": isfinite,
}
