"""Gradients of gamma draws with respect to the shape parameter (implicit reparameterization,
_random_gamma_grad.py), and of beta and dirichlet through them.

Oracle: a draw x of Gamma(a) stands for the quantile F^-1(u; a) at u = F(x; a), so its
derivative is d/da F^-1(u; a) at fixed u, taken here by central differences of
scipy.special.gammaincinv in float64 (scipy.special.gammainc is F); for shapes beyond 1e6, where
gammaincinv loses digits, by a 50-digit quadrature of dF/da (mpmath). Beta and dirichlet are
checked by unbiasedness: the mean of the per-draw gradients over many draws is the derivative
of the mean, d/da a / (a + b) (a fixed key, so the verdict is deterministic)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import special

import tracejit as tj
import tracejit.numpy as tnp
from tracejit._random_gamma_grad import dlog_gamma_da
from tracejit.ir.autodiff_control import WhileLoopNotReversible

R = tj.random
H = 1e-6  # relative step of the central differences
SHAPES = [0.05, 0.3, 1.0, 2.5, 10.0, 100.0, 1000.0]  # both branches, tiny and large a
QUANTILES = [1e-6, 0.01, 0.3, 0.7, 0.99, 1 - 1e-6]


def quantile_slope(a, x):
    """d/da F^-1(u; a) at u = F(x; a), by central differences of gammaincinv."""
    u, h = special.gammainc(a, x), H * a
    return (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)


def test_implicit_slope_matches_the_quantile_derivative():
    # compiled for cpu; the CUDA emulator runs it inside test_gamma_grad_eager_and_jit
    a, q = np.repeat(SHAPES, len(QUANTILES)), np.tile(QUANTILES, len(SHAPES))
    x = special.gammaincinv(a, q)
    got = np.asarray(tj.jit(dlog_gamma_da)(a, np.log(x)))
    np.testing.assert_allclose(got * x, quantile_slope(a, x), rtol=1e-7)


def mp_log_slope(a: float, x: float) -> float:
    """d(log x)/da at fixed u = F(x; a): -(dF/da) / (x dF/dx), with dF/da the integral of
    (log t - digamma(a)) t**(a - 1) e**-t / Gamma(a) below x (or minus it above x, whichever
    is the tail), in 50 digits over t = a + sqrt(a) s, nodes packed towards x."""
    with mpmath.workdps(50):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        lg, psi, r = mpmath.loggamma(a), mpmath.digamma(a), mpmath.sqrt(a)

        def integrand(s):
            t = a + r * s
            return (mpmath.log(t) - psi) * mpmath.exp((a - 1) * mpmath.log(t) - t - lg) * r

        sx, gaps = (x - a) / r, (40, 10, 3, 1, 0.3, 0.1, 0.03, 0.01, 0)
        if sx < 0:
            df_da = mpmath.quad(integrand, [sx - g for g in gaps])
        else:
            df_da = -mpmath.quad(integrand, [sx + g for g in reversed(gaps)])
        df_dx = mpmath.exp((a - 1) * mpmath.log(x) - x - lg)
        return float(-df_da / (x * df_dx))


def test_large_shapes_match_a_high_precision_quadrature():
    # the series and the fraction would need more than _MAX_TERMS terms: the Cornish-Fisher
    # branch, from the far lower tail (u = 1e-30) through the mode to the far upper tail;
    # compiled for cpu, the CUDA emulator runs it inside test_gamma_grad_eager_and_jit
    shapes = [5e6, 1e8, 1e12]
    a = np.repeat(shapes, 5)
    x = np.concatenate(
        [[*special.gammaincinv(s, [1e-30, 0.01, 0.5, 0.99]), special.gammainccinv(s, 1e-30)]
         for s in shapes]
    )  # fmt: skip
    got = np.asarray(tj.jit(dlog_gamma_da)(a, np.log(x)))
    want = [mp_log_slope(ai, xi) for ai, xi in zip(a, x)]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_gamma_grad_eager_and_jit(device):
    key = R.key(3)
    a = np.array([*(SHAPES if device == "cpu" else [0.3, 2.5]), 3e7])  # 3e7: Cornish-Fisher

    def total(a):
        return tnp.sum(R.gamma(key, a, None, np.float64))

    x = np.asarray(R.gamma(key, a, None, np.float64))
    want = quantile_slope(a, x)
    want[-1] = mp_log_slope(a[-1], x[-1]) * x[-1]
    np.testing.assert_allclose(tj.grad(total)(a), want, rtol=1e-7)
    jitted = tj.jit(tj.grad(total), device=device)(a)
    np.testing.assert_allclose(np.asarray(tj.device_get(jitted)), want, rtol=1e-7)
    _, tangent = tj.jvp(lambda a: R.gamma(key, a, None, np.float64), (a,), (np.ones(len(a)),))
    np.testing.assert_allclose(tangent, want, rtol=1e-7)


def test_loggamma_grad_for_tiny_shapes_in_float32():
    # float32 draws of Gamma(0.02) underflow; their logs and d(log x)/da stay finite
    key, a = R.key(5), np.full(8, 0.02, np.float32)
    log_x = np.asarray(R.loggamma(key, a), np.float64)
    got = tj.grad(lambda a: tnp.sum(R.loggamma(key, a)))(a)
    assert got.dtype == np.float32 and np.isfinite(got).all()
    a64, x = a.astype(np.float64), np.exp(log_x)
    u, h = special.gammainc(a64, x), H * a64
    up, down = special.gammaincinv(a64 + h, u), special.gammaincinv(a64 - h, u)
    np.testing.assert_allclose(got, (np.log(up) - np.log(down)) / (2 * h), rtol=1e-4)


def assert_mean_near(per_draw, want):
    """The mean of independent per-draw gradients within 4 standard errors of `want`."""
    per_draw = np.asarray(per_draw)
    err = per_draw.std(axis=0) / np.sqrt(per_draw.shape[0])
    assert (np.abs(per_draw.mean(axis=0) - want) < 4 * err).all(), (per_draw.mean(0), want)


N = 5_000


def test_gamma_grad_is_unbiased():
    # E[x] = a, so dx/da has mean 1
    a = np.full(N, 3.0)
    per_draw = tj.jit(tj.grad(lambda a: tnp.sum(R.gamma(R.key(1), a, None, np.float64))))(a)
    assert_mean_near(per_draw, 1.0)


def test_beta_and_dirichlet_grads_are_unbiased():
    # E[beta(a, b)] = a / (a + b); E[dirichlet(alpha)_0] = alpha_0 / sum(alpha)
    def beta_sum(a, b):
        return tnp.sum(R.beta(R.key(2), a, b, None, np.float64))

    def first_sum(alpha):
        return tnp.sum(R.dirichlet(R.key(3), alpha, None, np.float64)[:, 0])

    def grads(a, b, alpha):  # one program
        return tj.grad(beta_sum, (0, 1))(a, b), tj.grad(first_sum)(alpha)

    alpha = np.tile([0.5, 1.0, 2.0], (N, 1))
    (ga, gb), g_alpha = tj.jit(grads)(np.full(N, 0.7), np.full(N, 2.0), alpha)
    assert_mean_near(np.stack([ga, gb], 1), [2.0 / 2.7**2, -0.7 / 2.7**2])
    assert_mean_near(g_alpha, np.array([3.0, -0.5, -0.5]) / 3.5**2)


def test_beta_grad_is_the_gamma_draws_chain_rule():
    key, a, b = R.key(4), np.array([0.3, 2.0]), np.array([1.5, 0.8])
    k1, k2 = R.split(key)
    ga, gb = (
        np.asarray(R.gamma(k1, a, None, np.float64)),
        np.asarray(R.gamma(k2, b, None, np.float64)),
    )
    da, db = tj.grad(lambda a, b: tnp.sum(R.beta(key, a, b, None, np.float64)), (0, 1))(a, b)
    s2 = (ga + gb) ** 2
    np.testing.assert_allclose(da, quantile_slope(a, ga) * gb / s2, rtol=1e-6)
    np.testing.assert_allclose(db, -quantile_slope(b, gb) * ga / s2, rtol=1e-6)


def test_second_derivative_in_forward_mode_and_a_clear_error_in_reverse():
    key = R.key(6)

    def draw(a):
        return R.gamma(key, a, (), np.float64)

    slope = tj.grad(draw)
    u, h = special.gammainc(2.0, float(draw(2.0))), 1e-4
    quantile = [special.gammaincinv(a, u) for a in (2.0 - h, 2.0, 2.0 + h)]
    want = (quantile[0] - 2 * quantile[1] + quantile[2]) / h**2
    np.testing.assert_allclose(float(tj.jacfwd(slope)(2.0)), want, rtol=1e-4)
    with pytest.raises(WhileLoopNotReversible):
        tj.grad(slope)(2.0)


def test_invalid_shapes_give_nan_gradients():
    g = tj.grad(lambda a: tnp.sum(R.gamma(R.key(0), a, None, np.float64)))
    got = g(np.array([np.nan, -1.0, 2.0]))
    assert np.isnan(got[:2]).all() and np.isfinite(got[2])
