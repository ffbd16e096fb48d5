"""The samplers of tracejit/_random_samplers.py: each draw's distribution against the exact
one (Kolmogorov-Smirnov distance for continuous laws, frequencies for discrete ones; fixed keys,
so the verdict is deterministic), and the same key giving the same numbers under `jit` on the
test device as eagerly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import tracejit as tj

N = 20_000
KS_LIMIT = 1.95 / np.sqrt(N)  # the KS critical distance at a 0.1% level

CONTINUOUS = {
    "exponential": (lambda k: tj.random.exponential(k, (N,)), stats.expon()),
    "gumbel": (lambda k: tj.random.gumbel(k, (N,)), stats.gumbel_r()),
    "laplace": (lambda k: tj.random.laplace(k, (N,)), stats.laplace()),
    "logistic": (lambda k: tj.random.logistic(k, (N,)), stats.logistic()),
    "cauchy": (lambda k: tj.random.cauchy(k, (N,)), stats.cauchy()),
    "lognormal": (lambda k: tj.random.lognormal(k, 0.5, (N,)), stats.lognorm(0.5)),
    "pareto": (lambda k: tj.random.pareto(k, 3.0, (N,)), stats.pareto(3.0)),
    "rayleigh": (lambda k: tj.random.rayleigh(k, 2.0, (N,)), stats.rayleigh(scale=2.0)),
    "weibull_min": (lambda k: tj.random.weibull_min(k, 2.0, 1.5, (N,)),
                    stats.weibull_min(1.5, scale=2.0)),
    "maxwell": (lambda k: tj.random.maxwell(k, (N,)), stats.maxwell()),
    "triangular": (lambda k: tj.random.triangular(k, -1.0, 0.5, 2.0, (N,)),
                   stats.triang(0.5, loc=-1.0, scale=3.0)),
    "wald": (lambda k: tj.random.wald(k, 1.5, (N,), np.float64), stats.invgauss(1.5)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_samplers_follow_their_law(name):
    draw, law = CONTINUOUS[name]
    x = np.asarray(draw(tj.random.key(7)), np.float64)
    assert x.shape == (N,) and np.isfinite(x).all()
    assert stats.kstest(x, law.cdf).statistic < KS_LIMIT


def test_double_sided_maxwell_is_a_signed_maxwell():
    x = np.asarray(tj.random.double_sided_maxwell(tj.random.key(3), 1.0, 2.0, (N,)), np.float64)
    y = (x - 1.0) / 2.0
    assert abs(np.mean(y > 0) - 0.5) < 0.02
    assert stats.kstest(np.abs(y), stats.maxwell().cdf).statistic < KS_LIMIT


def _frequencies_match(samples, values, probs):
    counts = np.array([(samples == v).sum() for v in values])
    assert counts.sum() == samples.size
    probs = np.asarray(probs)
    assert (counts[probs == 0] == 0).all()  # impossible values never drawn
    keep = probs > 0
    expected = probs[keep] / probs[keep].sum() * counts[keep].sum()
    assert stats.chisquare(counts[keep], expected).pvalue > 1e-3


def test_discrete_samplers_follow_their_law():
    k = tj.random.key(11)
    r = np.asarray(tj.random.randint(k, (N,), -2, 3))
    assert r.dtype == np.int32
    _frequencies_match(r, range(-2, 3), [0.2] * 5)
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    _frequencies_match(np.asarray(tj.random.categorical(k, logits, shape=(N,))), range(4),
                       [0.1, 0.2, 0.3, 0.4])  # fmt: skip
    g = np.asarray(tj.random.geometric(k, 0.4, (N,)))
    _frequencies_match(np.minimum(g, 8), range(1, 9), [*stats.geom(0.4).pmf(range(1, 8)),
                                                      stats.geom(0.4).sf(7)])  # fmt: skip
    s = np.asarray(tj.random.rademacher(k, (N,)))
    _frequencies_match(s, [-1, 1], [0.5, 0.5])
    c = np.asarray(tj.random.choice(k, 5, (N,), p=np.array([0.5, 0.0, 0.25, 0.125, 0.125])))
    _frequencies_match(c, range(5), [0.5, 0.0, 0.25, 0.125, 0.125])


def test_choice_without_replacement_is_a_permutation_prefix():
    pool = np.arange(10.0) * 3
    for seed in range(5):
        got = np.asarray(tj.random.choice(tj.random.key(seed), pool, (6,), replace=False))
        assert len(set(got.tolist())) == 6 and set(got.tolist()) <= set(pool.tolist())
    with pytest.raises(ValueError, match="larger sample"):
        tj.random.choice(tj.random.key(0), 3, (4,), replace=False)


def test_ball_points_are_uniform_in_the_ball():
    x = np.asarray(tj.random.ball(tj.random.key(5), 3, shape=(N,)), np.float64)
    r = np.linalg.norm(x, axis=-1)
    assert (r <= 1 + 1e-6).all()
    assert stats.kstest(r, lambda t: np.clip(t, 0, 1) ** 3).statistic < KS_LIMIT


def test_same_key_same_numbers_under_jit(device):
    def draws(key):
        return (tj.random.exponential(key, (5,)), tj.random.gumbel(key, (5,)),
                tj.random.laplace(key, (5,)), tj.random.randint(key, (5,), 0, 100),
                tj.random.categorical(key, np.zeros((2, 4))), tj.random.maxwell(key, (3,)),
                tj.random.choice(key, 6, (3,), replace=False),
                tj.random.triangular(key, 0.0, 0.3, 1.0, (4,)))  # fmt: skip

    key = tj.random.key(2024)
    for got, expected in zip(tj.jit(draws, device=device)(key), draws(key), strict=True):
        got = np.asarray(tj.device_get(got))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_key_helpers():
    key = tj.random.key(3)
    assert tj.random.clone(key) is key and tj.random.key_data(key) is key
    np.testing.assert_array_equal(tj.random.wrap_key_data(np.array([0, 3])), key)
    assert tj.random.key_impl(key) == "threefry2x32"
