"""A float's exponent and powers of two from its bits, for tracejit._portable_math.

`lax.bitcast_convert_type` reads a float64 (float32) as int64 (int32): integer shifts, masks
and adds then give the exponent, build 2^k and step to the next float exactly, the same bits
eagerly, compiled and on a GPU. Integer <-> float conversions are avoided too: for an integer
0 <= n < 2^p (p the mantissa bits), the float whose bits are those of 2^p or n is 2^p + n, so
one subtraction reads n as a float, and one addition writes it (`_Format.magic`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from tracejit import numpy as tnp
from tracejit.ir import dtypes
from tracejit.lax import bitcast_convert_type as bitcast


class _Format(NamedTuple):
    ints: np.dtype  # the signed integer of the same size
    nmant: int  # mantissa bits
    bias: int  # exponent bias
    tiny: float  # the smallest normal

    @property
    def magic(self) -> float:
        return float(2**self.nmant)


FORMATS = {
    np.dtype(np.float64): _Format(np.dtype(np.int64), 52, 1023, 2.0**-1022),
    np.dtype(np.float32): _Format(np.dtype(np.int32), 23, 127, 2.0**-126),
}


def _bits_of(value: float, dtype) -> int:
    """The bits of `value` rounded to float `dtype`, as a signed integer."""
    return int(np.asarray(value, dtype).view(FORMATS[np.dtype(dtype)].ints))


def split(x):
    """(m, e) with x = m 2^e, m in [sqrt(1/2), sqrt(2)) and e an integral float, for x > 0
    finite of float64 or float32: the bits of x minus those of sqrt(1/2) hold e in their top
    bits (subnormals are scaled up exactly first)."""
    fmt = FORMATS[x.dtype]
    sub = tnp.less(x, fmt.tiny)
    x = tnp.where(sub, tnp.multiply(x, 2.0 ** (fmt.nmant + 1)), x)
    bits = bitcast(x, fmt.ints)
    k = tnp.right_shift(tnp.subtract(bits, _bits_of(math.sqrt(0.5), x.dtype)), fmt.nmant)
    as_float = bitcast(tnp.bitwise_or(tnp.add(k, fmt.bias), _bits_of(fmt.magic, x.dtype)), x.dtype)
    e = tnp.subtract(as_float, fmt.magic + fmt.bias)
    m = times_pow2(x, tnp.negative(e))  # exact, and differentiable (a bit cast is not)
    return m, tnp.where(sub, tnp.subtract(e, float(fmt.nmant + 1)), e)


def _pow2(k):
    """2^k for integral float k in the normal exponents: its biased exponent written into
    the exponent field (the magic's own bits shift out at the top)."""
    fmt = FORMATS[k.dtype]
    biased = bitcast(tnp.add(k, fmt.magic + fmt.bias), fmt.ints)
    return bitcast(tnp.left_shift(biased, fmt.nmant), k.dtype)


def times_pow2(y, k):
    """y * 2^k for integral k (of y's float dtype) with |k| <= 2 (bias - 1) and y 2^k/2
    normal or y within [0.5, 2]: two exact factors 2^h and 2^(k - h), h = rint(k / 2), so only the last
    product rounds (to a subnormal, 0 or inf where the exact result is out of range)."""
    half = tnp.rint(tnp.multiply(k, 0.5))
    return tnp.multiply(tnp.multiply(y, _pow2(half)), _pow2(tnp.subtract(k, half)))


def unit_with_sign_of(x):
    """+-1.0 with the sign bit of x (-0.0 and NaNs with it set give -1): the bits of 1.0 with
    that bit or'ed in, no select for a compiler to branch on."""
    fmt = FORMATS[x.dtype]
    sign = tnp.bitwise_and(bitcast(x, fmt.ints), int(np.iinfo(fmt.ints).min))
    return bitcast(tnp.bitwise_or(sign, _bits_of(1.0, x.dtype)), x.dtype)


def next_toward(x, up: bool):
    """`np.nextafter(x, inf if up else -inf)` for a float array x of its own dtype: the
    neighbouring bit pattern (one up in magnitude away from zero, one down toward it), zero
    steps to the smallest subnormal, NaN stays NaN."""
    x = tnp.asarray(x)
    ints = np.dtype(f"i{x.dtype.itemsize}")
    away = tnp.equal(tnp.greater(x, 0.0), up)
    bits = bitcast(x, ints)
    out = bitcast(tnp.add(bits, tnp.astype(tnp.where(away, 1, -1), ints)), x.dtype)
    info = dtypes.finfo(x.dtype)
    smallest = 2.0 ** (info.minexp - info.nmant)
    out = tnp.where(tnp.equal(x, 0.0), smallest if up else -smallest, out)
    edge = np.inf if up else -np.inf
    return tnp.where(tnp.logical_or(tnp.equal(x, edge), tnp.isnan(x)), x, out)


__all__ = ["FORMATS", "next_toward", "split", "times_pow2", "unit_with_sign_of"]
