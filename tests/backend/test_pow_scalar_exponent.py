"""`power` with a run-time scalar exponent takes NumPy's scalar fast path: an exponent of 0.5
is sqrt (-inf ** 0.5 is nan, -0.0 ** 0.5 is -0.0; C's pow gives inf and 0.0), found by the
hypothesis test of every binary primitive on 0-d operands. An exponent array that happens to
hold 0.5 stays pow, as in NumPy."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

BASES = [-np.inf, -0.0, 0.0, 4.0, np.inf, -1.0, 2.0, np.nan]


def _same_bits(got, want):
    got, want = np.asarray(tj.device_get(got)), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_scalar_exponent_argument_is_numpys_fast_path(device, dtype):
    x = np.array(BASES, dtype)
    f = tj.jit(lambda a, b: tnp.power(a, b) * 1, device=device)
    with np.errstate(all="ignore"):
        for y in (0.5, 2.0, 0.25, -1.0):
            _same_bits(f(x, np.array(y, dtype)), np.power(x, np.array(y, dtype)))
            _same_bits(f(x[:1].reshape(()), np.array(y, dtype)), np.power(x[0], dtype(y)))
        # an exponent array: pow at every element (NumPy's loop has no fast path here)
        halves = np.full(x.shape, 0.5, dtype)
        _same_bits(f(x, halves), np.power(x, halves))
