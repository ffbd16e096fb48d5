"""Gamma variates and the samplers built from them: gamma, loggamma, random_gamma_p, beta,
dirichlet, chisquare, f, t. Imported into `tracejit.random`.

Gamma(a) draws use Marsaglia and Tsang's method ("A simple method for generating gamma
variables", ACM TOMS 2000) with a fixed number of proposal rounds drawn at once, the first
accepted one kept by a chain of `where`s, so the trace has a static shape and the same key
gives the same numbers under `jit`. A proposal is accepted with probability above 0.95 for
a >= 1, so all `_ROUNDS` rounds fail with probability below 0.05 ** 12 (about 2e-16); then
the last proposal is returned. a < 1 uses the boost Gamma(a) = Gamma(a + 1) * U ** (1 / a),
done in log space (`loggamma`) so tiny shapes do not underflow.

The draws are differentiable in `a` as in JAX, by implicit reparameterization: the sampler
runs on `stop_gradient(a)` and `implicit_log_gamma` (_random_gamma_grad.py) gives d(log x)/da
through the incomplete gamma function, so beta, dirichlet, chisquare, f, t and
generalized_normal, built from `loggamma`, are differentiable in their parameters too.
Gradients with respect to a scale applied afterwards (`scale * gamma(key, a)`) are exact.
Second derivatives in `a` take forward mode (`jacfwd(grad(f))`): the incomplete gamma series
runs in a `while_loop`, which reverse mode cannot differentiate (WhileLoopNotReversible).
"""

from __future__ import annotations

import numpy as np

from tracejit import _portable_math as pm
from tracejit import numpy as tnp
from tracejit._random_gamma_grad import implicit_log_gamma
from tracejit.ir import dtypes

_ROUNDS = 12


def _random():
    from tracejit import random

    return random


def _params(dtype, shape, *params):
    """The float dtype and the parameters as arrays of it broadcast to `shape` (default: the
    parameters' broadcast shape)."""
    dt = _random()._float_dtype(dtype)
    arrs = [tnp.astype(tnp.asarray(p), dt) for p in params]
    if shape is None:
        shape = tuple(np.broadcast_shapes(*[tnp.shape(p) for p in arrs]))
    shape = _random()._shape(shape)
    return dt, shape, [tnp.broadcast_to(p, shape) for p in arrs]


def first_accepted(accept, values):
    """values[r] at the first round r (axis 0) where `accept` holds; the last round's value
    where none does."""
    rounds = tnp.shape(values)[0]
    out = values[rounds - 1]
    for r in range(rounds - 2, -1, -1):
        out = tnp.where(accept[r], values[r], out)
    return out


def _log_standard_gamma(key, a):
    """log Gamma(a, 1) draws, one per element of the float array `a`."""
    dt, shape = a.dtype, tnp.shape(a)
    k_norm, k_unif, k_boost = _split3(key)
    boost = tnp.less(a, 1.0)
    d = tnp.subtract(tnp.where(boost, tnp.add(a, 1.0), a), 1.0 / 3.0)
    c = tnp.divide(1.0, tnp.sqrt(tnp.multiply(d, 9.0)))
    x = _random().normal(k_norm, (_ROUNDS,) + shape, dt)
    log_u = pm.log(_random().uniform(k_unif, (_ROUNDS,) + shape, dt, minval=np.finfo(dt).tiny))
    t = tnp.add(tnp.multiply(c, x), 1.0)
    v = tnp.multiply(tnp.multiply(t, t), t)
    ok = tnp.greater(v, 0.0)
    log_v = pm.log(tnp.where(ok, v, 1.0))
    bound = tnp.add(tnp.multiply(tnp.square(x), 0.5), tnp.multiply(d, tnp.add(
        tnp.subtract(1.0, tnp.where(ok, v, 1.0)), log_v)))  # fmt: skip
    accept = tnp.logical_and(ok, tnp.less(log_u, bound))
    out = tnp.add(first_accepted(accept, log_v), pm.log(d))
    ub = _random().uniform(k_boost, shape, dt, minval=np.finfo(dt).tiny)
    return tnp.add(out, tnp.where(boost, tnp.divide(pm.log(ub), a), 0.0))


def _split3(key):
    keys = _random().split(key, 3)
    return keys[0], keys[1], keys[2]


def loggamma(key, a, shape=None, dtype=np.float32):
    """log of Gamma(a, 1) draws, accurate for tiny `a` where the draws underflow.

    >>> import tracejit as tj
    >>> tj.random.loggamma(tj.random.key(0), 0.01, (3,)).shape
    (3,)
    """
    _, _, (a,) = _params(dtype, shape, a)
    draws = _log_standard_gamma(_random()._check_key(key), tnp.stop_gradient(a))
    return implicit_log_gamma(a, draws)


def gamma(key, a, shape=None, dtype=np.float32):
    """Gamma(a, 1) draws (shape parameter `a`, unit scale), as `jax.random.gamma`.

    >>> import tracejit as tj
    >>> bool((tj.random.gamma(tj.random.key(0), 2.5, (4,)) > 0).all())
    True
    """
    return pm.exp(loggamma(key, a, shape, dtype))


class _RandomGammaP:
    """`random_gamma_p.bind(key, a, log_space=False)`: Gamma(a, 1) draws of `a`'s shape and
    dtype (the primitive under jax.random.gamma; here a function with the same call)."""

    name = "random_gamma"

    def bind(self, key, a, *, log_space: bool = False):
        a = tnp.asarray(a)
        dt = a.dtype if dtypes.is_float(a.dtype) else np.float32
        out = loggamma(key, a, None, dt)
        return out if log_space else pm.exp(out)

    __call__ = bind

    def __repr__(self) -> str:
        return "random_gamma"


random_gamma_p = _RandomGammaP()


def chisquare(key, df, shape=None, dtype=np.float32):
    """Chi-square(df) draws: 2 Gamma(df / 2)."""
    _, shape, (df,) = _params(dtype, shape, df)
    return tnp.multiply(gamma(key, tnp.divide(df, 2.0), shape, dtype), 2.0)


def f(key, dfnum, dfden, shape=None, dtype=np.float32):
    """F(dfnum, dfden) draws: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    _, shape, (dfnum, dfden) = _params(dtype, shape, dfnum, dfden)
    k1, k2 = _random().split(key)
    num = tnp.divide(chisquare(k1, dfnum, shape, dtype), dfnum)
    return tnp.divide(num, tnp.divide(chisquare(k2, dfden, shape, dtype), dfden))


def t(key, df, shape=(), dtype=np.float32):
    """Student's t(df) draws: normal * sqrt(df / chi2(df))."""
    _, shape, (df,) = _params(dtype, shape, df)
    k1, k2 = _random().split(key)
    n = _random().normal(k1, shape, dtype)
    return tnp.multiply(n, tnp.sqrt(tnp.divide(df, chisquare(k2, df, shape, dtype))))


def beta(key, a, b, shape=None, dtype=np.float32):
    """Beta(a, b) draws: Ga / (Ga + Gb) from log-space gammas (stable for tiny a, b)."""
    _, shape, (a, b) = _params(dtype, shape, a, b)
    k1, k2 = _random().split(key)
    la, lb = loggamma(k1, a, shape, dtype), loggamma(k2, b, shape, dtype)
    m = tnp.maximum(la, lb)
    ga, gb = pm.exp(tnp.subtract(la, m)), pm.exp(tnp.subtract(lb, m))
    return tnp.divide(ga, tnp.add(ga, gb))


def dirichlet(key, alpha, shape=None, dtype=np.float32):
    """Dirichlet(alpha) draws over alpha's last axis: normalized log-space gammas.

    >>> import numpy as np, tracejit as tj
    >>> x = tj.random.dirichlet(tj.random.key(0), np.array([1.0, 2.0, 3.0]), (5,))
    >>> x.shape, bool(np.allclose(x.sum(-1), 1.0))
    ((5, 3), True)
    """
    alpha = tnp.asarray(alpha)
    k = tnp.shape(alpha)[-1]
    batch = tnp.shape(alpha)[:-1] if shape is None else _random()._shape(shape)
    lg = loggamma(key, alpha, tuple(batch) + (k,), dtype)
    lg = tnp.subtract(lg, tnp.max(lg, axis=-1, keepdims=True))
    g = pm.exp(lg)
    return tnp.divide(g, pm.sum_in_order(g, axis=-1, keepdims=True))


__all__ = ["beta", "chisquare", "dirichlet", "f", "gamma", "loggamma", "random_gamma_p", "t"]
