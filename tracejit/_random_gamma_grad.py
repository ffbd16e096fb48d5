"""The derivative of Gamma(a, 1) draws with respect to the shape `a`, by implicit
reparameterization (Figurnov, Mohamed and Mnih, "Implicit Reparameterization Gradients",
NeurIPS 2018), as `jax.random.gamma` differentiates its draws.

A draw x solves P(a, x) = u for a uniform u, with P the regularized lower incomplete gamma
function (`scipy.special.gammainc`), so along a fixed u

    dx/da = -(dP/da) / (dP/dx),    dP/dx = x ** (a - 1) exp(-x) / Gamma(a).

The rejection sampler does not compute x as a function of u, but x and the u it stands for
are a draw of the same law, and this is the derivative JAX returns. We work with log x (the
samplers draw in log space, so tiny shapes do not underflow) and return d(log x)/da:

- x < a + 1: P = x**a exp(-x) / Gamma(a + 1) * S with S = sum_n c_n, c_0 = 1,
  c_n = c_(n-1) x / (a + n). Then d(log x)/da = -(S (log x - digamma(a + 1)) + dS/da) / a,
  the prefactor x**a exp(-x) / Gamma(a + 1) cancelling against dP/dx.
- x >= a + 1: Q = 1 - P = x**a exp(-x) / Gamma(a) * C with C Legendre's continued fraction
  1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)); then
  d(log x)/da = C (log x - digamma(a)) + dC/da, with C and dC/da from the fraction's
  three-term recurrences, differentiated in forward mode and rescaled at every step.

Both run in float64 until every element has converged (a `while_loop`; about 8 sqrt(a) terms
for the series near the mode, fewer for the fraction), at most `_MAX_TERMS` rounds.

- a >= _LARGE_SHAPE: the quantile's Cornish-Fisher expansion (DiDonato and Morris, "Computation
  of the incomplete gamma function ratios and their inverse", ACM TOMS 12, 1986, eq. 31)

      x = a + s sqrt(a) + (s**2 - 1) / 3 + (s**3 - 7 s) / (36 sqrt(a))
          - (3 s**4 + 7 s**2 - 16) / (810 a) + (9 s**5 + 256 s**3 - 433 s) / (38880 a sqrt(a))

  with s the standard normal quantile of u, so that a fixed u is a fixed s: s is found from x
  by Newton's method on this polynomial, and dx/da is its derivative at fixed s. The dropped
  terms are O(a**-2) in x, O(a**-3) in dx/da: at a >= 5e6 the result is within a few ulps of
  a 50-digit quadrature of dP/da, out to u = 1e-300 and 1 - 1e-300 (where the series would need
  more than `_MAX_TERMS` terms).
"""

from __future__ import annotations

import numpy as np

from tracejit import lax
from tracejit import numpy as tnp
from tracejit.custom import custom_jvp

_MAX_TERMS = 20_000  # the series needs about 8 sqrt(a) terms: enough for a up to ~5e6
_TOL = 1e-13  # relative: above the rounding noise of the fraction's derivative recurrence
# Bernoulli terms of digamma's asymptotic series, B_2k / (2k), k = 1..5 (Abramowitz and
# Stegun 6.3.18); at y >= _SHIFT the next term is below 2e-14 of digamma(y)
_DIGAMMA_TERMS = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132)
_SHIFT = 10
_LARGE_SHAPE = 5e6  # from here on the Cornish-Fisher expansion (the series would be too long)
_NEWTON_STEPS = 5  # s from x: |s| <= 40 (u down to 1e-300) converges to ulps in 4


def _digamma(x):
    """digamma(x) for float64 x > 0: the asymptotic series at x + _SHIFT, less the
    recurrence terms 1 / (x + k)."""
    y = tnp.add(x, float(_SHIFT))
    inv2 = tnp.divide(1.0, tnp.square(y))
    poly = tnp.zeros_like(y)
    for coef in reversed(_DIGAMMA_TERMS):
        poly = tnp.multiply(tnp.add(poly, coef), inv2)
    out = tnp.subtract(tnp.subtract(tnp.log(y), tnp.divide(0.5, y)), poly)
    for k in range(_SHIFT):
        out = tnp.subtract(out, tnp.divide(1.0, tnp.add(x, float(k))))
    return out


def _unfinished(active, level, step, step_d, total, total_d):
    """Where `active` holds and the last step of `total * level + total_d` (the result, up to
    a factor) moved it by more than the tolerance; a bound on its size, not the result
    itself, is the scale, since the result may cross zero."""
    moved = tnp.abs(step * level) + tnp.abs(step_d)
    scale = tnp.abs(total * level) + tnp.abs(total_d)
    return tnp.logical_and(active, tnp.greater(moved, _TOL * scale))


def _series(a, x, level, active):
    """(S, dS/da) of the series above, summed where `active` (elsewhere x is 0: S = 1);
    `level` is the factor log x - digamma(a + 1) that multiplies S in the result."""
    x = tnp.where(active, x, 0.0)

    def cond(state):
        n, go = state[0], state[5]
        return tnp.logical_and(n < _MAX_TERMS, tnp.any(go))

    def body(state):
        n, c, dc, s, ds, _ = state
        an = a + n
        r = x / an
        dc, c = dc * r - c * r / an, c * r
        s, ds = s + c, ds + dc
        return n + 1.0, c, dc, s, ds, _unfinished(active, level, c, dc, s, ds)

    one, zero = tnp.ones_like(a), tnp.zeros_like(a)
    state = lax.while_loop(cond, body, (1.0, one, zero, one, zero, active))
    return state[3], state[4]


def _fraction(a, x, level, active):
    """(C, dC/da) of the continued fraction above where `active` (elsewhere x = a + 2);
    `level` is the factor log x - digamma(a) that multiplies C in the result."""
    x = tnp.where(active, x, a + 2.0)
    one, zero = tnp.ones_like(a), tnp.zeros_like(a)

    def cond(state):
        n, go = state[0], state[-1]
        return tnp.logical_and(n < _MAX_TERMS, tnp.any(go))

    def body(state):
        # numerators P, denominators Q two steps back (2) and one back (1), their
        # a-derivatives d*, all divided by the last Q so they neither overflow nor underflow
        n, p2, p1, q2, dp2, dp1, dq2, dq1, f, df, _ = state
        k = n - 1.0
        alpha = tnp.where(n == 1.0, one, -k * (k - a))
        d_alpha = tnp.where(n == 1.0, zero, k + zero)
        beta = x + 2.0 * n - 1.0 - a
        p, q = beta * p1 + alpha * p2, beta + alpha * q2
        dp = beta * dp1 - p1 + alpha * dp2 + d_alpha * p2
        dq = beta * dq1 - 1.0 + alpha * dq2 + d_alpha * q2
        p2, q2, dp2, dq2 = p1 / q, 1.0 / q, dp1 / q, dq1 / q
        p1, dp1, dq1 = p / q, dp / q, dq / q
        f_new, df_new = p1, dp1 - p1 * dq1
        go = _unfinished(active, level, f_new - f, df_new - df, f_new, df_new)
        return n + 1.0, p2, p1, q2, dp2, dp1, dq2, dq1, f_new, df_new, go

    init = (1.0, one, zero, zero, zero, zero, zero, zero, zero, zero, active)
    state = lax.while_loop(cond, body, init)
    return state[8], state[9]


# x - a = sum_k p_k(s) a ** ((1 - k) / 2): the expansion's polynomials in s, highest power first
_CORNISH_FISHER = tuple(
    np.array(c) / d
    for c, d in [
        ([1.0, 0.0], 1.0),
        ([1.0, 0.0, -1.0], 3.0),
        ([1.0, 0.0, -7.0, 0.0], 36.0),
        ([-3.0, 0.0, -7.0, 0.0, 16.0], 810.0),
        ([9.0, 0.0, 256.0, 0.0, -433.0, 0.0], 38880.0),
    ]
)


def _horner(coefs, s):
    out = tnp.zeros_like(s)
    for c in coefs:
        out = out * s + float(c)
    return out


def _cornish_fisher(a, x):
    """d(log x)/da for a >= _LARGE_SHAPE by the expansion in the module docstring."""
    powers = [tnp.power(a, (1.0 - k) / 2.0) for k in range(len(_CORNISH_FISHER))]
    d = x - a
    s = d / powers[0]
    for _ in range(_NEWTON_STEPS):  # solve x - a = sum_k p_k(s) a**((1 - k) / 2) for s
        x_of_s = sum(_horner(p, s) * w for p, w in zip(_CORNISH_FISHER, powers))
        slope = sum(_horner(np.polyder(p), s) * w for p, w in zip(_CORNISH_FISHER, powers))
        s = s - (x_of_s - d) / slope
    # at fixed s: dx/da = 1 + sum_k (1 - k) / 2 p_k(s) a**((-1 - k) / 2)
    dx_da = 1.0 + sum(
        _horner(p, s) * ((1.0 - k) / 2.0) * w / a
        for k, (p, w) in enumerate(zip(_CORNISH_FISHER, powers))
    )
    return dx_da / x


def dlog_gamma_da(a, log_x):
    """d(log x)/da for Gamma(a, 1) draws x = exp(log_x), in float64 (the implicit
    reparameterization derivative, see the module docstring)."""
    a, log_x = tnp.astype(a, np.float64), tnp.astype(log_x, np.float64)
    ok = tnp.logical_and(tnp.greater(a, 0.0), tnp.isfinite(log_x))
    ok = tnp.logical_and(ok, tnp.isfinite(a))
    a_safe = tnp.where(ok, a, 1.0)
    x = tnp.exp(tnp.where(ok, log_x, 0.0))
    use_fraction = tnp.greater_equal(x, a_safe + 1.0)
    large = tnp.greater_equal(a_safe, _LARGE_SHAPE)
    small = tnp.logical_and(ok, tnp.logical_not(large))
    log_x = tnp.where(ok, log_x, 0.0)
    level_series = log_x - _digamma(a_safe + 1.0)
    level_fraction = log_x - _digamma(a_safe)
    series_at = tnp.logical_and(small, tnp.logical_not(use_fraction))
    s, ds = _series(a_safe, x, level_series, series_at)
    c, dc = _fraction(a_safe, x, level_fraction, tnp.logical_and(small, use_fraction))
    by_series = -(s * level_series + ds) / a_safe
    by_fraction = c * level_fraction + dc
    by_expansion = _cornish_fisher(
        tnp.where(large, a_safe, _LARGE_SHAPE), tnp.where(large, x, _LARGE_SHAPE)
    )
    out = tnp.where(large, by_expansion, tnp.where(use_fraction, by_fraction, by_series))
    return tnp.where(ok, out, np.nan)


@custom_jvp
def implicit_log_gamma(a, log_x):
    """`log_x` (log Gamma(a, 1) draws, computed without a derivative), differentiable in
    `a` by implicit reparameterization."""
    return log_x


@implicit_log_gamma.defjvp
def _implicit_log_gamma_jvp(primals, tangents):
    a, log_x = primals
    da, d_log_x = tangents
    # the slope at the function's own output, so a higher derivative sees its implicit
    # tangent (log_x itself is a constant of a)
    out = implicit_log_gamma(a, log_x)
    slope = tnp.astype(dlog_gamma_da(a, out), out.dtype)
    return out, tnp.add(tnp.multiply(slope, da), d_log_x)
