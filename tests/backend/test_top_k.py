"""`lax.top_k` as JAX's: the k largest along the last axis, ties by lower index, NaN largest,
0.0 above -0.0; int32 indices; the values' gradient; on every device."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
from tracejit import lax
from tracejit.errors import ShapeError, TracejitTypeError

X = np.array(
    [
        [1.0, np.nan, 3.0, -0.0, 0.0, 3.0, np.inf, -np.inf, -0.0, 0.0],
        [2.0, 2.0, 2.0, 1.0, np.nan, np.nan, 0.0, 5.0, -0.0, -1.0],
    ]
)


def _expected(row, k):
    """JAX's order from its definition: NaN first, then larger values, 0.0 before -0.0,
    then lower indices."""

    def key(i):
        v = float(row[i])
        return (not math.isnan(v), -v if not math.isnan(v) else 0.0, not math.copysign(1, v) > 0, i)

    return sorted(range(len(row)), key=key)[:k]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, ml_dtypes.bfloat16, np.int32])
@pytest.mark.parametrize("k", [0, 1, 4, 10])
def test_order_and_indices(device, dtype, k):
    x = (
        np.nan_to_num(X, posinf=9, neginf=-9).astype(dtype)
        if dtype == np.int32
        else X.astype(dtype)
    )
    values, indices = tj.jit(lambda x: lax.top_k(x, k), device=device)(x)
    values, indices = tj.device_get(values), tj.device_get(indices)
    assert indices.dtype == np.int32 and values.dtype == x.dtype
    want = np.array([_expected(row, k) for row in x], np.int64).reshape(2, k)
    np.testing.assert_array_equal(indices, want)
    picked = np.take_along_axis(x, want, axis=-1).astype(np.float64)
    np.testing.assert_array_equal(values.astype(np.float64), picked)
    np.testing.assert_array_equal(np.signbit(values.astype(np.float64)), np.signbit(picked))


def test_gradient_reaches_the_chosen_entries():
    x = np.array([[1.0, 5.0, 3.0, 4.0], [0.5, -1.0, 2.0, 2.0]])
    w = np.array([10.0, 1.0])
    grad = tj.grad(lambda x: (lax.top_k(x, 2)[0] * w).sum())(x)
    np.testing.assert_array_equal(grad, [[0, 10, 0, 1], [0, 0, 10, 1]])


def test_vmap_and_bad_input():
    x = np.random.default_rng(0).standard_normal((3, 4, 6))
    values, indices = tj.vmap(lambda m: lax.top_k(m, 2))(x)
    np.testing.assert_array_equal(indices, np.argsort(-x, axis=-1, kind="stable")[..., :2])
    np.testing.assert_array_equal(values, -np.sort(-x, axis=-1)[..., :2])
    with pytest.raises(ShapeError, match="outside 0..6"):
        lax.top_k(x, 7)
    with pytest.raises(ShapeError, match="scalar"):
        lax.top_k(np.float64(1.0), 1)
    with pytest.raises(TracejitTypeError, match="static int"):
        lax.top_k(x, 2.0)
