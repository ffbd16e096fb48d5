"""Complex linear algebra: solve, inv, det, slogdet, cholesky, qr, svd, eigh (NumPy's LAPACK
c/z routines as host steps; cuSOLVER on a GPU) and what tnp composes from them (pinv, lstsq, norms, vdot),
values vs NumPy eagerly and compiled on the test device; gradients in JAX's convention
(df/dx - i df/dy) vs float64 central differences, with gauge-invariant losses where the
factors carry a free phase (eigh, svd)."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

RNG = np.random.default_rng(12)


def _cn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A, B, T = _cn(2, 3, 3) + 2 * np.eye(3), _cn(2, 3, 2), _cn(4, 3)
H = A @ np.conj(np.swapaxes(A, -1, -2)) + 3 * np.eye(3)


def _factors(m, a, b, h):
    sign, logabs = m.linalg.slogdet(a)
    q, r = m.linalg.qr(a[0, :, :2])
    qc, rc = m.linalg.qr(a, mode="complete")
    return (m.linalg.solve(a, b), m.linalg.inv(a), m.linalg.det(a), sign, logabs,
            m.linalg.cholesky(h), m.linalg.cholesky(h, upper=True), q, r, qc, rc,
            *m.linalg.svd(a), *m.linalg.svd(b, full_matrices=False), *m.linalg.eigh(h))  # fmt: skip


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_factorizations_equal_numpy(dtype, device):
    args = [x.astype(dtype) for x in (A, B, H)]
    want = _factors(np, *args)
    compiled = tj.jit(lambda *xs: _factors(tnp, *xs), device=device)
    _exact(tj.device_get(_factors(tnp, *args)), want)  # eager: NumPy's LAPACK on the host
    if dtype == np.complex128:
        got = tj.device_get(compiled(*args))
        if device == "cpu":
            _exact(got, want)  # NumPy's own routine, as a host step
        else:  # cuSOLVER: within rounding, and factors up to their phase (gauge)
            _check_cusolver(got, want, *args)


def _exact(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _check_cusolver(got, want, a, b, h):
    for g, x in zip(got, want, strict=True):
        assert g.dtype == x.dtype and g.shape == x.shape
    close = {"rtol": 1e-12, "atol": 1e-12}
    for k in (0, 1, 2, 3, 4, 5, 6, 12, 15, 17):  # unique: solve ... singular/eigen values
        np.testing.assert_allclose(got[k], want[k], **close)
    q, r, qc, rc, u, s, vh, ub, sb, vhb, w, v = got[7:]
    np.testing.assert_allclose(q @ r, a[0, :, :2], **close)
    np.testing.assert_allclose(qc @ rc, a, **close)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, **close)
    np.testing.assert_allclose((ub * sb[..., None, :]) @ vhb, b, **close)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), h, **close)


def _composed(m, a, t, h):
    v = t[:, 0]
    return (m.linalg.pinv(t), m.linalg.lstsq(t, t[:, 1], rcond=None)[0],
            m.linalg.lstsq(t, t[:, 1], rcond=None)[1], m.linalg.matrix_rank(t),
            m.linalg.cond(a), m.linalg.eigvalsh(np.triu(h), UPLO="U"),
            m.linalg.norm(a), m.linalg.norm(a, "nuc"), m.linalg.norm(a, 2), m.linalg.norm(a, 1),
            m.linalg.norm(v), m.linalg.norm(v, 3), m.linalg.norm(v, 0),
            m.vdot(v, t[:, 1]), m.linalg.vecdot(t, t[:, ::-1]))  # fmt: skip


def test_composed_functions_match_numpy(device):
    want = _composed(np, A[0], T, H[0])
    for got in (_composed(tnp, A[0], T, H[0]),
                tj.jit(lambda *xs: _composed(tnp, *xs), device=device)(A[0], T, H[0])):  # fmt: skip
        for g, w in zip(tj.device_get(got), want):
            assert np.asarray(g).dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    w, v = tnp.linalg.eigh(H[0], UPLO="U")  # eigenvectors up to phase: check V diag(w) V^H
    np.testing.assert_allclose((v * w) @ np.conj(v.T), H[0], atol=1e-12)


def _herm(m, x):
    return x @ m.conj(m.swapaxes(x, -1, -2)) + 3.0 * m.eye(3)


W, WV = _cn(2, 3, 3), _cn(2)


def _eigh_loss(m, h):  # |V|^2: invariant to each eigenvector's phase
    w, v = m.linalg.eigh(h)
    return (w * WV.real[:, None]).sum() + (m.abs(v) ** 2 * W.real).sum()


LOSSES = {
    "solve_a": lambda m, x: m.real(m.linalg.solve(x, B) * W[..., :2]).sum(),
    "solve_b": lambda m, x: m.imag(m.linalg.solve(A, x[..., :2]) * W[..., :2]).sum(),
    "inv": lambda m, x: m.real(m.linalg.inv(x) * W).sum(),
    "det": lambda m, x: m.real(m.linalg.det(x) * WV).sum(),
    "slogdet": lambda m, x: sum(m.real(p * WV).sum() for p in m.linalg.slogdet(x)),
    "cholesky": lambda m, x: m.real(m.linalg.cholesky(_herm(m, x)) * W).sum(),
    "cholesky_upper": lambda m, x: m.imag(m.linalg.cholesky(_herm(m, x), upper=True) * W).sum(),
    "eigh": lambda m, x: _eigh_loss(m, _herm(m, x)),
    "eigvalsh": lambda m, x: (m.linalg.eigvalsh(_herm(m, x)) ** 2 * WV.real[:, None]).sum(),
    "svdvals": lambda m, x: (m.linalg.svdvals(x[..., :2]) ** 2 * WV.imag[:, None]).sum(),
    "qr": lambda m, x: _qr_loss(m, x),
    "qr_tall": lambda m, x: _qr_loss(m, x[..., :2]),
    "svd_square": lambda m, x: _svd_loss(m, x),
    "svd_tall": lambda m, x: _svd_loss(m, x[..., :2]),
    "svd_wide": lambda m, x: _svd_loss(m, x[:, :2]),
}


def _weighted(m, x, w):
    return m.real(x * w[..., : x.shape[-2], : x.shape[-1]]).sum()


def _qr_loss(m, x):
    q, r = m.linalg.qr(x)
    return _weighted(m, q, W) + _weighted(m, r, 1j * W)


def _svd_loss(m, x):  # s, |U|^2, |Vh|^2 and U Vh do not see the singular pairs' phases
    u, s, vh = m.linalg.svd(x, full_matrices=False)
    return (
        (s * WV.real[:, None]).sum()
        + _weighted(m, m.abs(u) ** 2, W)
        + _weighted(m, m.abs(vh) ** 2, W.imag)
        + _weighted(m, u @ vh, W[::-1])
    )


X = _cn(2, 3, 3) + 2 * np.eye(3)


def _complex_grad(f, z):
    gx = numeric_grad(lambda x: f(x + 1j * z.imag), z.real)
    return gx - 1j * numeric_grad(lambda y: f(z.real + 1j * y), z.imag)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_matches_finite_differences(name):
    loss, x = LOSSES[name], X
    want = _complex_grad(lambda z: loss(np, z), x)
    np.testing.assert_allclose(tj.grad(lambda z: loss(tnp, z))(x), want, rtol=1e-6, atol=1e-7)


def test_gradients_compiled_for_the_test_device(device):
    """One loss per VJP shape (host solves, triangular, QR, SVD, eigh) in one program."""
    names = ("solve_a", "cholesky", "cholesky_upper", "qr_tall", "svd_wide", "eigh")
    losses = [LOSSES[k] for k in names]
    want = sum(_complex_grad(lambda z, f=f: f(np, z), X) for f in losses)
    grad = tj.jit(tj.grad(lambda z: sum(f(tnp, z) for f in losses)), device=device)
    np.testing.assert_allclose(tj.device_get(grad(X)), want, rtol=1e-6, atol=1e-6)
