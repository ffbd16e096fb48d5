"""Elementwise NumPy functions composed from the primitive ufuncs (`logaddexp`, `hypot`, ...).

Each one is a short formula over `_elementwise`, so it traces, differentiates and compiles
wherever its parts do. Formulas are the numerically careful ones NumPy uses (`logaddexp`
shifts by the max; `hypot` scales by the larger magnitude).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._public import defined_here
from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.numpy import _elementwise as ew
from tracejit.numpy._complex import imag, make_complex, real, real_only
from tracejit.numpy._core import cast, promote, shape_of
from tracejit.numpy._reductions import all as all_

pi, e, euler_gamma = math.pi, math.e, float(np.euler_gamma)
inf, nan = math.inf, math.nan
newaxis = None


def _floats(*xs):
    """Ints and bools as NumPy's float ufuncs take them: the smallest float every operand
    casts to safely (int8 -> float16, int32 -> float64)."""
    return promote(*xs, to_float="ufunc")


def _real_floats(name: str, *xs):
    real_only(name, *xs)
    return _floats(*xs)


def logaddexp(x1, x2):
    """`np.logaddexp`: log(exp(x1) + exp(x2)) without overflow.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(abs(float(tnp.logaddexp(1000.0, 1000.0)) - 1000.0 - np.log(2)) < 1e-12)
    True
    """
    x1, x2 = _real_floats("logaddexp", x1, x2)
    m = ew.maximum(x1, x2)
    same = ew.equal(x1, x2)  # equal infinities: the difference below would be nan
    tail = ew.log1p(ew.exp(ew.negative(ew.absolute(ew.subtract(x1, x2)))))
    return ew.where(same, ew.add(x1, math.log(2)), ew.add(m, tail))


def logaddexp2(x1, x2):
    """`np.logaddexp2`: log2(2**x1 + 2**x2) without overflow.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.logaddexp2(3.0, 3.0))
    4.0
    """
    x1, x2 = _real_floats("logaddexp2", x1, x2)
    m = ew.maximum(x1, x2)
    same = ew.equal(x1, x2)
    tail = ew.divide(ew.log1p(ew.exp2(ew.negative(ew.absolute(ew.subtract(x1, x2))))), math.log(2))
    return ew.where(same, ew.add(x1, 1.0), ew.add(m, tail))


def hypot(x1, x2):
    """`np.hypot`: sqrt(x1**2 + x2**2), scaled by the larger magnitude so it cannot overflow.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.hypot(3.0, 4.0)), float(tnp.hypot(3e200, 4e200)) / 1e200
    (5.0, 5.0)
    """
    x1, x2 = _real_floats("hypot", x1, x2)
    a, b = ew.absolute(x1), ew.absolute(x2)
    big, small = ew.maximum(a, b), ew.minimum(a, b)
    safe = ew.where(ew.equal(big, 0.0), 1.0, big)
    ratio = ew.divide(small, safe)
    out = ew.multiply(big, ew.sqrt(ew.add(1.0, ew.multiply(ratio, ratio))))
    return ew.where(ew.logical_or(ew.isinf(x1), ew.isinf(x2)), np.inf, out)


def deg2rad(x):
    """`np.deg2rad` (also `radians`).

    >>> import tracejit.numpy as tnp
    >>> float(tnp.deg2rad(180.0)) == float(tnp.pi)
    True
    """
    (x,) = _floats(x)
    return ew.multiply(x, math.pi / 180)


def rad2deg(x):
    """`np.rad2deg` (also `degrees`).

    >>> import tracejit.numpy as tnp
    >>> float(tnp.rad2deg(tnp.pi))
    180.0
    """
    (x,) = _floats(x)
    return ew.multiply(x, 180 / math.pi)


radians, degrees = deg2rad, rad2deg


def cbrt(x):
    """`np.cbrt`: the real cube root (negative for negative x).

    >>> import tracejit.numpy as tnp
    >>> float(tnp.cbrt(-8.0))
    -2.0
    """
    (x,) = _real_floats("cbrt", x)
    root = ew.power(ew.absolute(x), 1.0 / 3.0)
    return ew.where(ew.less(x, 0.0), ew.negative(root), root)


def signbit(x):
    """`np.signbit`: True where the sign bit is set (also for -0.0 and negative NaN-free values).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.signbit(np.array([-1.0, -0.0, 0.0, 2.0]))
    array([ True,  True, False, False])
    """
    (x,) = promote(x)
    real_only("signbit", x)
    if not dtypes.is_float(x.dtype):
        return ew.less(x, 0)
    # -0.0: 1 / -0.0 is -inf
    return ew.logical_or(ew.less(x, 0.0), ew.less(ew.divide(1.0, x), 0.0))


def copysign(x1, x2):
    """`np.copysign`: the magnitude of x1 with the sign of x2.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.copysign(3.0, -0.0))
    -3.0
    """
    x1, x2 = _real_floats("copysign", x1, x2)
    mag = ew.absolute(x1)
    return ew.where(signbit(x2), ew.negative(mag), mag)


def fabs(x):
    """`np.fabs`: the absolute value as a float.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.fabs(-2))
    2.0
    """
    (x,) = _real_floats("fabs", x)
    return ew.absolute(x)


def rint(x):
    """`np.rint`: round half to even.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.rint(np.array([0.5, 1.5, -2.5]))
    array([ 0.,  2., -2.])
    """
    (x,) = promote(x)
    if dtypes.is_complex(x.dtype):  # each part, as NumPy's
        return make_complex(ew.round(real(x)), ew.round(imag(x)))
    return ew.round(x) if dtypes.is_float(x.dtype) else cast(x, np.float64)


def sinc(x):
    """`np.sinc`: sin(pi x) / (pi x), 1 at 0.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.sinc(0.0)), abs(float(tnp.sinc(1.0))) < 1e-15
    (1.0, True)
    """
    (x,) = promote(x, to_float=True)  # not a ufunc: ints become float64
    zero = ew.equal(x, 0.0)
    y = ew.multiply(ew.where(zero, 1.0, x), math.pi)
    return ew.where(zero, 1.0, ew.divide(ew.sin(y), y))


def heaviside(x1, x2):
    """`np.heaviside`: 0 below zero, x2 at zero, 1 above (nan stays nan).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5)
    array([0. , 0.5, 1. ])
    """
    x1, x2 = _real_floats("heaviside", x1, x2)
    step = ew.where(ew.less(x1, 0.0), 0.0, ew.where(ew.greater(x1, 0.0), 1.0, x2))
    return ew.where(ew.isnan(x1), x1, step)


def float_power(x1, x2):
    """`np.float_power`: `power` computed in float64.

    >>> import tracejit.numpy as tnp
    >>> tnp.float_power(2, 3).dtype
    dtype('float64')
    """
    x1, x2 = promote(x1), promote(x2)
    cplx = any(dtypes.is_complex(x[0].dtype) for x in (x1, x2))
    dt = np.complex128 if cplx else np.float64  # NumPy: complex operands give complex128
    return ew.power(cast(x1[0], dt), cast(x2[0], dt))


def fmod(x1, x2):
    """`np.fmod`: the remainder with the sign of the dividend (C's fmod).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.fmod(np.array([-7, 7]), 3)
    array([-1,  1])
    """
    x1, x2 = promote(x1, x2)
    r = ew.remainder(x1, x2)
    fix = ew.logical_and(ew.not_equal(r, 0), ew.not_equal(signbit(r), signbit(x1)))
    return ew.where(fix, ew.subtract(r, x2), r)


def modf(x):
    """`np.modf`: (fractional part, integral part), both with the sign of x.

    >>> import tracejit.numpy as tnp
    >>> [float(v) for v in tnp.modf(-2.5)]
    [-0.5, -2.0]
    """
    (x,) = _floats(x)
    whole = ew.trunc(x)
    return ew.subtract(x, whole), whole


def ldexp(x1, x2):
    """`np.ldexp`: x1 * 2**x2.

    >>> import tracejit.numpy as tnp
    >>> float(tnp.ldexp(3.0, 2))
    12.0
    """
    (x1,) = _floats(x1)
    return ew.multiply(x1, ew.exp2(cast(x2, x1.dtype)))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None):
    """`np.nan_to_num`: nan to `nan`, +-inf to the largest finite values (or the given ones).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.nan_to_num(np.array([np.nan, np.inf, -1.0]), posinf=9.0)
    array([ 0.,  9., -1.])
    """
    (x,) = promote(x)
    if dtypes.is_complex(x.dtype):  # each part on its own, as NumPy's
        parts = [nan_to_num(p, copy, nan, posinf, neginf) for p in (real(x), imag(x))]
        return make_complex(*parts)
    if not dtypes.is_float(x.dtype):
        return x
    big = float(np.finfo(x.dtype).max)
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    out = ew.where(ew.isnan(x), nan, x)
    out = ew.where(ew.logical_and(ew.isinf(x), ew.greater(x, 0.0)), hi, out)
    return cast(ew.where(ew.logical_and(ew.isinf(x), ew.less(x, 0.0)), lo, out), x.dtype)


def isposinf(x):
    """`np.isposinf`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isposinf(np.array([np.inf, -np.inf]))
    array([ True, False])
    """
    real_only("isposinf", x)
    return ew.logical_and(ew.isinf(x), ew.greater(x, 0))


def isneginf(x):
    """`np.isneginf`.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isneginf(np.array([np.inf, -np.inf]))
    array([False,  True])
    """
    real_only("isneginf", x)
    return ew.logical_and(ew.isinf(x), ew.less(x, 0))


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """`np.isclose`: |a - b| <= atol + rtol * |b|; infinities must match exactly.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.isclose(np.array([1.0, np.nan]), np.array([1.0 + 1e-9, np.nan]), equal_nan=True)
    array([ True,  True])
    """
    a, b = promote(a, b, to_float=True)  # not a ufunc: ints become float64
    finite = ew.logical_and(ew.isfinite(a), ew.isfinite(b))
    diff = ew.absolute(ew.subtract(ew.where(finite, a, 0.0), ew.where(finite, b, 0.0)))
    near = ew.less_equal(
        diff, ew.add(atol, ew.multiply(rtol, ew.absolute(ew.where(finite, b, 0.0))))
    )
    out = ew.where(finite, near, ew.equal(a, b))
    if equal_nan:
        out = ew.logical_or(out, ew.logical_and(ew.isnan(a), ew.isnan(b)))
    return out


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """`np.allclose`: `isclose` everywhere (a 0-d bool array; traced inside `jit`).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(tnp.allclose(np.ones(3), np.ones(3) + 1e-9))
    True
    """
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """`np.array_equal`: same shape and equal elements (False for different shapes).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(tnp.array_equal(np.arange(3), np.arange(3))), bool(tnp.array_equal([1], [1, 2]))
    (True, False)
    """
    if tuple(shape_of(a1)) != tuple(shape_of(a2)):
        return np.asarray(False)
    same = ew.equal(a1, a2)
    if equal_nan:
        same = ew.logical_or(same, ew.logical_and(ew.isnan(a1), ew.isnan(a2)))
    return all_(same)


def array_equiv(a1, a2):
    """`np.array_equiv`: equal after broadcasting (False when they cannot broadcast).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> bool(tnp.array_equiv(np.ones((2, 2)), np.ones(2)))
    True
    """
    try:
        np.broadcast_shapes(tuple(shape_of(a1)), tuple(shape_of(a2)))
    except ValueError:
        return np.asarray(False)
    return all_(ew.equal(a1, a2))


def _ints_only(name: str, *xs):
    xs = promote(*xs)
    if not all(dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype) for x in xs):
        raise UnsupportedError(f"{name} is defined for integers, got {[str(x.dtype) for x in xs]}")
    return xs


def bitwise_count(x):
    """`np.bitwise_count`: the number of 1 bits of |x| (as uint8 in NumPy; int32 here).

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.bitwise_count(np.array([0, 7, -8]))
    array([0, 3, 1], dtype=int32)
    """
    (x,) = _ints_only("bitwise_count", x)
    x = ew.absolute(cast(x, np.int64))
    # SWAR popcount: bit pairs, nibbles, bytes, then the byte sums (no overflow: all >= 0)
    x = ew.subtract(x, ew.bitwise_and(ew.right_shift(x, 1), 0x5555555555555555))
    m2 = 0x3333333333333333
    x = ew.add(ew.bitwise_and(x, m2), ew.bitwise_and(ew.right_shift(x, 2), m2))
    x = ew.bitwise_and(ew.add(x, ew.right_shift(x, 4)), 0x0F0F0F0F0F0F0F0F)
    for shift in (8, 16, 32):
        x = ew.add(x, ew.right_shift(x, shift))
    return cast(ew.bitwise_and(x, 0x7F), np.int32)


__all__ = defined_here(  # noqa: PLE0605
    globals(), extra=("pi", "e", "euler_gamma", "inf", "nan", "newaxis")
)
