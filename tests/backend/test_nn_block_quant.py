"""scaled_dot_general's block quantization (tracejit/_nn_block_quant.py) bit for bit against
ml_dtypes' casts (tests/_scaled_oracle.py restates JAX's quantize with them): every rounding
tie and its neighbours of float8_e4m3fn and float4_e2m1fn, and blocks that reach each case
of the scales (power-of-two, e4m3 subnormal and zero, saturated, the e8m0 floor 2**-127),
eagerly in float32 and float64 and compiled for the test device."""

from __future__ import annotations

import numpy as np
import pytest
from _scaled_oracle import E2M1, E4M3, quantize

import tracejit as tj
from tracejit._nn_block_quant import quantize as tj_quantize
from tracejit._nn_block_quant import round_to_format

RNG = np.random.default_rng(12)


def _grid(fmt) -> np.ndarray:
    """The format's finite values >= 0, ascending."""
    bits = np.arange(2 ** (8 if fmt is E4M3 else 4), dtype=np.uint8)
    values = np.unique(bits.view(fmt).astype(np.float64))
    return values[np.isfinite(values) & (values >= 0)]


def _points(fmt, dtype) -> np.ndarray:
    """Each value, each midpoint (a tie) and the floats just either side of it, both signs."""
    grid = _grid(fmt)
    mids = ((grid[1:] + grid[:-1]) / 2).astype(dtype)
    near = [np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)]
    pts = np.concatenate([grid.astype(dtype), mids, *near])
    return np.concatenate([pts, -pts])


def _assert_bits(got, want):
    got = np.asarray(tj.device_get(got))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("fmt", [E4M3, E2M1], ids=["e4m3fn", "e2m1fn"])
def test_rounding_is_the_formats_cast(fmt):
    pts = _points(fmt, np.float32)
    _assert_bits(round_to_format(pts, fmt), pts.astype(fmt).astype(np.float32))


def _mxfp8_input(dtype):
    """(2, 3, 64): random blocks over 60 binades, ties at a power-of-two scale, a zero block,
    a block whose scale is below 2**-127, one whose max / 448 is a power of two."""
    x = RNG.standard_normal((2, 3, 64)) * 2.0 ** RNG.integers(-30, 30, (2, 3, 2, 1)).repeat(
        32, -1
    ).reshape(2, 3, 64)
    ties = _points(E4M3, np.float64)
    x[0, 0, :32] = np.concatenate([[448.0], RNG.choice(ties[np.abs(ties) <= 448], 31)]) * 2**-3
    x[0, 1, :32] = 0.0
    x[0, 2, :32] = RNG.uniform(-1, 1, 32) * 1e-37
    x[1, 0, 32:] = np.linspace(-448.0, 448.0, 32) * 2.0**10
    return x.astype(dtype)


def _nvfp4_input(dtype):
    """(2, 2, 32): random blocks (scales from e4m3 subnormal to saturated), e2m1 ties at
    scale 1, a zero block and a block whose scale rounds to zero."""
    x = RNG.standard_normal((2, 2, 32)) * 10.0 ** RNG.integers(-3, 4, (2, 2, 2, 1)).repeat(
        16, -1
    ).reshape(2, 2, 32)
    ties = _points(E2M1, np.float64)
    x[0, 0, :16] = np.concatenate([[6.0], RNG.choice(ties, 15)])
    x[0, 1, :16] = 0.0
    x[0, 1, 16:] = RNG.uniform(-1, 1, 16) * 1e-3 * 6
    return x.astype(dtype)


def _quantize_all(x8, x4, global_scale):
    mx = tj.nn.get_scaled_dot_general_config("mxfp8")
    nv = tj.nn.get_scaled_dot_general_config("nvfp4", global_scale)
    return tj_quantize(x8, mx), tj_quantize(x4, nv)


def _expected(x8, x4, global_scale):
    """The oracle's; tracejit quantizes in float32, rounding a float64 input first."""
    x8, x4 = x8.astype(np.float32), x4.astype(np.float32)
    return quantize(x8, "mxfp8"), quantize(x4, "nvfp4", global_scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("global_scale", [1.0, 0.0125])
def test_quantize_matches_jax_with_ml_dtypes_casts(dtype, global_scale):
    x8, x4 = _mxfp8_input(dtype), _nvfp4_input(dtype)
    gs = np.array([global_scale], np.float32)
    for got, want in zip(_quantize_all(x8, x4, gs), _expected(x8, x4, gs), strict=True):
        for g, w in zip(got, want, strict=True):
            _assert_bits(g, w)
    (_, scales8), (_, scales4) = _expected(x8, x4, gs)
    assert (scales8 == 2.0**-127).any()  # the tiny block: its scale is e8m0's floor
    assert (scales4 == 0).any() and (scales4 == 448).any() == (global_scale < 1)


def test_quantize_compiled_matches(device):
    x8, x4 = _mxfp8_input(np.float32), _nvfp4_input(np.float32)
    gs = np.array([0.0125], np.float32)
    e4, e2 = _points(E4M3, np.float32), _points(E2M1, np.float32)

    def run(x8, x4, gs, e4, e2):
        return _quantize_all(x8, x4, gs), round_to_format(e4, E4M3), round_to_format(e2, E2M1)

    (q8, q4), r4, r2 = tj.jit(run, device=device)(x8, x4, gs, e4, e2)
    for got, want in zip(q8 + q4, _expected(x8, x4, gs)[0] + _expected(x8, x4, gs)[1]):
        _assert_bits(got, want)
    _assert_bits(r4, e4.astype(E4M3).astype(np.float32))
    _assert_bits(r2, e2.astype(E2M1).astype(np.float32))
