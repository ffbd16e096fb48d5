"""All thirteen of NumPy's quantile methods, bit for bit with `np.quantile` (values and
dtypes), eagerly and compiled on every device: rows with inf, -inf, NaN and ties; q as a
float64 array, a Python float (weak), a float32 array and an integer array; float64, float32
and int64 data (numpy/_quantile_methods.py follows NumPy's own position rules)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracejitValueError
from tracejit.numpy._quantile_methods import METHODS

QS = [
    np.array([0.0, 0.01, 0.1, 0.25, 1 / 3, 0.5, 0.6, 2 / 3, 0.75, 0.9, 0.99, 1.0]),
    0.37,
    np.array([0.3, 0.55], np.float32),
    np.array([0, 1]),
]


def _rows(dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 5))
    x[1, 2] = np.inf  # NumPy's lerp: 0 * inf is NaN next to an infinity
    x[2, 0], x[2, 3] = -np.inf, np.inf
    x[3, 4] = np.nan
    x[4] = np.round(x[4])  # ties
    x[5] = [2.0, 1.0, 2.0, 1.0, 2.0]
    if np.dtype(dtype).kind == "i":
        x = np.nan_to_num(x * 10, posinf=99, neginf=-99)
    return x.astype(dtype)


def _numpy(x, q, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own inf - inf
        return np.quantile(x, q, axis=1, method=method)


def _same(got, want, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=str(what))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_every_method_eagerly(dtype):
    x = _rows(dtype)
    for q in QS:
        for method in METHODS:
            _same(tnp.quantile(x, q, axis=1, method=method), _numpy(x, q, method), (method, q))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_method_compiled(device, dtype):
    x = _rows(dtype)
    for q in (QS[0], QS[1]):  # one program per q: all thirteen methods
        f = tj.jit(
            lambda a, q=q: [tnp.quantile(a, q, axis=1, method=m) for m in METHODS], device=device
        )
        for method, got in zip(METHODS, tj.device_get(f(x))):
            _same(got, _numpy(x, q, method), (method, q))


def test_percentile_median_and_errors():
    x = _rows(np.float64)
    for method in METHODS:
        got = tnp.percentile(x, np.array([5.0, 50.0, 95.0]), axis=1, method=method)
        _same(got, np.percentile(x, [5.0, 50.0, 95.0], axis=1, method=method), method)
    finite = np.array([1.0, 2.0, np.inf])  # the median is the middle value, not a lerp
    assert float(tnp.median(finite)) == np.median(finite) == 2.0
    with pytest.raises(TracejitValueError, match="not a method"):
        tnp.quantile(x, 0.5, method="sideways")
