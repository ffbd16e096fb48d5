"""`frexp`, `nextafter`, `spacing`: a float's exponent and its neighbours, from exact
arithmetic on powers of two (no bit casts): the exponent comes from log2 and is corrected by
exact comparisons with 2**(e - 1) and 2**e, and a neighbour is x plus or minus one unit in
the last place, a power of two that the addition represents exactly.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.frexp(np.array([8.0, -0.75]))
(array([ 0.5 , -0.75]), array([4, 0], dtype=int32))
"""

from __future__ import annotations

import numpy as np

from tracejit import numpy as tnp
from tracejit.numpy._core import cast
from tracejit.numpy._math import _real_floats


def _exponent(a):
    """e with a in [2**(e-1), 2**e) for finite a > 0 (any value where a is 0 or not finite)."""
    info = np.finfo(a.dtype)
    safe = tnp.where(tnp.logical_and(tnp.isfinite(a), tnp.greater(a, 0)), a, 1.0)
    e = tnp.add(tnp.floor(tnp.log2(safe)), 1.0)
    e = tnp.clip(e, float(info.minexp - info.nmant), float(info.maxexp))
    e = tnp.where(tnp.greater_equal(safe, _pow2(e)), tnp.add(e, 1.0), e)
    return tnp.where(tnp.less(safe, _pow2(tnp.subtract(e, 1.0))), tnp.subtract(e, 1.0), e)


def _scale(x, e):
    """x * 2**e exactly (while the result is representable) for integral float e: two
    multiplications by in-range halves, so no factor overflows or underflows early."""
    half = tnp.floor(tnp.divide(e, 2.0))
    return tnp.multiply(tnp.multiply(x, tnp.exp2(half)), tnp.exp2(tnp.subtract(e, half)))


def _pow2(e):
    """2**e exactly for integral float e in the dtype's range (subnormals included)."""
    return _scale(tnp.ones_like(e), e)


def frexp(x, /):
    """`np.frexp`: (mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in
    [0.5, 1); 0, inf and nan give themselves and exponent 0. The mantissa's gradient is
    2**-exponent.

    >>> import tracejit.numpy as tnp
    >>> tnp.frexp(0.0)
    (array(0.), array(0, dtype=int32))
    """
    (x,) = _real_floats("frexp", x)
    finite = tnp.logical_and(tnp.isfinite(x), tnp.not_equal(x, 0))
    e = tnp.where(finite, _exponent(tnp.absolute(x)), 0.0)
    mantissa = _scale(x, tnp.negative(e))
    return tnp.where(finite, mantissa, x), cast(e, np.dtype(np.int32))


def _ulp(a, up):
    """The distance from a >= 0 to its neighbour away from zero (`up`) or toward it."""
    info = np.finfo(a.dtype)
    e = _exponent(a)
    ulp = _pow2(
        tnp.maximum(tnp.subtract(e, float(info.nmant + 1)), float(info.minexp - info.nmant))
    )
    at_power = tnp.equal(a, _pow2(tnp.subtract(e, 1.0)))  # below a power of two the step halves
    low = tnp.greater(tnp.subtract(e, 1.0), float(info.minexp))
    halve = tnp.logical_and(tnp.logical_not(up), tnp.logical_and(at_power, low))
    ulp = tnp.where(halve, tnp.multiply(ulp, 0.5), ulp)
    tiny = _pow2(tnp.full_like(a, float(info.minexp - info.nmant)))  # the least subnormal
    return tnp.where(tnp.equal(a, 0), tiny, ulp)


def nextafter(x1, x2, /):
    """`np.nextafter`: the next float after x1 toward x2.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(tnp.nextafter(1.0, 2.0) == np.nextafter(1.0, 2.0))
    True
    """
    x1, x2 = _real_floats("nextafter", x1, x2)
    info = np.finfo(x1.dtype)
    a = tnp.absolute(x1)
    away = tnp.logical_or(tnp.equal(x1, 0), tnp.equal(tnp.greater(x2, x1), tnp.greater(x1, 0)))
    step = _ulp(tnp.where(tnp.isfinite(a), a, 0.0), away)
    toward_up = tnp.where(tnp.greater(x2, x1), 1.0, -1.0)
    out = tnp.add(x1, tnp.multiply(cast(toward_up, x1.dtype), step))
    out = tnp.where(tnp.isinf(x1), tnp.multiply(tnp.sign(x1), float(info.max)), out)
    out = tnp.where(tnp.equal(x1, x2), x2, out)
    return tnp.where(tnp.logical_or(tnp.isnan(x1), tnp.isnan(x2)), np.nan, out)


def spacing(x, /):
    """`np.spacing`: the distance from x to the next float away from zero (negative for x
    below zero, nan for inf and nan).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(tnp.spacing(1.0) == np.finfo(np.float64).eps)
    True
    """
    (x,) = _real_floats("spacing", x)
    a = tnp.absolute(x)
    step = _ulp(tnp.where(tnp.isfinite(a), a, 0.0), True)
    step = tnp.where(tnp.equal(a, float(np.finfo(x.dtype).max)), np.inf, step)
    out = tnp.where(tnp.less(x, 0), tnp.negative(step), step)
    return tnp.where(tnp.isfinite(x), out, np.nan)


__all__ = ["frexp", "nextafter", "spacing"]
