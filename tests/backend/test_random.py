"""tracejit.random: Threefry known answers, determinism, traced == eager, distributions."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import UnsupportedError
from tracejit.random import threefry2x32_block

# Known-answer vectors of Threefry-2x32 with 20 rounds, from the Random123 distribution
# (kat_vectors: threefry2x32_20), as (key words, counter words, expected output words).
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key, counter, expected", KAT)
def test_threefry_known_answers(key, counter, expected):
    y0, y1 = threefry2x32_block(key[0], key[1], np.array([counter[0]]), np.array([counter[1]]))
    assert (int(y0[0]), int(y1[0])) == expected


def test_split_matches_jax_for_the_same_seed():
    # jax.random.split(jax.random.PRNGKey(0)) with the default threefry implementation
    expected = [[4146024105, 967050713], [2718843009, 1272950319]]
    np.testing.assert_array_equal(tj.random.split(tj.random.key(0)), expected)


def test_same_key_same_numbers_different_keys_differ():
    k = tj.random.key(3)
    a, b = tj.random.split(k)
    np.testing.assert_array_equal(tj.random.uniform(k, (50,)), tj.random.uniform(k, (50,)))
    assert not np.array_equal(tj.random.uniform(a, (50,)), tj.random.uniform(b, (50,)))
    assert not np.array_equal(tj.random.uniform(k, (50,)), tj.random.uniform(a, (50,)))
    assert not np.array_equal(tj.random.fold_in(k, 1), tj.random.fold_in(k, 2))
    np.testing.assert_array_equal(tj.random.key(2**40 + 5), [256, 5])


@settings(max_examples=10)
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**40),
)
def test_uniform_shape_dtype_range_and_traced_equals_eager(shape, dtype, seed):
    k = tj.random.key(seed)
    u = tj.random.uniform(k, shape, dtype, minval=-2.0, maxval=3.0)
    assert u.shape == shape and u.dtype == dtype
    assert np.all((u >= -2.0) & (u < 3.0))
    # The bits and the [0, 1) floats are exact integer/power-of-two arithmetic, the scaled and
    # transformed values correctly rounded operations only (no fused multiply-add, no libm
    # call: tracejit/_portable_math.py): identical traced or not.
    np.testing.assert_array_equal(
        tj.jit(lambda k: tj.random.bits(k, shape))(k), tj.random.bits(k, shape)
    )
    unit = tj.jit(lambda k: tj.random.uniform(k, shape, dtype))(k)
    np.testing.assert_array_equal(unit, tj.random.uniform(k, shape, dtype))
    traced = tj.jit(lambda k: tj.random.uniform(k, shape, dtype, minval=-2.0, maxval=3.0))(k)
    np.testing.assert_array_equal(traced, u)
    n = tj.random.normal(k, shape, dtype)
    assert n.shape == shape and n.dtype == dtype and np.all(np.isfinite(n))
    traced_n = tj.jit(lambda k: tj.random.normal(k, shape, dtype))(k)
    np.testing.assert_array_equal(traced_n, n)


def test_distribution_moments():
    k1, k2, k3 = tj.random.split(tj.random.key(11), 3)
    n = 20000  # fixed keys: the numbers (and so these checks) are deterministic
    u = tj.random.uniform(k1, (n,), np.float64)
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    z = tj.random.normal(k2, (n,))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03
    assert abs(np.mean(np.abs(z) < 1.0) - 0.6827) < 0.02
    b = tj.random.bernoulli(k3, 0.3, (n,))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.015


def test_float64_uniform_uses_more_than_float32_resolution():
    u = tj.random.uniform(tj.random.key(1), (1000,), np.float64)
    assert np.any(u * 2**24 != np.floor(u * 2**24))
    f = tj.random.uniform(tj.random.key(1), (1000,), np.float32)
    np.testing.assert_array_equal(f * 2**24, np.floor(f * 2**24))


def test_permutation_is_a_permutation_traced_and_differentiated(device):
    k = tj.random.key(5)
    p = tj.random.permutation(k, 10)
    assert sorted(p.tolist()) == list(range(10)) and p.tolist() != list(range(10))
    x = np.arange(20.0).reshape(10, 2)
    np.testing.assert_array_equal(tj.random.permutation(k, x), x[p])
    w = np.arange(20.0).reshape(10, 2)  # d sum(w * x[p]) / dx = w scattered back through p
    want = np.zeros_like(w)
    want[p] = w

    def run(k, x):
        perm = tj.random.permutation(k, x)
        grad = tj.grad(lambda x: tnp.sum(tj.random.permutation(k, x) * w))(x)
        return tj.random.permutation(k, 10), perm, grad

    for got, ref in zip(tj.jit(run, device=device)(k, x), (p, x[p], want)):
        np.testing.assert_array_equal(tj.device_get(got), ref)
    with pytest.raises(UnsupportedError, match="concrete n"):
        tj.jit(lambda k, n: tj.random.permutation(k, n))(k, 4)


def test_uniform_bounds_may_be_traced_arrays():
    k = tj.random.key(2)
    lo, hi = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 0.5, 5.0])
    u = np.asarray(tj.random.uniform(k, (3,), np.float64))
    np.testing.assert_array_equal(
        tj.random.uniform(k, (3,), np.float64, lo, hi), u * (hi - lo) + lo
    )

    def total(lo, hi):  # d/dlo = 1 - u, d/dhi = u
        return tnp.sum(tj.random.uniform(k, (3,), np.float64, lo, hi))

    g_lo, g_hi = tj.jit(tj.grad(total, (0, 1)))(lo, hi)
    np.testing.assert_allclose(g_lo, 1 - u, rtol=1e-15)
    np.testing.assert_allclose(g_hi, u, rtol=1e-15)


def test_bad_key_is_a_clear_error():
    with pytest.raises(TypeError, match="PRNG key"):
        tj.random.uniform(np.zeros(3, np.int64), (2,))
    with pytest.raises(TypeError, match="PRNG key"):
        tj.random.uniform(tj.random.split(tj.random.key(0), 2), (2,))


def test_split_and_key_trace():
    out = tj.jit(lambda k: tj.random.split(k, 4))(tj.random.key(9))
    np.testing.assert_array_equal(out, tj.random.split(tj.random.key(9), 4))
    traced_key = tj.jit(lambda s: tj.random.key(s))(np.int64(2**33 + 7))
    np.testing.assert_array_equal(traced_key, tj.random.key(2**33 + 7))
