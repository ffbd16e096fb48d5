"""Which `Fallback` steps a backend compiles natively, and their (pre, n, post, m) sizes.

Backend-neutral: a primitive of fusion class KERNEL (ir/primitives.py: take,
take_along_axis, take_add, take_along_add, cumsum, cumprod, threefry2x32) has a kernel rule in
each backend's table, `backend_cpu.gather.CPU_KERNELS` and `backend_cuda.gather.CUDA_KERNELS`
(keyed by the primitive; tests/unit/test_registry.py checks both), and both ask `is_native`
which steps qualify. A gather from an empty axis with a non-empty index raises IndexError in
NumPy; compiled code cannot raise on data, so such steps (shapes are static) stay NumPy
callbacks.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> b = {0: K.Buffer(0, (4, 3), np.dtype(np.float32), "input"),
...      1: K.Buffer(1, (2,), np.dtype(np.int64), "input"),
...      2: K.Buffer(2, (2, 3), np.dtype(np.float32), "output")}
>>> step = K.Fallback("k0", "take", {"axis": 0}, [0, 1], [2])
>>> is_native(step, b), gather_sizes(step, b)
(True, (1, 4, 3, 2))
"""

from __future__ import annotations

import math

from tracejit.ir import kernel as K
from tracejit.ir.primitives import KERNEL, PRIMITIVES


def split_axis(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(rows before, length of, columns after) `axis`."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def is_native(step: K.Fallback, buffers: dict[int, K.Buffer]) -> bool:
    """Whether a backend compiles `step` instead of calling NumPy back."""
    prim = PRIMITIVES.get(step.prim)
    if prim is None or prim.fusion != KERNEL:
        return False
    if step.prim.startswith("take"):
        x, idx = buffers[step.inputs[0]], buffers[step.inputs[1]]
        # NumPy raises IndexError here; only the callback can raise.
        return x.shape[step.attrs["axis"]] > 0 or idx.size == 0
    return True


def gather_sizes(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[int, int, int, int]:
    """(pre, n, post, m) of a take* or scan (cumsum, cumprod) step: x is (pre, n, post), m
    indices per row (a scan's m is n)."""
    x = buffers[step.inputs[0]]
    axis = step.attrs["axis"]
    pre, n, post = split_axis(x.shape, axis)
    if step.prim.startswith("cum"):
        return pre, n, post, n
    idx = buffers[step.inputs[1]]
    m = idx.shape[axis] if step.prim.startswith("take_along") else idx.size
    return pre, n, post, m


__all__ = ["gather_sizes", "is_native", "split_axis"]
