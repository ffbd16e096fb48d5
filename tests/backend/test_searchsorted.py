"""`searchsorted` is a binary search on every device (ir/searchsorted.py): NumPy's positions
for NaN, -0.0, inf and every real dtype, under vmap of either operand, with no gradient."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError
from tracejit.tracer.core import bind

A = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.0, np.inf, np.nan, np.nan])
V = np.array([np.nan, -0.0, 0.0, 2.0, np.inf, -np.inf, 5.0, -3.0, 1e-300])


@pytest.mark.parametrize("side", ["left", "right"])
def test_corner_values_take_numpys_positions(device, side):
    f = tj.jit(lambda a, v: tnp.searchsorted(a, v, side=side), device=device)
    for dt in (np.float64, np.float32):
        a, v = A.astype(dt), V.astype(dt)
        want = np.searchsorted(a, v, side=side)
        got = tj.device_get(f(a, v))
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(tnp.searchsorted(a, v, side=side), want)  # eagerly


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int32, np.uint64, np.bool_, np.float16, ml_dtypes.bfloat16]
)
def test_every_real_dtype(device, dtype):
    a = np.sort(np.array([0, 1, 1, 3, 7, 7, 9, 9])).astype(dtype)
    v = np.array([[0, 1, 2], [7, 9, 10]]).astype(dtype)
    exact = (a.astype(np.float64), v.astype(np.float64))  # (NumPy cannot order bfloat16)
    for side in ("left", "right"):
        f = tj.jit(lambda a, v, side=side: tnp.searchsorted(a, v, side=side), device=device)
        got = f(a, v)
        np.testing.assert_array_equal(tj.device_get(got), np.searchsorted(*exact, side=side))


def test_scalars_sorter_and_promotion(device):
    a = np.array([5.0, 1.0, 3.0])
    order = np.argsort(a)
    f = tj.jit(lambda a, s: tnp.searchsorted(a, 2.5, sorter=s), device=device)
    assert int(tj.device_get(f(a, order))) == np.searchsorted(a, 2.5, sorter=order) == 1
    ints = np.array([1, 2, 4], np.int32)
    got = tj.jit(lambda a: tnp.searchsorted(a, np.array([2.5, 4.0])), device=device)(ints)
    np.testing.assert_array_equal(tj.device_get(got), [2, 2])


@pytest.mark.parametrize("side", ["left", "right"])
def test_vmap_over_the_array_or_the_values(side):
    rng = np.random.default_rng(0)
    a = np.sort(rng.standard_normal((4, 10)), axis=1)
    a[1, -2:] = np.nan
    v = rng.standard_normal((4, 3))
    v[2, 0] = np.nan
    v[3, 1] = a[3, 4]  # a tie: left and right differ
    each = np.stack([np.searchsorted(a[i], v[i], side=side) for i in range(4)])
    both = tj.jit(tj.vmap(lambda a, v: tnp.searchsorted(a, v, side=side)))(a, v)
    np.testing.assert_array_equal(both, each)
    rows = tj.vmap(lambda a: tnp.searchsorted(a, v[3], side=side), in_axes=1)(a.T)
    np.testing.assert_array_equal(rows, [np.searchsorted(r, v[3], side=side) for r in a])
    values = tj.vmap(lambda w: tnp.searchsorted(a[3], w, side=side))(v)
    np.testing.assert_array_equal(values, np.searchsorted(a[3], v, side=side))


def test_positions_have_no_gradient():
    grad = tj.grad(lambda a, v: tnp.sum(tnp.searchsorted(a, v) * v), argnums=(0, 1))
    ga, gv = grad(np.arange(5.0), np.array([1.5, 2.5]))
    np.testing.assert_array_equal(ga, np.zeros(5))
    np.testing.assert_array_equal(gv, [2.0, 3.0])  # the positions, as constants


def test_bad_input():
    with pytest.raises(ValueError, match="side must be"):
        tnp.searchsorted(np.arange(3.0), 1.0, side="middle")
    with pytest.raises(ValueError, match="1-D"):
        tnp.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ShapeError, match="one axis"):  # the primitive's own check
        tj.jit(lambda a, v: bind("searchsorted", a, v, side="left"))(np.ones((2, 2)), np.ones(2))
