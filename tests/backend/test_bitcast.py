"""`tracejit.lax.bitcast_convert_type` against NumPy's `.view`, eagerly and compiled on each
device under test: NaN payloads, -0.0, subnormals, infinities, both directions of every
same-size pair of float and integer dtypes; its checks and its zero gradient."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
from tracejit.errors import TracejitTypeError
from tracejit.ir.dtypes import BFLOAT16

# the int patterns of each width: 0, -0.0's, the smallest subnormal, 1.0's, inf, a quiet and a
# signalling NaN with payloads, and the extremes
PATTERNS = {
    2: [0, 0x8000, 1, 0x3C00, 0x3F80, 0x7C00, 0xFC00, 0x7E01, 0x7C01, 0x7F81, 0x7FFF, 0xFFFF],
    4: [0, 0x80000000, 1, 0x3F800000, 0x7F800000, 0xFF800000, 0x7FC00123, 0x7F800001,
        0x7FFFFFFF, 0xFFFFFFFF, 0x00800000, 0x807FFFFF],
    8: [0, 1 << 63, 1, 0x3FF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
        0x7FF8000000000ABC, 0x7FF0000000000001, (1 << 63) - 1, (1 << 64) - 1, 1 << 52,
        0x800FFFFFFFFFFFFF],
}  # fmt: skip
PAIRS = [
    (np.float16, np.int16), (np.float16, np.uint16), (BFLOAT16, np.int16),
    (BFLOAT16, np.uint16), (np.float16, BFLOAT16), (np.float32, np.int32),
    (np.float32, np.uint32), (np.int32, np.uint32), (np.float64, np.int64),
    (np.float64, np.uint64), (np.int64, np.uint64),
]  # fmt: skip


def _values(dt) -> np.ndarray:
    dt = np.dtype(dt)
    return np.array(PATTERNS[dt.itemsize], dtype=f"u{dt.itemsize}").view(dt)


@pytest.mark.parametrize("a, b", PAIRS + [(b, a) for a, b in PAIRS], ids=str)
def test_bits_are_numpys_view(device, a, b):
    x = _values(a)
    want = x.view(np.dtype(b))
    bits = np.dtype(f"u{want.itemsize}")
    eager = tj.lax.bitcast_convert_type(x, b)
    # in a program with arithmetic around it: the bits are read, never converted
    got = tj.jit(lambda v: tj.lax.bitcast_convert_type(v, b), device=device)(x)
    for out in (eager, np.asarray(tj.device_get(got))):
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out.view(bits), want.view(bits))


def test_round_trip_in_a_fused_kernel(device):
    x = np.array([1.5, -0.0, 5e-324, np.inf, -3.0])

    def f(v):
        bits = tj.lax.bitcast_convert_type(v, np.int64)
        return tj.lax.bitcast_convert_type(bits + 1, np.float64) * 2.0

    with np.errstate(invalid="ignore"):  # inf + 1 ulp is a NaN
        want = (x.view(np.int64) + 1).view(np.float64) * 2.0
    np.testing.assert_array_equal(np.asarray(tj.device_get(tj.jit(f, device=device)(x))), want)


def test_checks_and_zero_gradient():
    with pytest.raises(TracejitTypeError, match="item size"):
        tj.lax.bitcast_convert_type(np.float32(1.0), np.int64)
    with pytest.raises(TracejitTypeError, match="item size"):
        tj.jit(lambda v: tj.lax.bitcast_convert_type(v, np.bool_))(np.int8(1))
    grad = tj.grad(lambda v: tj.lax.bitcast_convert_type(v, np.int64).astype(np.float64) * v)
    assert grad(np.float64(2.0)) == np.float64(2.0).view(np.int64)  # only the second factor's
