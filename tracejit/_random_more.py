"""The rest of jax.random's samplers: truncated_normal (inverse CDF), multivariate_normal
(cholesky, eigh or svd factor), orthogonal (QR of a normal matrix, Mezzadri's sign fix),
generalized_normal (from gamma), poisson and binomial (inversion for small means, Hormann's
transformed rejection PTRS / BTRS for large ones, with a fixed number of rounds), multinomial
(conditional binomials), key_dtype. Imported into `tracejit.random`.

Discrete samplers return integers (poisson) or whole floats (binomial, multinomial, as JAX):
they have no gradient.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit import _portable_linalg as portable_linalg
from tracejit import _portable_math as pm
from tracejit import numpy as tnp
from tracejit._portable_erf import erf, erfinv
from tracejit._random_gamma import _params, _random, first_accepted, gamma
from tracejit.errors import TracejitValueError
from tracejit.ir import dtypes

_ROUNDS = 16  # rejection rounds: PTRS/BTRS accept above 0.85 per round, so all fail < 1e-13
_INVERSION_TERMS = 48  # inversion below mean 10: P(X >= 48) < 1e-18


def _keys(key, n: int):
    keys = _random().split(key, n)
    return [keys[i] for i in range(n)]


def key_dtype(impl=None):
    """The dtype of a key array: keys here are int64 arrays of shape (2,) (threefry2x32)."""
    return np.dtype(np.int64)


# ---------------------------------------------------------------- continuous


def truncated_normal(key, lower, upper, shape=None, dtype=np.float32):
    """Standard normal draws conditioned on (lower, upper), by the inverse CDF; differentiable
    in `lower` and `upper`.

    >>> import tracejit as tj
    >>> x = tj.random.truncated_normal(tj.random.key(0), -1.0, 2.0, (1000,))
    >>> bool((x >= -1).all() and (x <= 2).all())
    True
    """
    dt = _random()._float_dtype(dtype)
    lo, hi = (tnp.astype(tnp.asarray(p), dt) for p in (lower, upper))
    if shape is None:
        shape = tuple(np.broadcast_shapes(tnp.shape(lo), tnp.shape(hi)))
    shape = _random()._shape(shape)
    s2 = math.sqrt(2.0)
    # erf and the open bounds on the parameters, before they broadcast to the draws' shape
    a, b = erf(tnp.divide(lo, s2)), erf(tnp.divide(hi, s2))
    above, below = pm.next_toward(lo, up=True), pm.next_toward(hi, up=False)
    u = _random().uniform(key, shape, dt)
    y = tnp.add(a, tnp.multiply(u, tnp.subtract(b, a)))
    eps = np.finfo(dt).eps
    y = tnp.clip(y, -1.0 + eps, 1.0 - eps)
    x = tnp.multiply(erfinv(y), s2)
    return tnp.clip(x, above, below)  # open, as JAX


def generalized_normal(key, p, shape=(), dtype=np.float32):
    """Draws with density proportional to exp(-|x| ** p): sign * Gamma(1 / p) ** (1 / p)."""
    _, shape, (p,) = _params(dtype, shape, p)
    k1, k2 = _keys(key, 2)
    g = gamma(k1, tnp.divide(1.0, p), shape, dtype)
    sign = tnp.astype(_random().rademacher(k2, shape), g.dtype)
    return tnp.multiply(sign, pm.power(g, tnp.divide(1.0, p)))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Normal draws with `mean` (..., n) and covariance `cov` (..., n, n): mean + factor @ z,
    the factor from `cholesky`, `eigh` or `svd` of cov.

    >>> import numpy as np, tracejit as tj
    >>> tj.random.multivariate_normal(tj.random.key(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    if method not in ("cholesky", "eigh", "svd"):
        raise TracejitValueError(f"multivariate_normal: method must be cholesky, eigh or svd, got "
                                 f"{method!r}")  # fmt: skip
    mean, cov = tnp.asarray(mean), tnp.asarray(cov)
    dt = dtype if dtype is not None else (mean.dtype if dtypes.is_float(mean.dtype) else np.float32)
    dt = _random()._float_dtype(dt)
    mean, cov = tnp.astype(mean, dt), tnp.astype(cov, dt)
    n = tnp.shape(mean)[-1]
    if tnp.shape(cov)[-2:] != (n, n):
        raise TracejitValueError(f"multivariate_normal: cov of shape {tnp.shape(cov)} for a mean "
                                 f"of size {n}")  # fmt: skip
    if shape is None:
        shape = np.broadcast_shapes(tnp.shape(mean)[:-1], tnp.shape(cov)[:-2])
    if method == "cholesky":  # the same bits on every path (_portable_linalg.py)
        factor = portable_linalg.cholesky(cov)
    elif method == "eigh":
        w, v = tnp.linalg.eigh(cov)
        factor = tnp.multiply(v, tnp.sqrt(tnp.maximum(w, 0.0))[..., None, :])
    else:
        u, s, _ = tnp.linalg.svd(cov)
        factor = tnp.multiply(u, tnp.sqrt(s)[..., None, :])
    z = _random().normal(key, tuple(_random()._shape(shape)) + (n,), dt)
    return tnp.add(mean, pm.sum_in_order(tnp.multiply(factor, z[..., None, :]), axis=-1))


def orthogonal(key, n: int, shape=(), dtype=np.float32, m=None):
    """Haar-distributed (n, m) matrices with orthonormal columns (rows when m > n): the Q of
    the QR of a normal matrix whose R has a positive diagonal (Mezzadri, 2007), by
    Gram-Schmidt (_portable_linalg.py), the same bits eagerly, compiled and on a GPU."""
    m = int(n) if m is None else int(m)
    shape = tuple(_random()._shape(shape))
    z = _random().normal(key, shape + (int(n), m), dtype)
    if m > n:
        return tnp.swapaxes(orthogonal(key, m, shape, dtype, int(n)), -1, -2)
    return portable_linalg.gram_schmidt_q(z)  # R's diagonal positive: Haar; the same bits


# ---------------------------------------------------------------- discrete


def _lgamma(x):
    """log Gamma(x) for x >= 1 (float64): Stirling's series at x + 6 (error < 1e-9) less
    log(x (x + 1) ... (x + 5))."""
    y = tnp.add(x, 6.0)
    inv, inv2 = tnp.divide(1.0, y), tnp.divide(1.0, tnp.square(y))
    series = tnp.multiply(inv, tnp.add(1 / 12, tnp.multiply(inv2, tnp.add(
        -1 / 360, tnp.multiply(inv2, 1 / 1260)))))  # fmt: skip
    out = tnp.add(tnp.subtract(tnp.multiply(tnp.subtract(y, 0.5), pm.log(y)), y),
                  0.5 * math.log(2 * math.pi))  # fmt: skip
    prod = x
    for i in range(1, 6):
        prod = tnp.multiply(prod, tnp.add(x, float(i)))
    return tnp.subtract(tnp.add(out, series), pm.log(prod))


def _inversion(u, first, ratio):
    """The count of k in [0, terms) with u > cdf(k), pmf(0) = first, pmf(k) = pmf(k-1) *
    ratio(k)."""
    pmf, cdf = first, first
    count = tnp.zeros_like(u)
    for k in range(1, _INVERSION_TERMS):
        count = tnp.add(count, tnp.astype(tnp.greater(u, cdf), u.dtype))
        pmf = tnp.multiply(pmf, ratio(float(k)))
        cdf = tnp.add(cdf, pmf)
    return count


def _rounds(key, shape):
    """(U - 1/2, V) for the rejection rounds: two (_ROUNDS, *shape) float64 uniforms."""
    k1, k2 = _keys(key, 2)
    u = tnp.subtract(_random().uniform(k1, (_ROUNDS,) + shape, np.float64), 0.5)
    v = _random().uniform(k2, (_ROUNDS,) + shape, np.float64, minval=np.finfo(np.float64).tiny)
    return u, v, tnp.subtract(0.5, tnp.absolute(u))


def _ptrs(key, lam, shape):
    """Hormann's PTRS for Poisson(lam), lam >= 10."""
    slam, loglam = tnp.sqrt(lam), pm.log(lam)
    b = tnp.add(tnp.multiply(slam, 2.53), 0.931)
    a = tnp.add(tnp.multiply(b, 0.02483), -0.059)
    inv_alpha = tnp.add(tnp.divide(1.1328, tnp.subtract(b, 3.4)), 1.1239)
    vr = tnp.subtract(0.9277, tnp.divide(3.6224, tnp.subtract(b, 2.0)))
    u, v, us = _rounds(key, shape)
    k = tnp.floor(tnp.add(tnp.multiply(tnp.add(tnp.divide(tnp.multiply(a, 2.0), us), b), u),
                          tnp.add(lam, 0.43)))  # fmt: skip
    quick = tnp.logical_and(tnp.greater_equal(us, 0.07), tnp.less_equal(v, vr))
    bad = tnp.logical_or(tnp.less(k, 0.0), tnp.logical_and(tnp.less(us, 0.013), tnp.greater(v, us)))
    lhs = tnp.add(pm.log(v), tnp.subtract(pm.log(inv_alpha),
                                          pm.log(tnp.add(tnp.divide(a, tnp.square(us)), b))))  # fmt: skip
    kk = tnp.maximum(k, 0.0)
    rhs = tnp.subtract(tnp.subtract(tnp.multiply(kk, loglam), lam), _lgamma(tnp.add(kk, 1.0)))
    accept = tnp.logical_or(quick, tnp.logical_and(tnp.logical_not(bad), tnp.less_equal(lhs, rhs)))
    return first_accepted(accept, k)


def poisson(key, lam, shape=None, dtype=np.int32):
    """Poisson(lam) draws: inversion for lam < 10, transformed rejection (PTRS) above.

    >>> import tracejit as tj
    >>> tj.random.poisson(tj.random.key(0), 3.0, (4,)).dtype
    dtype('int32')
    """
    _, shape, (lam,) = _params(np.float64, shape, lam)
    k1, k2 = _keys(key, 2)
    small = tnp.less(lam, 10.0)
    lam_small, lam_big = tnp.where(small, lam, 1.0), tnp.where(small, 10.0, lam)
    u = _random().uniform(k1, shape, np.float64)
    inv = _inversion(u, pm.exp(tnp.negative(lam_small)), lambda k: tnp.divide(lam_small, k))
    out = tnp.where(small, inv, _ptrs(k2, lam_big, shape))
    return tnp.astype(tnp.where(tnp.equal(lam, 0.0), 0.0, out), dtype)


def _btrs(key, n, q, shape):
    """Hormann's BTRS for Binomial(n, q), q <= 1/2 and n q >= 10."""
    spq = tnp.sqrt(tnp.multiply(tnp.multiply(n, q), tnp.subtract(1.0, q)))
    b = tnp.add(tnp.multiply(spq, 2.53), 1.15)
    a = tnp.add(tnp.add(tnp.multiply(b, 0.0248), tnp.multiply(q, 0.01)), -0.0873)
    c = tnp.add(tnp.multiply(n, q), 0.5)
    vr = tnp.subtract(0.92, tnp.divide(4.2, b))
    alpha = tnp.multiply(tnp.add(tnp.divide(5.1, b), 2.83), spq)
    lpq = pm.log(tnp.divide(q, tnp.subtract(1.0, q)))
    m = tnp.floor(tnp.multiply(tnp.add(n, 1.0), q))
    h = tnp.add(_lgamma(tnp.add(m, 1.0)), _lgamma(tnp.add(tnp.subtract(n, m), 1.0)))
    u, v, us = _rounds(key, shape)
    k = tnp.floor(tnp.add(tnp.multiply(tnp.add(tnp.divide(tnp.multiply(a, 2.0), us), b), u), c))
    quick = tnp.logical_and(tnp.greater_equal(us, 0.07), tnp.less_equal(v, vr))
    bad = tnp.logical_or(tnp.less(k, 0.0), tnp.greater(k, n))
    kk = tnp.clip(k, 0.0, n)
    lhs = pm.log(tnp.multiply(v, tnp.divide(alpha, tnp.add(tnp.divide(a, tnp.square(us)), b))))
    rhs = tnp.add(tnp.subtract(tnp.subtract(h, _lgamma(tnp.add(kk, 1.0))),
                               _lgamma(tnp.add(tnp.subtract(n, kk), 1.0))),
                  tnp.multiply(tnp.subtract(kk, m), lpq))  # fmt: skip
    accept = tnp.logical_or(quick, tnp.logical_and(tnp.logical_not(bad), tnp.less_equal(lhs, rhs)))
    return first_accepted(accept, kk)


def binomial(key, n, p, shape=None, dtype=np.float32):
    """Binomial(n, p) draws (as whole floats, like JAX): inversion for n min(p, 1-p) < 10,
    transformed rejection (BTRS) above, by symmetry on min(p, 1 - p).

    >>> import tracejit as tj
    >>> x = tj.random.binomial(tj.random.key(0), 20, 0.3, (1000,))
    >>> bool((x >= 0).all() and (x <= 20).all())
    True
    """
    _, shape, (n, p) = _params(np.float64, shape, n, p)
    k1, k2 = _keys(key, 2)
    flip = tnp.greater(p, 0.5)
    q = tnp.where(flip, tnp.subtract(1.0, p), p)
    small = tnp.less(tnp.multiply(n, q), 10.0)
    qs = tnp.where(small, q, 0.0)
    u = _random().uniform(k1, shape, np.float64)
    odds = tnp.divide(qs, tnp.subtract(1.0, qs))
    first = pm.exp(tnp.multiply(n, pm.log1p(tnp.negative(qs))))
    inv = _inversion(u, first, lambda k: tnp.multiply(tnp.divide(tnp.maximum(
        tnp.subtract(n, k - 1.0), 0.0), k), odds))  # fmt: skip
    nb, qb = tnp.where(small, 100.0, n), tnp.where(small, 0.25, q)
    k = tnp.where(small, tnp.minimum(inv, n), _btrs(k2, nb, qb, shape))
    k = tnp.where(flip, tnp.subtract(n, k), k)
    return tnp.astype(k, _random()._float_dtype(dtype))


def multinomial(key, n, p, shape=None, dtype=np.float32, unroll=None):
    """Counts over p's last axis of `n` draws from the categories with probabilities `p`:
    one binomial per category, conditioned on the counts before it (as JAX).

    >>> import numpy as np, tracejit as tj
    >>> c = tj.random.multinomial(tj.random.key(0), 10, np.array([0.2, 0.3, 0.5]))
    >>> float(c.sum())
    10.0
    """
    p = tnp.astype(tnp.asarray(p), np.float64)
    k = tnp.shape(p)[-1]
    batch = np.broadcast_shapes(tnp.shape(n), tnp.shape(p)[:-1]) if shape is None else shape
    batch = tuple(_random()._shape(batch))
    left = tnp.broadcast_to(tnp.astype(tnp.asarray(n), np.float64), batch)
    rest = tnp.broadcast_to(pm.sum_in_order(p, axis=-1), batch)
    counts = []
    for i, ki in enumerate(_keys(key, k)):
        pi = tnp.broadcast_to(p[..., i], batch)
        if i == k - 1:
            c = left
        else:
            frac = tnp.clip(tnp.divide(pi, tnp.where(tnp.greater(rest, 0.0), rest, 1.0)), 0.0, 1.0)
            c = binomial(ki, left, frac, batch, np.float64)
        counts.append(c)
        left, rest = tnp.subtract(left, c), tnp.subtract(rest, pi)
    return tnp.astype(tnp.stack(counts, axis=-1), _random()._float_dtype(dtype))


__all__ = ["binomial", "generalized_normal", "key_dtype", "multinomial", "multivariate_normal",
           "orthogonal", "poisson", "truncated_normal"]  # fmt: skip
