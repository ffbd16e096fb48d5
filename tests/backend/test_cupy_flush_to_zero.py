"""Subnormal float32 values through the steps CuPy runs on CUDA keep NumPy's results.

CuPy compiles every kernel of its own with `-ftz=true`: its float32 comparisons read 1e-45 as
0.0 and its arithmetic writes a subnormal result as zero. An H100 fuzz run found
`searchsorted(sort(a), v)` counting 1e-45 as <= 0 (7 where NumPy says 5). The steps that
reach CuPy now compare integer keys (sorting.ordered_keys) and scale FFT results with a
kernel of tracejit's own (backend_cuda/ieee_scale.py). The CUDA emulator flushes float32
where CuPy's kernels would (tests/cuda_emulator/cupy/_array.py `flush`), so each test here
failed there on the old code; on a card it runs against CuPy itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

TINY = np.float32(1.4e-45)  # the smallest float32 subnormal
SUB = np.array([0.0, TINY, -TINY, 3 * TINY, -0.0, 1e-39, -1e-39, 1.0, -1.0], np.float32)


def test_searchsorted_of_the_fuzzers_program(device):
    # the H100's failing program: zeros and subnormals among the sorted values
    v0 = np.array([[-0.0, -2.98e15, -7e16, 3.0, -6.1e16], [0.5, np.nan, 1.5, TINY, 3.4e38],
                   [2.0, 3.9e14, 5.5, TINY, -5.5]], np.float32)  # fmt: skip

    def f(x):
        return tnp.searchsorted(tnp.sort(tnp.ravel(x)), x**8, side="right")

    want = np.searchsorted(np.sort(v0.ravel()), v0**8, side="right")
    np.testing.assert_array_equal(tj.device_get(tj.jit(f, device=device)(v0)), want)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_searchsorted_tells_subnormals_from_zero(device, side, dtype):
    a = np.sort(SUB.astype(dtype))
    v = np.concatenate([SUB, [np.nan, np.inf, -np.inf, 2 * TINY]]).astype(dtype)
    got = tj.jit(lambda a, v: tnp.searchsorted(a, v, side=side), device=device)(a, v)
    np.testing.assert_array_equal(tj.device_get(got), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argsort_orders_subnormals_and_zeros(device, dtype):
    x = np.tile(SUB, 3).astype(dtype)[::-1].copy()
    got = tj.device_get(tj.jit(tnp.argsort, device=device)(x))
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
    # sorted values: -0.0 and 0.0 may trade places (sort is not stable; ir/sorting.py)
    np.testing.assert_array_equal(tj.device_get(tj.jit(tnp.sort, device=device)(x)), np.sort(x))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_normalization_keeps_subnormal_results(device, norm):
    # ifft of tiny values: dividing by n leaves subnormals, which a flushing scale zeroes
    x = np.zeros((4, 8), np.complex64)
    x[:, 0] = 64 * TINY
    x[1, 3] = 1e-38 + 1e-38j
    for kind in ("ifft", "fft"):
        for axis in (0, 1):
            fn = getattr(tnp.fft, kind)
            got = tj.device_get(tj.jit(lambda x, fn=fn, ax=axis: fn(x, axis=ax, norm=norm),
                                       device=device)(x))  # fmt: skip
            want = getattr(np.fft, kind)(x, axis=axis, norm=norm)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)  # atol 0: subnormals count
            assert (got != 0).sum() == (want != 0).sum(), (kind, axis)


def test_irfft_normalization_keeps_subnormal_results(device):
    x = np.zeros(5, np.complex64)
    x[0] = 32 * TINY
    got = tj.device_get(tj.jit(lambda x: tnp.fft.irfft(x, 8), device=device)(x))
    want = np.fft.irfft(x, 8)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    assert np.all(got != 0)
