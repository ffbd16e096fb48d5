"""erf and its inverse from correctly rounded operations only, for tracejit.random's
truncated_normal: the same bits eagerly, compiled and on a GPU (see _portable_math.py for why
libm's `erf` would not give them).

`erf` computes by Taylor polynomials: x (c0 + c1 x^2 + ...) below 1/2 and one polynomial in
x - c around each center c = 3/4, 5/4, ... of the half-unit pieces up to where erf rounds to 1
(6 in float64, 4 in float32); each first coefficient is hi + lo, so that only its product's or
sum's rounding remains. The coefficients are the exact Taylor coefficients (derivatives of erf
are Hermite polynomials times e^-x^2), computed once in 60-digit decimal arithmetic; the first
dropped term is below 2^-60 of the result in float64, 2^-30 in float32 (which computes in
float32, with 10 terms per piece rather than 18). Measured: below 1.5 ulp against mpmath in
float64, 1.62 ulp in float32 (tests/backend/test_portable_math.py).

`erfinv` is Giles's single-precision approximation ("Approximating the erfinv function", GPU
Computing Gems, 2011) refined by Newton steps on `erf`, in the argument's dtype: two in
float64, one in float32 (below 2.9 ulp; a second one gains nothing).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from tracejit import numpy as tnp
from tracejit._portable_bits import unit_with_sign_of
from tracejit._portable_math import _PI_DIGITS, exp, horner, log, portable

_PIECES = 11  # centers (2 i + 1) / 4 for i = 1 .. 11, each for |x| in [i / 2, (i + 1) / 2)
_TERMS = 18  # per piece: |x - c| <= 1/4, the dropped term is below 1e-18
_ORIGIN_TERMS = 14  # x < 1/2: x^2 <= 1/4, the dropped term is below 1e-19


def _coefficients():
    """(origin, pieces, firsts): erf(x) / x as a polynomial in x^2 (the series at 0), for each
    center c the Taylor coefficients of erf at c, f^(n)(c) / n!, and the first coefficient of
    each series (the origin's, then the pieces') as `_hi_lo` pairs."""
    with localcontext() as ctx:
        ctx.prec = 60
        two_over_sqrt_pi = 2 / Decimal(_PI_DIGITS).sqrt()
        origin = [two_over_sqrt_pi * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                  for n in range(_ORIGIN_TERMS)]  # fmt: skip
        pieces = []
        for i in range(1, _PIECES + 1):
            c = Decimal(2 * i + 1) / 4
            value = sum(two_over_sqrt_pi * (-1) ** n * c ** (2 * n + 1)
                        / (math.factorial(n) * (2 * n + 1)) for n in range(200))  # fmt: skip
            density = two_over_sqrt_pi * (-(c * c)).exp()
            coefs = [value]
            h_prev, h = Decimal(0), Decimal(1)  # Hermite H_(n-2), H_(n-1) at c
            for n in range(1, _TERMS):
                # f^(n)(c) = (-1)^(n-1) H_(n-1)(c) 2/sqrt(pi) e^(-c^2)
                coefs.append((-1) ** (n - 1) * h * density / math.factorial(n))
                h_prev, h = h, 2 * c * h - 2 * (n - 1) * h_prev
            pieces.append(coefs)
        firsts = [_hi_lo(origin[0])] + [_hi_lo(p[0]) for p in pieces]
        floats = [[float(v) for v in p] for p in pieces]
        return tuple(float(v) for v in origin), floats, firsts


def _hi_lo(value: Decimal) -> dict:
    """{format: (hi, lo)}: `value` rounded to float64 and to float32, and the rest."""
    out = {}
    for dt in (np.dtype(np.float64), np.dtype(np.float32)):
        hi = float(np.asarray(float(value), dt))
        out[dt] = (hi, float(value - Decimal(hi)))
    return out


_ORIGIN, _PIECE_COEFS, _FIRSTS = _coefficients()
# per working precision: (pieces, terms per piece, terms at the origin, where erf rounds to 1);
# float32's series stop where the first dropped term is below 2^-30 of the result
_CUTS = {np.dtype(np.float64): (_PIECES, _TERMS, _ORIGIN_TERMS, 6.0),
         np.dtype(np.float32): (7, 10, 7, 4.0)}  # fmt: skip


@portable(float32=True)
def erf(x):
    """The error function (NaN gives NaN, +-inf gives +-1)."""
    pieces, terms, origin_terms, one = _CUTS[x.dtype]
    a = tnp.absolute(x)
    hi, lo = _FIRSTS[0][x.dtype]
    a2 = tnp.multiply(a, a)  # a hi + a (lo + a^2 P(a^2)): hi's own rounding drops out
    near = tnp.multiply(a, tnp.add(tnp.multiply(a2, horner(a2, _ORIGIN[1:origin_terms])), lo))
    near = tnp.add(tnp.multiply(a, hi), near)
    # the nearest center (ties to either: |a - c| <= 1/4 both ways); rint vectorizes, floor not
    piece = tnp.clip(tnp.rint(tnp.subtract(tnp.multiply(a, 2.0), 0.5)), 1.0, float(pieces))
    d = tnp.subtract(a, tnp.add(tnp.multiply(piece, 0.5), 0.25))
    which = [tnp.equal(piece, float(i)) for i in range(1, pieces)]

    def by_piece(values):
        out = tnp.full_like(a, values[pieces - 1])
        for i in range(pieces - 2, -1, -1):
            out = tnp.where(which[i], values[i], out)
        return out

    far = by_piece([p[terms - 1] for p in _PIECE_COEFS])
    for j in range(terms - 2, 0, -1):
        far = tnp.add(tnp.multiply(far, d), by_piece([p[j] for p in _PIECE_COEFS]))
    firsts = [f[x.dtype] for f in _FIRSTS[1:]]  # erf(c) as hi + (lo + d P(d))
    far = tnp.add(tnp.multiply(far, d), by_piece([lo for _, lo in firsts]))
    far = tnp.add(by_piece([hi for hi, _ in firsts]), far)
    out = tnp.where(tnp.less(a, 0.5), near, far)
    out = tnp.where(tnp.greater_equal(a, one), 1.0, out)
    return tnp.multiply(out, unit_with_sign_of(x))  # erf(-0.0) = -0.0; NaN stays NaN


def erfinv(y):
    """erf^-1(y) on (-1, 1), in y's dtype."""
    w = tnp.negative(log(tnp.multiply(tnp.subtract(1.0, y), tnp.add(1.0, y))))
    central = tnp.subtract(w, 2.5)
    tail = tnp.subtract(tnp.sqrt(tnp.maximum(w, 5.0)), 3.0)
    small = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
    large = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip
    p_small = horner(central, small[::-1])
    p_large = horner(tail, large[::-1])
    x = tnp.multiply(tnp.where(tnp.less(w, 5.0), p_small, p_large), y)
    for _ in range(2 if tnp.asarray(y).dtype == np.float64 else 1):  # a second: no gain
        slope = tnp.multiply(exp(tnp.negative(tnp.multiply(x, x))), 2.0 / math.sqrt(math.pi))
        x = tnp.subtract(x, tnp.divide(tnp.subtract(erf(x), y), slope))
    return x


__all__ = ["erf", "erfinv"]
