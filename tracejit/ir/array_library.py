"""Host primitives written once over an array namespace: NumPy's, or CuPy's on a GPU.

Linear algebra, FFTs and sorting have no kernel of tracejit's own. Their implementation is
one function `impl(*arrays, xp=numpy, **attrs)` over a NumPy-compatible namespace `xp`, and
it serves twice: with NumPy it is the primitive's reference implementation (the interpreter,
and the CPU program's callback); with CuPy the CUDA program runs it on device arrays, so the
work goes to cuSOLVER, cuFFT and CuPy's sort on the function's stream and no operand crosses
to the host (backend_cuda/library.py). `ARRAY_IMPLS` holds them: `register(..., impl, rules={ARRAY_IMPLS: impl})`.

>>> import numpy as np
>>> from tracejit.ir.primitives import get
>>> from tracejit.ir import fft_prims  # registers "fft"
>>> impl = ARRAY_IMPLS.get("fft")
>>> impl is get("fft").impl, impl(np.ones(4, np.complex64), kind="fft", lengths=(4,), xp=np)
(True, array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64))
"""

from __future__ import annotations

from tracejit.ir.primitives import RuleTable

ARRAY_IMPLS = RuleTable("array-namespace implementation")
# `into(*arrays, outs, **attrs)`: the NumPy implementation writing its results into the
# given output arrays, which the CPU program's callback passes instead of copying results
# over (backend_cpu._Fallbacks). A 1024 x 1024 float32 sort is ~1.3 ms: the copy of a fresh
# result into the output buffer was ~0.2 ms of it.
INTO_IMPLS = RuleTable("implementation into output arrays")

__all__ = ["ARRAY_IMPLS", "INTO_IMPLS"]
