"""tnp.linalg lstsq/matrix_rank/cond/tensorinv/tensorsolve/matrix_power(n<0) vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp


@pytest.mark.parametrize("b_shape", [(5,), (5, 2)])
def test_lstsq_matches_numpy_for_full_rank(b_shape):
    rng = np.random.default_rng(len(b_shape))
    a, b = rng.normal(size=(5, 3)), rng.normal(size=b_shape)
    got, want = tj.jit(tnp.linalg.lstsq)(a, b), np.linalg.lstsq(a, b)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_lstsq_rank_deficient_solution_and_rank_match_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    b = np.array([1.0, 0.5, 2.0])
    x, _, rank, s = tnp.linalg.lstsq(a, b)
    wx, _, wrank, ws = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, wx, rtol=1e-12)
    assert int(rank) == wrank == 1
    np.testing.assert_allclose(s, ws, rtol=1e-13, atol=1e-15)


def test_lstsq_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    a, b, w = rng.normal(size=(5, 3)), rng.normal(size=(5, 2)), rng.normal(size=(3, 2))
    want = numeric_grad(lambda v: (np.linalg.lstsq(v, b)[0] * w).sum(), a)
    got = tj.jit(tj.grad(lambda v: (tnp.linalg.lstsq(v, b)[0] * w).sum()))(a)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_matrix_rank_and_cond_match_numpy():
    rng = np.random.default_rng(4)
    m = rng.normal(size=(3, 4, 4))
    m[1, 3] = m[1, 2]  # rank 3
    m[2] = 0.0
    np.testing.assert_array_equal(tj.jit(tnp.linalg.matrix_rank)(m), np.linalg.matrix_rank(m))
    assert int(tnp.linalg.matrix_rank(np.array([0.0, 1.0]))) == 1
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro"):
        got = tj.jit(tnp.linalg.cond, static_argnums=1)(m[:2], p)
        np.testing.assert_allclose(got[0], np.linalg.cond(m[0], p), rtol=1e-12)
        np.testing.assert_allclose(got[1], np.linalg.cond(m[1], p), rtol=1e-12)  # singular
        assert np.isinf(tnp.linalg.cond(np.ones((2, 2)), p)) == np.isinf(
            np.linalg.cond(np.ones((2, 2)), p)
        )


def test_tensorinv_tensorsolve_and_negative_matrix_power_match_numpy():
    rng = np.random.default_rng(5)
    t = rng.normal(size=(4, 6, 8, 3))
    np.testing.assert_array_equal(tnp.linalg.tensorinv(t, ind=2), np.linalg.tensorinv(t, ind=2))
    a, b = rng.normal(size=(6, 4, 8, 3)), rng.normal(size=(6, 4))
    np.testing.assert_array_equal(tj.jit(tnp.linalg.tensorsolve)(a, b), np.linalg.tensorsolve(a, b))
    a2, b2 = rng.normal(size=(6, 2, 3)), rng.normal(size=(2, 3))
    np.testing.assert_array_equal(
        tnp.linalg.tensorsolve(a2, b2, axes=(0,)), np.linalg.tensorsolve(a2, b2, axes=(0,))
    )
    m = rng.normal(size=(4, 4))
    np.testing.assert_allclose(
        tnp.linalg.matrix_power(m, -3), np.linalg.matrix_power(m, -3), rtol=1e-10
    )
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        tnp.linalg.tensorsolve(rng.normal(size=(6, 4, 2, 3)), b)
