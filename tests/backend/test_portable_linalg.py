"""tracejit/_portable_linalg.py: Cholesky and Gram-Schmidt QR from correctly rounded
operations, the same bits eagerly, compiled on the cpu and on each device under test, within
the textbook bounds of NumPy's LAPACK factors; NaN for a matrix that is not positive definite.
multivariate_normal (method "cholesky") and orthogonal use them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
from tracejit import _portable_linalg as pl

RNG = np.random.default_rng(4)


def _bits(x):
    x = np.asarray(tj.device_get(x))
    return x.view(np.uint8)


def _spd(shape, dtype):
    m = RNG.standard_normal(shape)
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_is_numpys_to_rounding_and_the_same_bits_everywhere(device, dtype):
    a = _spd((2, 3, 7, 7), dtype)
    eager = np.asarray(pl.cholesky(a))
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(eager, np.linalg.cholesky(a), atol=40 * eps * np.abs(a).max())
    assert np.all(np.triu(eager, 1) == 0)
    np.testing.assert_array_equal(_bits(tj.jit(pl.cholesky, device=device)(a)), _bits(eager))
    np.testing.assert_array_equal(_bits(tj.jit(pl.cholesky)(a)), _bits(eager))


def test_cholesky_of_a_matrix_not_positive_definite_is_nan(device):
    a = np.stack([np.eye(3), [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    got = np.asarray(tj.device_get(tj.jit(pl.cholesky, device=device)(a)))
    np.testing.assert_array_equal(got[0], np.eye(3))
    assert np.isnan(got[1]).all()
    assert np.isnan(np.asarray(pl.cholesky(a[1]))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 6), (2, 9, 4), (5, 1)])
def test_gram_schmidt_q_is_the_positive_diagonal_qr_and_the_same_bits(device, dtype, shape):
    z = RNG.standard_normal(shape).astype(dtype)
    eager = np.asarray(pl.gram_schmidt_q(z))
    q, r = np.linalg.qr(z)
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(eager, q, atol=200 * eps)
    gram = np.swapaxes(eager, -1, -2) @ eager
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(shape[-1]), gram.shape), atol=20 * eps)
    got = tj.jit(pl.gram_schmidt_q, device=device)(z)
    np.testing.assert_array_equal(_bits(got), _bits(eager))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_cholesky_reconstructs_random_matrices(n, seed):
    m = np.random.default_rng(seed).standard_normal((n, n))
    a = m @ m.T + n * np.eye(n)
    low = np.asarray(pl.cholesky(a))
    np.testing.assert_allclose(low @ low.T, a, atol=1e-12 * n * np.abs(a).max())


def test_samplers_use_them():
    key = tj.random.key(1)
    cov = _spd((3, 3), np.float64)
    z = tj.random.normal(key, (4, 3), np.float64)
    got = tj.random.multivariate_normal(key, np.zeros(3), cov, (4,), np.float64)
    low = np.asarray(pl.cholesky(cov))
    in_order = np.cumsum(low * np.asarray(z)[:, None, :], axis=-1)[..., -1]  # L z, summed in order
    np.testing.assert_array_equal(np.asarray(got), in_order)
    q = np.asarray(tj.random.orthogonal(key, 4, (), np.float64))
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-14)
