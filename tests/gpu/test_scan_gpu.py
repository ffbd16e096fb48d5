"""The benchmark's scans (benchmarks/gpu_bench.py W5) on a real GPU: NumPy's bits at 4096 x 4096.

The tiled and strided scan kernels (backend_cuda/scan.py) are checked bit for bit on the
emulator at small shapes (tests/backend/test_scan_order.py); here the shapes the benchmark
times, on the card: many tiles per SM, 64 chunks a row, the strided kernel's small blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
from _bits import assert_same_bits
from _cuda_programs import needs_gpu
from _devices import EMULATED

import tracejit as tj
import tracejit.numpy as tnp

on_card = pytest.mark.skipif(
    EMULATED, reason="needs a real GPU: 16M-element scans are slow in the emulator"
)


@needs_gpu
@on_card
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_benchmark_scans_match_numpy_bit_for_bit_on_the_card(dtype):
    rng = np.random.default_rng(11)
    shape = (4096, 4097)  # a ragged last chunk
    x = (rng.normal(size=shape) * np.exp(rng.normal(size=shape) * 3)).astype(dtype)
    p = np.exp(rng.normal(size=shape) * 0.01).astype(dtype)  # products stay finite
    fun = lambda m, x, p: (m.cumsum(x, 1), m.cumsum(x, 0), m.cumprod(p, 1), m.cumprod(p, 0),
                           m.nancumsum(x[:1], 1), m.cumsum(x[:, :3], 0))  # fmt: skip
    got = tj.jit(lambda x, p: fun(tnp, x, p), device="cuda")(x, p)
    for g, w in zip(got, fun(np, x, p), strict=True):
        assert_same_bits(g, w)
