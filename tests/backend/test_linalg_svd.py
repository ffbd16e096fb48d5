"""tnp.linalg.svd/svdvals/pinv/qr and norm(ord=2/-2/nuc): values vs NumPy, gradients vs float64 finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

SHAPES = [(0, 3), (1, 1), (4, 4), (5, 3), (2, 3, 5)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_and_pinv_equal_numpy(shape, dtype, full):
    a = np.random.default_rng(shape[-1]).normal(size=shape).astype(dtype)

    def f(m, a):
        return (*m.linalg.svd(a, full_matrices=full), m.linalg.pinv(a))

    want = f(np, a)
    for got in (f(tnp, a), tj.jit(lambda v: f(tnp, v), device="cpu")(a)):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(tnp.linalg.svdvals(a), np.linalg.svd(a, compute_uv=False),
                               rtol=rtol, atol=rtol)  # fmt: skip


def test_pinv_of_rank_deficient_and_rtol_like_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(tnp.linalg.pinv(a), np.linalg.pinv(a))
    np.testing.assert_array_equal(tnp.linalg.pinv(a, rtol=None), np.linalg.pinv(a, rtol=None))
    with pytest.raises(np.linalg.LinAlgError, match="svd: needs matrices"):
        tnp.linalg.svd(np.ones(3))


def _svd_loss(m, x, w):
    u, s, vh = m.linalg.svd(x, full_matrices=False)
    k = s.shape[-1]
    # sign-invariant in each singular pair: squares, and u_i v_i^T products
    return ((s * w[..., 0, :k]).sum() + (u * u * w[..., :, :k]).sum()
            + (vh * vh * w[..., :k, :]).sum() + (u[..., :, :1] * vh[..., :1, :] * w).sum())  # fmt: skip


@pytest.mark.parametrize("shape", [(2, 4, 4), (5, 3), (3, 5)])
def test_svd_gradient_matches_finite_differences(shape):
    rng = np.random.default_rng(sum(shape))
    x, w = rng.normal(size=shape), rng.normal(size=shape)
    want = numeric_grad(lambda v: _svd_loss(np, v, w), x)
    got = tj.jit(tj.grad(lambda v: _svd_loss(tnp, v, w)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_pinv_gradient_and_second_derivative():
    rng = np.random.default_rng(7)
    x, w, v = rng.normal(size=(4, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4, 3))
    grad = tj.grad(lambda y: (tnp.linalg.pinv(y) * w).sum())
    want = numeric_grad(lambda y: (np.linalg.pinv(y) * w).sum(), x)
    np.testing.assert_allclose(tj.jit(grad)(x), want, rtol=1e-6, atol=1e-7)
    hvp = tj.jit(tj.grad(lambda y: (grad(y) * v).sum()))
    want2 = numeric_grad(lambda y: float((grad(y) * v).sum()), x, eps=1e-5)
    np.testing.assert_allclose(hvp(x), want2, rtol=1e-5, atol=1e-6)


def test_full_matrices_gradient_of_non_square_is_a_named_error():
    with pytest.raises(tj.errors.UnsupportedError, match="full_matrices=False"):
        tj.grad(lambda y: tnp.linalg.svd(y)[0].sum())(np.ones((3, 2)))


def test_svd_on_the_test_device(device):
    a = np.random.default_rng(8).normal(size=(2, 5, 3)).astype(np.float32)
    f = tj.jit(
        lambda v: (tnp.linalg.svd(v, compute_uv=False), tnp.linalg.pinv(v), tnp.linalg.qr(v)),
        device=device,
    )
    s, p, (q, r) = tj.device_get(f(a))
    np.testing.assert_allclose(q @ r, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a)[1]), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose(p, np.linalg.pinv(a), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_spectral_and_nuclear_norms_match_numpy_with_gradients(ord):
    rng = np.random.default_rng(9)
    a = rng.normal(size=(3, 4, 5))
    for axis, keepdims in (((1, 2), False), ((2, 0), True)):
        got = tj.jit(tnp.linalg.norm, static_argnames=("ord", "axis", "keepdims"))(
            a, ord=ord, axis=axis, keepdims=keepdims
        )
        want = np.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13)
    x = rng.normal(size=(4, 3))
    want = numeric_grad(lambda v: np.linalg.norm(v, ord=ord), x)
    np.testing.assert_allclose(tj.grad(lambda v: tnp.linalg.norm(v, ord=ord))(x), want, rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_modes_equal_numpy(shape):
    a = np.random.default_rng(10 + shape[-1]).normal(size=shape)
    for mode in ("reduced", "complete", "r"):
        got = tj.jit(tnp.linalg.qr, static_argnames="mode")(a, mode=mode)
        want = np.linalg.qr(a, mode=mode)
        for g, w in zip(*((got, want) if mode != "r" else ((got,), (want,)))):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape", [(2, 5, 3), (4, 4)])
def test_qr_gradient_matches_finite_differences(shape):
    rng = np.random.default_rng(sum(shape))
    a, wq, wr = rng.normal(size=shape), rng.normal(size=shape), rng.normal(size=shape)
    n = shape[-1]

    def loss(m, x):
        q, r = m.linalg.qr(x)
        return (q * wq).sum() + (r * wr[..., :n, :]).sum()

    want = numeric_grad(lambda v: loss(np, v), a)
    np.testing.assert_allclose(
        tj.jit(tj.grad(lambda v: loss(tnp, v)))(a), want, rtol=1e-6, atol=1e-7
    )
    with pytest.raises(tj.errors.UnsupportedError, match="m >= n"):
        tj.grad(lambda v: tnp.linalg.qr(v, mode="r").sum())(np.ones((2, 3)))


def _values_only(m, a):
    """svd(compute_uv=False) of `a` (2, 4, 3) and eigvalsh of its symmetrized top square."""
    top = a[..., :3, :]
    return m.linalg.svd(a, compute_uv=False), m.linalg.eigvalsh(top + m.swapaxes(top, -1, -2))


def test_values_only_forms_compute_no_vectors_but_to_differentiate(device):
    rng = np.random.default_rng(10)
    a, w, t = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 2, 3)), rng.normal(size=(2, 4, 3))

    def loss(m, x):
        s, e = _values_only(m, x)
        return (s * s * w[0]).sum() + (m.sin(e) * w[1]).sum()

    names = {n.prim.name for n in tj.jit(lambda x: _values_only(tnp, x)).lower(a).graph.nodes}
    assert {"svdvals", "eigvalsh"} <= names and not names & {"svd", "eigh"}
    got = tj.device_get(tj.jit(lambda x: _values_only(tnp, x), device=device)(a))
    for g, want in zip(got, _values_only(np, a), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
    grad = tj.grad(lambda x: loss(tnp, x))
    want = numeric_grad(lambda x: loss(np, x), a)
    np.testing.assert_allclose(tj.device_get(tj.jit(grad, device=device)(a)), want, rtol=1e-6,
                               atol=1e-7)  # fmt: skip
    _, tangent = tj.jvp(lambda x: loss(tnp, x), (a,), (t,))
    np.testing.assert_allclose(tangent, (want * t).sum(), rtol=1e-6)
    hvp = tj.jit(tj.grad(lambda x: (grad(x) * t).sum()), device=device)
    want2 = numeric_grad(lambda x: float((grad(x) * t).sum()), a, eps=1e-5)
    np.testing.assert_allclose(tj.device_get(hvp(a)), want2, rtol=1e-5, atol=1e-6)
