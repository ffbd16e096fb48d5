"""Which way a reduction kernel reads memory, decided once for both backends.

A load is "row" when it moves by one element along the last reduced axis (rows are
contiguous: softmax, a sum over the last axis) and "column" when it moves by one element
along the last kept axis instead (a sum over axis 0). A stride of -1 (a reversed view)
counts as 1: consecutive indices still touch consecutive addresses, so a row is read from
one cache line after another on a CPU, and a warp's loads still coalesce on a GPU.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> f32 = np.dtype("float32")
>>> sum0 = K.Reduction(0, "sum", K.Load(0, 0, (1, 64), f32), f32, 0)
>>> load_bias(K.Kernel("k0", (64,), (32,), [sum0], []))
(0, 1)
"""

from __future__ import annotations

from tracejit.ir import kernel as K


def load_bias(k: K.Kernel) -> tuple[int, int]:
    """(loads contiguous along the reduced axes, loads contiguous along the last kept axis)."""
    nouter = len(k.outer)
    row = col = 0
    for ld in k.loads():
        inner = ld.strides[nouter:]
        if not any(inner):
            continue
        if abs(inner[-1]) == 1:
            row += 1
        elif nouter and abs(ld.strides[nouter - 1]) == 1:
            col += 1
    return row, col


__all__ = ["load_bias"]
