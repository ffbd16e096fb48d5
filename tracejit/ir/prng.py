"""The `threefry2x32(key, counts)` primitive, under tracejit.random.

The cipher itself (its NumPy reference `block` and the C function the backends call) is
ir/threefry.py. A key is two 32-bit words held in an int64 array of shape (2,). The counts
are split in two halves that form the cipher's two words (JAX's layout): the output is the
concatenation of the two output words, each value in [0, 2**32) held in an int64. Both
backends compile it to their own kernel (fusion class KERNEL, ir/gather_plan.py).

>>> [hex(v) for v in threefry2x32_p.impl(np.zeros(2, np.int64), np.zeros(2, np.int64))]
['0x6b200159', '0x99ba4efe']
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import TracejitTypeError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES, zero_vjp
from tracejit.ir.primitives import KERNEL, RANDOM, register
from tracejit.ir.threefry import block

MASK32 = 0xFFFFFFFF
_I64 = np.dtype(np.int64)


def _threefry_impl(key, counts):
    k = np.asarray(key, np.int64) & MASK32
    c = (np.asarray(counts, np.int64) & MASK32).astype(np.uint32)
    n = c.shape[0]
    if n % 2:
        c = np.concatenate([c, np.zeros(1, np.uint32)])
    half = c.shape[0] // 2
    with np.errstate(over="ignore"):
        y0, y1 = block(k[0], k[1], c[:half], c[half:])
    return np.concatenate([y0, y1])[:n].astype(np.int64)


def _threefry_rule(avals):
    (kshape, kdt, _), (cshape, cdt, _) = avals
    if tuple(kshape) != (2,) or not dtypes.is_int(kdt):
        raise TracejitTypeError(
            f"threefry2x32: a key is an integer array of shape (2,), got {kdt}{tuple(kshape)}; "
            "make one with tj.random.key(seed)"
        )
    if len(cshape) != 1 or not dtypes.is_int(cdt):
        raise TracejitTypeError("threefry2x32: counts must be a 1-d integer array")
    return (tuple(cshape), _I64, False)


threefry2x32_p = register(
    "threefry2x32",
    RANDOM,
    _threefry_rule,
    _threefry_impl,
    fusion=KERNEL,
    rules={VJP_RULES: zero_vjp},  # integer bits: no derivative
)

__all__ = ["MASK32", "threefry2x32_p"]
