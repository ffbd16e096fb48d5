"""`power` with a run-time scalar exponent takes NumPy's scalar fast path: an exponent of 0.5
is sqrt (-inf ** 0.5 is nan, -0.0 ** 0.5 is -0.0; C's pow gives inf and 0.0), found by the
hypothesis test of every binary primitive on 0-d operands. An exponent array that happens to
hold 0.5 stays pow, as in NumPy."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

BASES = [-np.inf, -0.0, 0.0, 4.0, np.inf, -1.0, 2.0, np.nan]


def _same_bits(got, want, ulps=0):
    """Equal values and signs of zero (NaN where NumPy has NaN, of either sign: x86 and CUDA
    differ in the sign of a new NaN); `ulps` allows that many units in the last place."""
    got, want = np.asarray(tj.device_get(got)), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (got, want)
    if ulps:
        with np.errstate(invalid="ignore"):
            close = (got == want) | (np.abs(got - want) <= ulps * np.spacing(np.abs(want)))
        assert close[~nan].all(), (got, want)
    else:
        assert np.array_equal(got[~nan], want[~nan]), (got, want)
    assert np.array_equal(np.signbit(got)[~nan], np.signbit(want)[~nan]), (got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_scalar_exponent_argument_is_numpys_fast_path(device, dtype):
    x = np.array(BASES, dtype)
    f = tj.jit(lambda a, b: tnp.power(a, b) * 1, device=device)
    with np.errstate(all="ignore"):
        for y in (0.5, 2.0, 0.25, -1.0):
            # 0.25 is pow itself: CUDA's pow is within 2 ulps of the host's (an H100 differed
            # in the last bit); 0.5, 2 and -1 are exact everywhere
            ulps = 2 if y == 0.25 and device != "cpu" else 0
            _same_bits(f(x, np.array(y, dtype)), np.power(x, np.array(y, dtype)), ulps)
            _same_bits(f(x[:1].reshape(()), np.array(y, dtype)), np.power(x[0], dtype(y)), ulps)
        # an exponent array: pow at every element (NumPy's loop has no fast path here)
        halves = np.full(x.shape, 0.5, dtype)
        _same_bits(f(x, halves), np.power(x, halves))
