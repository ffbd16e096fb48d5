"""tnp.linalg solve/inv/cholesky/det/slogdet/eigh: values vs NumPy, gradients vs finite differences.

The primitives run NumPy's `np.linalg` (as a host step when compiled), so eager and compiled
CPU values equal NumPy's bit for bit; what these tests check is the plumbing around it:
promotion, broadcasting of stacks, vector `b`, empty and 1x1 matrices, batching, errors, and
the hand-written VJPs, against float64 central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

NAMES = ("inv", "det", "cholesky")


def _well(rng, shape, dtype=np.float64):
    n = shape[-1]
    return (rng.normal(size=shape) + 2.0 * n**0.5 * np.eye(n)).astype(dtype)


def _spd(rng, shape, dtype=np.float64):
    x = rng.normal(size=shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _jit_cpu(f):
    return tj.jit(f, device="cpu")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (4, 4), (2, 3, 3), (0, 2, 2)])
def test_values_equal_numpy(shape, dtype):
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    a, s = _well(rng, shape, dtype), _spd(rng, shape, dtype)
    b = rng.normal(size=shape[:-1] + (2,)).astype(dtype)

    def f(m, a, s, b):
        sign, logabs = m.linalg.slogdet(a)
        w, v = m.linalg.eigh(s)
        return (m.linalg.solve(a, b), m.linalg.inv(a), m.linalg.cholesky(s),
                m.linalg.det(a), sign, logabs, w, v, m.linalg.eigvalsh(a, UPLO="U"))  # fmt: skip

    want = f(np, a, s, b)
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    for compiled, got in enumerate((f(tnp, a, s, b), _jit_cpu(lambda *xs: f(tnp, *xs))(a, s, b))):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
        for i, (g, w) in enumerate(zip(got[:-1], want[:-1])):
            if compiled and dtype == np.float32 and i not in (6, 7):
                # compiled float32 stacks are solved in float32 (np.linalg: in float64, then
                # rounded; backend_cpu/lapack_small.py); eigh (6, 7) in float64 as NumPy
                np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * np.abs(w).max(initial=1))
            else:
                np.testing.assert_array_equal(g, w)
        # eigvalsh(UPLO="U") runs on the lower triangle of a^H (NumPy's: the upper of a), a
        # transposed problem: equal to rounding
        np.testing.assert_allclose(got[-1], want[-1], rtol=rtol, atol=rtol)


def test_solve_vector_and_broadcast_stacks_like_numpy():
    rng = np.random.default_rng(1)
    a, v, m = _well(rng, (2, 3, 3)), rng.normal(size=3), rng.normal(size=(1, 3, 2))
    f = _jit_cpu(lambda a, v, m: (tnp.linalg.solve(a, v), tnp.linalg.solve(a[0], m)))
    got_v, got_m = f(a, v, m)
    np.testing.assert_array_equal(got_v, np.linalg.solve(a, v))
    np.testing.assert_array_equal(got_m, np.linalg.solve(a[0], m))
    ints = np.array([[2, 1], [1, 3]])
    np.testing.assert_array_equal(tnp.linalg.inv(ints), np.linalg.inv(ints))
    assert tnp.linalg.cholesky(_spd(rng, (3, 3)), upper=True)[2, 0] == 0.0


def test_vmap_matches_stacked_numpy():
    rng = np.random.default_rng(2)
    a, b = _well(rng, (4, 3, 3)), rng.normal(size=(4, 3))
    want = np.linalg.solve(a, b[..., None])[..., 0]  # per example, b is a vector
    np.testing.assert_allclose(tj.vmap(tnp.linalg.solve)(a, b), want, rtol=1e-12)
    np.testing.assert_allclose(tj.vmap(tnp.linalg.det)(a), np.linalg.det(a), rtol=1e-12)


def test_singular_gives_nan_for_that_matrix_only_like_jax():
    a = np.stack([np.eye(2), np.ones((2, 2))])
    b = np.ones((2, 2, 1))
    for f in (_jit_cpu(tnp.linalg.inv), tnp.linalg.inv):
        out = f(a)
        np.testing.assert_array_equal(out[0], np.eye(2))
        assert np.isnan(out[1]).all()
    x = _jit_cpu(tnp.linalg.solve)(a, b)
    assert np.isnan(x[1]).all() and np.array_equal(x[0], b[0])
    assert np.isnan(tnp.linalg.cholesky(-np.eye(2))).all()
    np.testing.assert_array_equal(tnp.linalg.det(a), [1.0, 0.0])
    sign, logabs = tnp.linalg.slogdet(a)
    np.testing.assert_array_equal(sign, [1.0, 0.0])
    np.testing.assert_array_equal(logabs, [0.0, -np.inf])


@pytest.mark.parametrize("name", ["solve", *NAMES, "slogdet", "eigh"])
def test_non_square_raises_linalg_error(name):
    fn = getattr(tnp.linalg, name)
    args = (np.ones((2, 3)), np.ones(2)) if name == "solve" else (np.ones((2, 3)),)
    with pytest.raises(np.linalg.LinAlgError, match=f"{name}: needs square matrices"):
        _jit_cpu(fn)(*args)
    with pytest.raises(tj.errors.ShapeError):
        fn(np.ones(3), *args[1:])
    with pytest.raises(np.linalg.LinAlgError, match="does not match"):
        tnp.linalg.solve(np.eye(3), np.ones(2))


def _eigh_loss(m, a, w):
    vals, vecs = m.linalg.eigh(a)
    return (vals * w[..., 0]).sum() + (vecs * vecs * w).sum()  # eigenvector signs cancel


def _losses(rng):
    """name -> (loss of a (2, 3, 3) input, the input): each output weighted at random."""
    w = rng.normal(size=(2, 3, 3))
    wv, b = rng.normal(size=2), rng.normal(size=(2, 3, 2))

    def sym(m, x):  # cholesky is differentiated along symmetric inputs (see linalg_prims)
        return x @ m.swapaxes(x, -1, -2) + 3.0 * m.eye(3)

    a0 = _well(np.random.default_rng(5), (2, 3, 3))
    return {
        "solve_a": (lambda m, x: (m.linalg.solve(x, b) * w[..., :2]).sum(), _well(rng, (2, 3, 3))),
        "solve_b": (lambda m, x: (m.linalg.solve(a0, x) * w[..., :2]).sum(), b),
        "inv": (lambda m, x: (m.linalg.inv(x) * w).sum(), _well(rng, (2, 3, 3))),
        "det": (lambda m, x: (m.linalg.det(x) * wv).sum(), _well(rng, (2, 3, 3))),
        "slogdet": (lambda m, x: (m.linalg.slogdet(x)[1] * wv).sum(), _well(rng, (2, 3, 3))),
        "cholesky": (lambda m, x: (m.linalg.cholesky(sym(m, x)) * w).sum(), w + np.eye(3)),
        "cholesky_upper": (
            lambda m, x: (m.linalg.cholesky(sym(m, x), upper=True) * w).sum(),
            w + np.eye(3),
        ),
        "eigh": (lambda m, x: _eigh_loss(m, sym(m, x), w), rng.normal(size=(2, 3, 3))),
        "eigvalsh": (
            lambda m, x: (m.linalg.eigvalsh(sym(m, x)) ** 3 * w[..., 0]).sum(),
            rng.normal(size=(2, 3, 3)),
        ),
    }


LOSSES = _losses(np.random.default_rng(3))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_matches_finite_differences(name):
    loss, x = LOSSES[name]
    want = numeric_grad(lambda v: loss(np, v), x)
    for g in (tj.grad(lambda v: loss(tnp, v)), _jit_cpu(tj.grad(lambda v: loss(tnp, v)))):
        np.testing.assert_allclose(g(x), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "cholesky_upper", "eigh", "eigvalsh"])
def test_second_derivative_matches_finite_differences_of_the_gradient(name):
    loss, x = LOSSES[name]
    v = np.random.default_rng(4).normal(size=x.shape)
    grad = tj.grad(lambda y: loss(tnp, y))
    hvp = tj.jit(tj.grad(lambda y: (grad(y) * v).sum()))
    want = numeric_grad(lambda y: float((grad(y) * v).sum()), x, eps=1e-5)
    np.testing.assert_allclose(hvp(x), want, rtol=1e-5, atol=1e-6)


def test_compiles_for_the_test_device(device):
    rng = np.random.default_rng(6)
    a, s = _well(rng, (2, 3, 3), np.float32), _spd(rng, (2, 3, 3), np.float32)
    b = rng.normal(size=(2, 3)).astype(np.float32)

    def f(m, a, s, b):
        return (m.linalg.solve(a, b[..., None]), m.linalg.inv(a), m.linalg.cholesky(s),
                m.linalg.det(a), m.linalg.slogdet(a)[1], m.linalg.eigvalsh(s))  # fmt: skip

    got = tj.device_get(tj.jit(lambda *xs: f(tnp, *xs), device=device)(a, s, b))
    for g, w in zip(got, f(np, a, s, b)):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    grad = tj.jit(tj.grad(lambda a: tnp.linalg.slogdet(a)[1].sum()), device=device)
    np.testing.assert_allclose(
        tj.device_get(grad(a)), np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-4, atol=1e-5
    )
