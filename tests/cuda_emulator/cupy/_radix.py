"""The order of CuPy's sort of a one-axis float32/float64 array: thrust's radix sort over the
bits (cupy/cuda/cupy_thrust.cu). NumPy alone, so tests load it beside a real CuPy too."""

from __future__ import annotations

import numpy as np

_UINT = {4: np.uint32, 8: np.uint64}


def radix_order(x: np.ndarray) -> np.ndarray:
    """The stable order of a radix sort over IEEE bits: -NaN < -inf < ... < -0.0 < 0.0 < ...
    < inf < +NaN (negative values' bits flipped, positive ones' sign bit set)."""
    u = x.view(_UINT[x.itemsize])
    top = np.array(1 << (8 * x.itemsize - 1), u.dtype)
    return np.argsort(np.where(u & top, ~u, u | top), kind="stable")
