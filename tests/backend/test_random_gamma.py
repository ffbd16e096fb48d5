"""The samplers of tracejit/_random_gamma.py and _random_more.py: each draw's distribution
against scipy.stats (Kolmogorov-Smirnov distance for continuous laws, chi-square on
frequencies for discrete ones; fixed keys, so the verdict is deterministic), moments of the
multivariate ones, the same key giving the same numbers under `jit` on the test device as
eagerly, and gradients against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad
from scipy import stats

import tracejit as tj
import tracejit.numpy as tnp

N = 20_000
KS_LIMIT = 1.95 / np.sqrt(N)  # the KS critical distance at a 0.1% level
R = tj.random

CONTINUOUS = {
    "gamma-0.3": (lambda k: R.gamma(k, 0.3, (N,)), stats.gamma(0.3)),
    "gamma-1": (lambda k: R.gamma(k, 1.0, (N,)), stats.gamma(1.0)),
    "gamma-50": (lambda k: R.gamma(k, 50.0, (N,), np.float64), stats.gamma(50.0)),
    "random_gamma_p": (lambda k: R.random_gamma_p.bind(k, np.full(N, 2.5)), stats.gamma(2.5)),
    "beta": (lambda k: R.beta(k, 0.5, 2.0, (N,)), stats.beta(0.5, 2.0)),
    "beta-tiny": (lambda k: R.beta(k, 0.05, 0.1, (N,), np.float64), stats.beta(0.05, 0.1)),
    "chisquare": (lambda k: R.chisquare(k, 3.0, (N,)), stats.chi2(3.0)),
    "f": (lambda k: R.f(k, 4.0, 7.0, (N,)), stats.f(4.0, 7.0)),
    "t": (lambda k: R.t(k, 3.0, (N,)), stats.t(3.0)),
    "truncated_normal": (lambda k: R.truncated_normal(k, -0.5, 2.0, (N,)),
                         stats.truncnorm(-0.5, 2.0)),
    "truncated_tail": (lambda k: R.truncated_normal(k, 1.0, 4.0, (N,), np.float64),
                       stats.truncnorm(1.0, 4.0)),
    "generalized_normal": (lambda k: R.generalized_normal(k, 1.5, (N,)), stats.gennorm(1.5)),
    "dirichlet-margin": (lambda k: R.dirichlet(k, np.array([0.5, 1.0, 2.0]), (N,))[:, 0],
                         stats.beta(0.5, 3.0)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_samplers_follow_their_law(name):
    draw, law = CONTINUOUS[name]
    x = np.asarray(draw(R.key(7)), np.float64)
    assert x.shape == (N,) and np.isfinite(x).all()
    assert stats.kstest(x, law.cdf).statistic < KS_LIMIT


def test_loggamma_keeps_tiny_shapes_finite():
    y = np.asarray(R.loggamma(R.key(1), 0.01, (N,), np.float64))
    assert np.isfinite(y).all() and (np.exp(y) == 0).any()  # gamma itself underflows here
    assert stats.kstest(y, lambda v: stats.gamma(0.01).cdf(np.exp(v))).statistic < KS_LIMIT


def _chisquare_ok(samples, law, lo: int, hi: int):
    """Frequencies of lo..hi (the tails pooled into the end bins) against `law`'s pmf."""
    values = np.arange(lo, hi + 1)
    counts = np.array([(samples == v).sum() for v in values], np.float64)
    counts[0] += (samples < lo).sum()
    counts[-1] += (samples > hi).sum()
    probs = law.pmf(values)
    probs[0], probs[-1] = law.cdf(lo), law.sf(hi - 1)
    assert stats.chisquare(counts, probs / probs.sum() * counts.sum()).pvalue > 1e-3


@pytest.mark.parametrize("lam", [0.7, 4.0, 9.9, 10.0, 37.5, 1e4])
def test_poisson_follows_its_law(lam):
    x = np.asarray(R.poisson(R.key(5), lam, (N,)))
    assert x.dtype == np.int32
    law = stats.poisson(lam)
    _chisquare_ok(x, law, int(law.ppf(0.005)), int(law.ppf(0.995)))


@pytest.mark.parametrize("n,p", [(20, 0.3), (5, 0.9), (100, 0.4), (1000, 0.97)])
def test_binomial_follows_its_law(n, p):
    x = np.asarray(R.binomial(R.key(6), n, p, (N,)))
    assert x.dtype == np.float32 and (x >= 0).all() and (x <= n).all()
    law = stats.binom(n, p)
    _chisquare_ok(x, law, int(law.ppf(0.005)), int(law.ppf(0.995)))


def test_degenerate_discrete_parameters():
    assert (np.asarray(R.poisson(R.key(0), 0.0, (50,))) == 0).all()
    assert (np.asarray(R.binomial(R.key(0), 7, 0.0, (50,))) == 0).all()
    assert (np.asarray(R.binomial(R.key(0), 7, 1.0, (50,))) == 7).all()


def test_multinomial_counts_and_margins():
    p = np.array([0.2, 0.3, 0.5])
    c = np.asarray(R.multinomial(R.key(8), 50, p, (N,)))
    assert c.shape == (N, 3) and (c.sum(-1) == 50).all()
    _chisquare_ok(c[:, 1], stats.binom(50, 0.3), 5, 25)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_moments(method):
    mean, cov = np.array([1.0, -1.0]), np.array([[2.0, 0.6], [0.6, 1.0]])
    x = np.asarray(R.multivariate_normal(R.key(9), mean, cov, (N,), np.float64, method))
    se = np.sqrt(np.diag(cov) / N)
    assert (np.abs(x.mean(0) - mean) < 4 * se).all()
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_orthogonal_is_orthonormal_and_haar():
    q = np.asarray(R.orthogonal(R.key(2), 3, (4000,), np.float64))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), q.shape),
                               atol=1e-12)  # fmt: skip
    # Haar: each entry of a 3x3 orthogonal matrix has the law of x with (x + 1) / 2 ~ Beta(1, 1)
    assert stats.kstest((q[:, 0, 0] + 1) / 2, stats.beta(1.0, 1.0).cdf).statistic < 0.03
    wide = np.asarray(R.orthogonal(R.key(2), 2, (), np.float64, m=5))
    assert wide.shape == (2, 5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-12)


def test_same_key_same_numbers_under_jit(device):
    def draws(key):
        return (R.gamma(key, np.array([0.4, 3.0]), (3, 2)), R.beta(key, 2.0, 3.0, (4,)),
                R.truncated_normal(key, -1.0, 1.0, (4,)), R.poisson(key, np.array([2.0, 30.0])),
                R.binomial(key, 40.0, 0.4, (3,)), R.t(key, 4.0, (3,)))  # fmt: skip

    key = R.key(2024)
    for got, expected in zip(tj.jit(draws, device=device)(key), draws(key), strict=True):
        got = np.asarray(tj.device_get(got))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_gradients_through_the_samplers():
    key = R.key(4)

    def trunc(bounds):
        return tnp.sum(R.truncated_normal(key, bounds[0], bounds[1], (6,), np.float64))

    b = np.array([-0.3, 1.2])
    np.testing.assert_allclose(tj.grad(trunc)(b), numeric_grad(lambda v: float(trunc(v)), b),
                               rtol=1e-5, atol=1e-8)  # fmt: skip

    def mvn(cov):
        c = tnp.matmul(cov, tnp.transpose(cov)) + np.eye(2)
        return tnp.sum(tnp.sin(R.multivariate_normal(key, np.zeros(2), c, (5,), np.float64)))

    a = np.array([[0.5, 0.1], [-0.2, 0.7]])
    np.testing.assert_allclose(tj.jit(tj.grad(mvn))(a), numeric_grad(lambda v: float(mvn(v)), a),
                               rtol=1e-5, atol=1e-8)  # fmt: skip
    # a scale applied to the draws (the shape parameter: test_random_gamma_grad.py)
    scale = tj.grad(lambda s: tnp.sum(s * R.gamma(key, 1.5, (3,), np.float64)))
    assert float(scale(np.float64(2.0))) == float(np.sum(R.gamma(key, 1.5, (3,), np.float64)))


def test_key_dtype_and_exports():
    assert R.key(0).dtype == R.key_dtype()
    assert repr(R.random_gamma_p) == "random_gamma"
