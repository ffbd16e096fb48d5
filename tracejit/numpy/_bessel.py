"""`i0`: the modified Bessel function of the first kind, order 0, from its power series
(|x| < 30; every term positive, so no cancellation) and its large-argument asymptotic series
(|x| >= 30), both in tnp operations, so it traces and differentiates (i0' = i1)."""

from __future__ import annotations

import math

from tracejit import numpy as tnp
from tracejit.numpy._core import promote

_CUT = 30.0
_SERIES_TERMS = 90  # (15^2 / k^2) products: the terms past k = 90 are below 1e-17 of the sum
_ASYMPTOTIC_TERMS = 14


def i0(x):
    """`np.i0` for real x (even, i0(0) = 1, overflowing to inf past |x| ~ 713).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(np.allclose(tnp.i0(np.array([0.0, 1.0, 40.0])), np.i0([0.0, 1.0, 40.0])))
    True
    """
    (x,) = promote(x, to_float=True)
    a = tnp.absolute(x)
    big = tnp.greater_equal(a, _CUT)
    small = tnp.where(big, 0.0, x)  # each branch sees safe inputs: no nan in the gradients
    q = tnp.multiply(tnp.square(small), 0.25)
    term, total = tnp.ones_like(q), tnp.ones_like(q)
    for k in range(1, _SERIES_TERMS):
        term = tnp.multiply(term, tnp.divide(q, float(k * k)))
        total = tnp.add(total, term)
    z = tnp.where(big, a, _CUT)
    inv8z = tnp.divide(1.0, tnp.multiply(z, 8.0))
    term, acc = tnp.ones_like(z), tnp.ones_like(z)
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = tnp.multiply(term, tnp.multiply(inv8z, float((2 * k - 1) ** 2) / k))
        acc = tnp.add(acc, term)
    # e^z / sqrt(2 pi z) as exp(z / 2)^2 / sqrt(...): finite up to where i0 itself overflows
    half = tnp.exp(tnp.multiply(z, 0.5))
    scale = tnp.divide(half, tnp.sqrt(tnp.multiply(z, 2 * math.pi)))
    return tnp.where(big, tnp.multiply(tnp.multiply(scale, acc), half), total)


__all__ = ["i0"]
