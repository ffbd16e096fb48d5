"""More of jax.random's samplers, each a transformation of `uniform`/`normal`/`bits` draws.

Imported into `tracejit.random`. Inverse-CDF formulas where one exists (exponential, gumbel,
laplace, logistic, cauchy, pareto, rayleigh, weibull_min, triangular, geometric), sums of
normals (maxwell), Gumbel-max for `categorical`. Like the rest of tracejit.random, the same key
gives the same numbers inside and outside `jit` and on every device. The gamma family is in
_random_gamma.py; poisson, binomial, truncated_normal, the decompositions in _random_more.py.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit import _portable_math as pm
from tracejit import numpy as tnp
from tracejit._public import defined_here
from tracejit._random_gamma import _random
from tracejit.errors import TracejitValueError, UnsupportedError
from tracejit.ir import dtypes


def _u(key, shape, dtype, lo=0.0):
    """Uniform draws in (lo, 1): never exactly 0, so logs stay finite."""
    dt = np.dtype(dtype)
    return _random().uniform(key, shape, dt, minval=np.finfo(dt).tiny if lo == 0 else lo)


def _cast(dtype, *params):
    """The parameters as arrays of the draws' float `dtype`, as JAX converts them: a float64
    parameter (or `1.0 / concentration` of Python floats) would promote float32 draws."""
    dt = _random()._float_dtype(dtype)
    return [tnp.astype(tnp.asarray(p), dt) for p in params]


def _shape(shape, *params):
    if shape is not None:
        return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return tuple(np.broadcast_shapes(*[tnp.shape(p) for p in params]))


def exponential(key, shape=(), dtype=np.float32):
    """Exponential(1) draws: -log(1 - u).

    >>> import tracejit as tj
    >>> tj.random.exponential(tj.random.key(0), (3,)).shape
    (3,)
    """
    return tnp.negative(pm.log1p(tnp.negative(_random().uniform(key, shape, dtype))))


def gumbel(key, shape=(), dtype=np.float32):
    """Standard Gumbel draws: -log(-log(u))."""
    return tnp.negative(pm.log(tnp.negative(pm.log(_u(key, shape, dtype)))))


def laplace(key, shape=(), dtype=np.float32):
    """Standard Laplace draws (inverse CDF on u in (-1, 1))."""
    u = _random().uniform(key, shape, dtype, minval=-1.0 + np.finfo(np.dtype(dtype)).eps)
    return tnp.multiply(tnp.negative(tnp.sign(u)), pm.log1p(tnp.negative(tnp.absolute(u))))


def logistic(key, shape=(), dtype=np.float32):
    """Standard logistic draws: log(u / (1 - u))."""
    u = _u(key, shape, dtype)
    return tnp.subtract(pm.log(u), pm.log1p(tnp.negative(u)))


def cauchy(key, shape=(), dtype=np.float32):
    """Standard Cauchy draws: tan(pi (u - 1/2))."""
    u = _u(key, shape, dtype)
    return pm.tanpi(tnp.subtract(u, 0.5))


def lognormal(key, sigma=1.0, shape=None, dtype=np.float32):
    """exp(sigma * normal)."""
    (sigma,) = _cast(dtype, sigma)
    return pm.exp(tnp.multiply(_random().normal(key, _shape(shape, sigma), dtype), sigma))


def pareto(key, b, shape=None, dtype=np.float32):
    """Pareto(b) draws on [1, inf): exp(exponential / b)."""
    (b,) = _cast(dtype, b)
    return pm.exp(tnp.divide(exponential(key, _shape(shape, b), dtype), b))


def rayleigh(key, scale=1.0, shape=None, dtype=np.float32):
    """Rayleigh draws: scale * sqrt(-2 log u)."""
    (scale,) = _cast(dtype, scale)
    u = _u(key, _shape(shape, scale), dtype)
    return tnp.multiply(tnp.sqrt(tnp.multiply(pm.log(u), -2.0)), scale)


def weibull_min(key, scale, concentration, shape=(), dtype=np.float32):
    """Weibull draws: scale * (-log(1 - u)) ** (1 / concentration).

    >>> import numpy as np, tracejit as tj
    >>> tj.random.weibull_min(tj.random.key(0), 1.0, 2.0, (3,), dtype=np.float32).dtype
    dtype('float32')
    """
    scale, concentration = _cast(dtype, scale, concentration)
    e = exponential(key, _shape(shape, scale, concentration), dtype)
    return tnp.multiply(pm.power(e, tnp.divide(1.0, concentration)), scale)


def maxwell(key, shape=(), dtype=np.float32):
    """Maxwell draws: the norm of three standard normals."""
    shape = _shape(shape)
    n = _random().normal(key, shape + (3,), dtype)
    return tnp.sqrt(pm.sum_in_order(tnp.multiply(n, n), axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=np.float32):
    """loc + scale * (random sign) * maxwell."""
    k1, k2 = _random().split(key)
    loc, scale = _cast(dtype, loc, scale)
    shape = _shape(shape, loc, scale)
    m = maxwell(k1, shape, dtype)
    return tnp.add(tnp.multiply(tnp.multiply(m, rademacher(k2, shape, dtype)), scale), loc)


def rademacher(key, shape=(), dtype=np.int32):
    """+1 or -1 with equal probability."""
    b = _random().bernoulli(key, 0.5, _shape(shape))
    return tnp.astype(tnp.subtract(tnp.multiply(tnp.astype(b, np.int32), 2), 1), dtype)


def triangular(key, left, mode, right, shape=None, dtype=np.float32):
    """Triangular(left, mode, right) draws by the inverse CDF."""
    left, mode, right = _cast(dtype, left, mode, right)
    u = _random().uniform(key, _shape(shape, left, mode, right), dtype)
    width = tnp.subtract(right, left)
    cut = tnp.divide(tnp.subtract(mode, left), width)
    low = tnp.add(left, tnp.sqrt(tnp.multiply(u, tnp.multiply(width, tnp.subtract(mode, left)))))
    high = tnp.subtract(right, tnp.sqrt(tnp.multiply(tnp.subtract(1.0, u),
                                                     tnp.multiply(width, tnp.subtract(right, mode)))))  # fmt: skip
    return tnp.astype(tnp.where(tnp.less(u, cut), low, high), dtype)


def geometric(key, p, shape=None, dtype=np.int32):
    """The number of Bernoulli(p) trials up to the first success (support 1, 2, ...)."""
    u = _u(key, _shape(shape, p), np.float64)
    k = tnp.floor(
        tnp.divide(pm.log(u), pm.log1p(tnp.negative(tnp.astype(tnp.asarray(p), np.float64))))
    )
    return tnp.astype(tnp.add(k, 1.0), dtype)


def randint(key, shape, minval, maxval, dtype=np.int32):
    """Integers in [minval, maxval) (a float64 uniform scaled: bias below 2**-21 for spans
    up to 2**32).

    >>> import tracejit as tj
    >>> x = tj.random.randint(tj.random.key(1), (1000,), 3, 7)
    >>> int(x.min()), int(x.max())
    (3, 6)
    """
    dt = dtypes.canonical(dtype)
    lo = tnp.astype(tnp.asarray(minval), np.float64)
    hi = tnp.astype(tnp.asarray(maxval), np.float64)
    u = _random().uniform(key, _shape(shape), np.float64)
    k = tnp.floor(tnp.add(tnp.multiply(u, tnp.subtract(hi, lo)), lo))
    return tnp.astype(tnp.clip(k, lo, tnp.maximum(tnp.subtract(hi, 1.0), lo)), dt)


def categorical(key, logits, axis: int = -1, shape=None):
    """Indices drawn with probabilities softmax(logits) along `axis` (Gumbel-max).

    >>> import numpy as np, tracejit as tj
    >>> int(tj.random.categorical(tj.random.key(0), np.array([0.0, -np.inf, 50.0])))
    2
    """
    logits = tnp.asarray(logits)
    batch = tnp.shape(tnp.sum(logits, axis=axis))
    shape = batch if shape is None else tuple(shape)
    ax = axis % tnp.ndim(logits)
    moved = tnp.moveaxis(logits, ax, -1)
    n = tnp.shape(moved)[-1]
    dt = logits.dtype if dtypes.is_float(logits.dtype) else np.float32
    g = gumbel(key, shape + (n,), dt)
    return tnp.argmax(tnp.add(g, moved), axis=-1)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0):
    """Draws from `a` (an int n means range(n)): with replacement (uniform or weights `p`)
    or without (the first entries of a random permutation, found by ranking random keys).

    >>> import tracejit as tj
    >>> tj.random.choice(tj.random.key(0), 5, (3,), replace=False).shape
    (3,)
    """
    shape = _shape(shape)
    pool = None if np.ndim(a) == 0 and not isinstance(a, tnp.ndarray) else tnp.asarray(a)
    n = int(a) if pool is None else tnp.shape(pool)[axis]
    count = math.prod(shape)
    if replace:
        if p is None:
            idx = randint(key, shape, 0, n, np.int64)
        else:
            logp = pm.log(tnp.asarray(p))
            idx = categorical(key, logp, shape=shape)
    else:
        if count > n:
            raise TracejitValueError(
                "cannot take a larger sample than the population without replacement"
            )
        if p is not None:
            keys = tnp.divide(pm.log(_u(key, (n,), np.float64)), tnp.asarray(p, np.float64))
        else:
            keys = _random().uniform(key, (n,), np.float64)
        idx = tnp.reshape(tnp.argsort(tnp.negative(keys))[:count], shape)
    return idx if pool is None else tnp.take(pool, idx, axis=axis)


def wald(key, mean, shape=None, dtype=np.float32):
    """Wald (inverse Gaussian, scale 1) draws by Michael, Schucany and Haas's method."""
    k1, k2 = _random().split(key)
    shape = _shape(shape, mean)
    y = tnp.square(_random().normal(k1, shape, dtype))
    mu = tnp.astype(tnp.asarray(mean), dtype)
    x = tnp.add(mu, tnp.subtract(tnp.divide(tnp.multiply(tnp.square(mu), y), 2.0), tnp.multiply(
        tnp.divide(mu, 2.0), tnp.sqrt(tnp.add(tnp.multiply(tnp.multiply(mu, y), 4.0),
                                              tnp.square(tnp.multiply(mu, y)))))))  # fmt: skip
    u = _random().uniform(k2, shape, dtype)
    return tnp.where(tnp.less_equal(u, tnp.divide(mu, tnp.add(mu, x))), x,
                     tnp.divide(tnp.square(mu), x))  # fmt: skip


def ball(key, d: int, p: float = 2, shape=(), dtype=np.float32):
    """Points uniform in the d-dimensional unit p-ball (p = 2: a normal direction scaled by
    u ** (1 / d))."""
    if p != 2:
        raise UnsupportedError("ball: only p=2 (it needs generalized_normal otherwise)")
    k1, k2 = _random().split(key)
    shape = _shape(shape)
    g = _random().normal(k1, shape + (int(d),), dtype)
    r = pm.power(_random().uniform(k2, shape + (1,), dtype), 1.0 / int(d))
    norm = tnp.sqrt(pm.sum_in_order(tnp.multiply(g, g), axis=-1, keepdims=True))
    return tnp.multiply(tnp.divide(g, norm), r)


def clone(key):
    """The key itself (keys are immutable arrays here)."""
    return key


def key_data(keys):
    """The raw uint32 words of a key: here the key array itself."""
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """A key from its raw words: here the array itself."""
    return tnp.asarray(key_bits_array)


def key_impl(keys) -> str:
    """The PRNG implementation's name."""
    return "threefry2x32"


__all__ = defined_here(globals())  # noqa: PLE0605
