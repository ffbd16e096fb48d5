"""erf and its inverse from correctly rounded operations only, for tracejit.random's
truncated_normal: the same bits eagerly, compiled and on a GPU (see _portable_math.py for why
libm's `erf` would not give them).

`erf` computes in float64 (float32 widened and rounded back once) by Taylor polynomials:
x (c0 + c1 x^2 + ...) below 1/2 and one polynomial in x - c around each center c = 3/4, 5/4,
..., 23/4 of the half-unit pieces up to 6, where erf rounds to 1 in float64. The coefficients
are the exact Taylor coefficients (derivatives of erf are Hermite polynomials times e^-x^2),
computed once in 60-digit decimal arithmetic and rounded to float64; the first dropped term is
below 2^-60 of the result. Measured: below 1.5 ulp against mpmath
(tests/backend/test_portable_math.py).

`erfinv` is Giles's single-precision approximation ("Approximating the erfinv function", GPU
Computing Gems, 2011) refined by two Newton steps on `erf`, in the argument's dtype.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

from tracejit import numpy as tnp
from tracejit._portable_bits import unit_with_sign_of
from tracejit._portable_math import _PI_DIGITS, exp, horner, in_float64, log

_PIECES = 11  # centers (2 i + 1) / 4 for i = 1 .. 11, each for |x| in [i / 2, (i + 1) / 2)
_TERMS = 18  # per piece: |x - c| <= 1/4, the dropped term is below 1e-18
_ORIGIN_TERMS = 14  # x < 1/2: x^2 <= 1/4, the dropped term is below 1e-19


def _coefficients():
    """(origin, pieces): erf(x) / x as a polynomial in x^2 (the series at 0), and for each
    center c the Taylor coefficients of erf at c, f^(n)(c) / n!."""
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
            pieces.append([float(v) for v in coefs])
        return tuple(float(v) for v in origin), pieces


_ORIGIN, _PIECE_COEFS = _coefficients()


@in_float64
def erf(x):
    """The error function (NaN gives NaN, +-inf gives +-1)."""
    a = tnp.absolute(x)
    near = tnp.multiply(a, horner(tnp.multiply(a, a), _ORIGIN))
    # the nearest center (ties to either: |a - c| <= 1/4 both ways); rint vectorizes, floor not
    piece = tnp.clip(tnp.rint(tnp.subtract(tnp.multiply(a, 2.0), 0.5)), 1.0, float(_PIECES))
    d = tnp.subtract(a, tnp.add(tnp.multiply(piece, 0.5), 0.25))
    which = [tnp.equal(piece, float(i)) for i in range(1, _PIECES)]
    coefs = []
    for j in range(_TERMS):
        c = tnp.full_like(a, _PIECE_COEFS[-1][j])
        for i in range(_PIECES - 2, -1, -1):
            c = tnp.where(which[i], _PIECE_COEFS[i][j], c)
        coefs.append(c)
    far = coefs[-1]
    for c in reversed(coefs[:-1]):
        far = tnp.add(tnp.multiply(far, d), c)
    out = tnp.where(tnp.less(a, 0.5), near, far)
    out = tnp.where(tnp.greater_equal(a, 6.0), 1.0, out)
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
    for _ in range(2):
        slope = tnp.multiply(exp(tnp.negative(tnp.multiply(x, x))), 2.0 / math.sqrt(math.pi))
        x = tnp.subtract(x, tnp.divide(tnp.subtract(erf(x), y), slope))
    return x


__all__ = ["erf", "erfinv"]
