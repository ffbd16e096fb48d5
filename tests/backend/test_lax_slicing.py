"""lax.stop_gradient, dynamic_slice, dynamic_update_slice (JAX's clamping of starts) and
associative_scan: values against NumPy slicing / np.cumsum-style oracles, eagerly and compiled
on the test device, gradients against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.errors import ShapeError, TracejitTypeError

RNG = np.random.default_rng(5)
X = RNG.standard_normal((5, 6))


def _np_dynamic_slice(x, starts, sizes):
    starts = [min(max(s, 0), d - z) for s, d, z in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + z) for s, z in zip(starts, sizes))]


def _np_dynamic_update(x, u, starts):
    starts = [min(max(s, 0), d - z) for s, d, z in zip(starts, x.shape, u.shape)]
    out = x.copy()
    out[tuple(slice(s, s + z) for s, z in zip(starts, u.shape))] = u
    return out


STARTS = [(0, 0), (2, 3), (4, 5), (-3, 1), (9, -1)]  # in range, clamped high and low


@pytest.mark.parametrize("starts", STARTS)
def test_dynamic_slice_clamps_like_jax(starts, device):
    want = _np_dynamic_slice(X, starts, (2, 3))
    np.testing.assert_array_equal(lax.dynamic_slice(X, starts, (2, 3)), want)
    f = tj.jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), device=device)
    got = tj.device_get(f(X, np.int64(starts[0]), np.int64(starts[1])))
    np.testing.assert_array_equal(got, want)
    g = tj.jit(lambda x, s: lax.dynamic_slice(x, s, (2, 3)), device=device)
    np.testing.assert_array_equal(tj.device_get(g(X, np.array(starts))), want)


@pytest.mark.parametrize("starts", STARTS)
def test_dynamic_update_slice_clamps_like_jax(starts, device):
    u = RNG.standard_normal((2, 3))
    want = _np_dynamic_update(X, u, starts)
    np.testing.assert_array_equal(lax.dynamic_update_slice(X, u, starts), want)
    f = tj.jit(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), device=device)
    got = tj.device_get(f(X, u, np.int64(starts[0]), np.int64(starts[1])))
    np.testing.assert_array_equal(got, want)


def test_dynamic_slice_and_update_gradients():
    u = RNG.standard_normal((2, 3))
    w = RNG.standard_normal((5, 6))

    def loss_slice(x, i):
        return tnp.sum(tnp.sin(lax.dynamic_slice(x, (i, 4), (2, 3))) * w[:2, :3])

    def loss_update(x, u, i):
        return tnp.sum(lax.dynamic_update_slice(x, u * u, (i, 1)) * w)

    for i in (1, 7):
        ii = np.int64(i)
        got = tj.jit(tj.grad(loss_slice))(X, ii)
        np.testing.assert_allclose(got, numeric_grad(lambda x, i=i: float(loss_slice(x, i)), X),
                                   rtol=1e-6, atol=1e-8)  # fmt: skip
        gx, gu = tj.jit(tj.grad(loss_update, argnums=(0, 1)))(X, u, ii)
        np.testing.assert_allclose(gx, numeric_grad(lambda x, i=i: float(loss_update(x, u, i)), X),
                                   rtol=1e-6, atol=1e-8)  # fmt: skip
        np.testing.assert_allclose(gu, numeric_grad(lambda v, i=i: float(loss_update(X, v, i)), u),
                                   rtol=1e-6, atol=1e-8)  # fmt: skip


def test_dynamic_slice_bad_input():
    with pytest.raises(ShapeError):
        lax.dynamic_slice(X, (0,), (2, 3))
    with pytest.raises(ShapeError):
        lax.dynamic_slice(X, (0, 0), (6, 3))
    with pytest.raises(TracejitTypeError):
        lax.dynamic_slice(X, (0.5, 0), (2, 3))
    with pytest.raises(ShapeError):
        lax.dynamic_update_slice(X, np.ones(3), (0, 0))


def test_stop_gradient_on_a_pytree():
    def f(x):
        held = lax.stop_gradient({"a": x, "b": (x * 2,)})
        return tnp.sum(x * held["a"] + held["b"][0])

    x = RNG.standard_normal(4)
    np.testing.assert_allclose(tj.grad(f)(x), x)
    np.testing.assert_allclose(tj.jit(tj.grad(f))(x), x)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan_matches_sequential_scans(n, device):
    x = RNG.standard_normal((n, 3))
    np.testing.assert_allclose(lax.associative_scan(tnp.add, x), np.cumsum(x, 0), rtol=1e-12)
    np.testing.assert_array_equal(lax.associative_scan(tnp.maximum, x, axis=0),
                                  np.maximum.accumulate(x, 0))  # fmt: skip
    rev = tj.jit(lambda v: lax.associative_scan(tnp.add, v, reverse=True, axis=0), device=device)
    np.testing.assert_allclose(tj.device_get(rev(x)), np.cumsum(x[::-1], 0)[::-1], rtol=1e-12)


def test_associative_scan_pytree_linear_recurrence():
    # h_t = a_t h_{t-1} + b_t as a scan over (a, b) pairs: (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2)
    a, b = RNG.uniform(0.5, 1.0, (9, 2)), RNG.standard_normal((9, 2))

    def combine(p, q):
        return (p[0] * q[0], q[0] * p[1] + q[1])

    h, want = np.zeros(2), []
    for t in range(9):
        h = a[t] * h + b[t]
        want.append(h)
    got = tj.jit(lambda a, b: lax.associative_scan(combine, (a, b))[1])(a, b)
    np.testing.assert_allclose(got, np.array(want), rtol=1e-12)
    loss = lambda b: float(np.sum(np.sin(lax.associative_scan(combine, (a, b))[1])))
    got = tj.grad(lambda b: tnp.sum(tnp.sin(lax.associative_scan(combine, (a, b))[1])))(b)
    np.testing.assert_allclose(got, numeric_grad(loss, b), rtol=1e-6, atol=1e-8)


def test_associative_scan_along_axis_one_and_bad_axis():
    x = RNG.standard_normal((2, 7))
    np.testing.assert_allclose(lax.associative_scan(tnp.multiply, x, axis=1),
                               np.cumprod(x, 1), rtol=1e-12)  # fmt: skip
    with pytest.raises(ShapeError):
        lax.associative_scan(tnp.add, x, axis=2)
