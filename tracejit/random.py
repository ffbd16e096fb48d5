"""tracejit.random: a functional, counter-based PRNG (Threefry-2x32, as in JAX).

A key is an int64 array of shape (2,) holding two 32-bit words. Nothing is stateful: the same
key always gives the same numbers, on every backend and whether or not the code is traced, so
a function of a key is pure and can be jitted and differentiated. Split a key to get
independent streams:

>>> import tracejit as tj
>>> key = tj.random.key(0)
>>> k1, k2 = tj.random.split(key)
>>> tj.random.uniform(k1, (2,)).dtype
dtype('float32')

The one primitive is `threefry2x32(key, counts)` (tracejit/ir/prng.py): the 20-round
Threefry-2x32 block cipher of Salmon et al. (SC'11, "Parallel random numbers: as easy as
1, 2, 3") applied to counters.
Float dtypes default to float32, as in `jax.random`.
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from tracejit import _portable_math as pm
from tracejit import numpy as tnp
from tracejit.errors import TracejitTypeError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.prng import MASK32 as _MASK32
from tracejit.ir.prng import threefry2x32_p
from tracejit.ir.threefry import block as threefry2x32_block
from tracejit.numpy._core import cast, innermost_trace, promote, shape_of
from tracejit.numpy._creation import _filled
from tracejit.tracer.core import Tracer, bind

_I64 = np.dtype(np.int64)


# ---------------------------------------------------------------- keys


def _check_key(key):
    if isinstance(key, Tracer):
        ok = key.shape == (2,) and dtypes.is_int(key.dtype)
    else:
        key = np.asarray(key)
        ok = key.shape == (2,) and key.dtype.kind in "iu"
    if not ok:
        raise TracejitTypeError(
            f"expected a PRNG key (an integer array of shape (2,)), got {getattr(key, 'dtype', '')}"
            f"{tuple(shape_of(key))}; make one with tj.random.key(seed), and pass one row "
            "of tj.random.split(key, n) at a time"
        )
    return key


def _iota(n: int, like):
    trace = innermost_trace([like])
    if trace is None:
        return np.arange(n, dtype=np.int64)
    return bind("iota", shape=(n,), dtype=_I64, axis=0) if n else np.zeros(0, np.int64)


def _bits(key, n: int):
    """`n` random 32-bit words (int64 values in [0, 2**32)) from `key`."""
    key = _check_key(key)
    return bind(threefry2x32_p, key, _iota(n, key))


def key(seed) -> np.ndarray:
    """A PRNG key from an integer seed: the words (seed >> 32, seed & 0xFFFFFFFF).

    >>> import tracejit as tj
    >>> tj.random.key(42)
    array([ 0, 42])
    """
    if isinstance(seed, Tracer):
        (s,) = promote(seed)
        s = cast(s, _I64)
        return _words(s)
    seed = int(seed)
    return np.array([(seed >> 32) & _MASK32, seed & _MASK32], dtype=np.int64)


def _words(s):
    hi = tnp.bitwise_and(tnp.right_shift(s, 32), _MASK32)
    lo = tnp.bitwise_and(s, _MASK32)
    return bind(
        "concatenate", bind("reshape", hi, shape=(1,)), bind("reshape", lo, shape=(1,)), axis=0
    )


PRNGKey = key


def split(key, num: int = 2):
    """`num` new independent keys from `key`, as an array of shape (num, 2).

    >>> import tracejit as tj
    >>> tj.random.split(tj.random.key(0), 3).shape
    (3, 2)
    """
    num = int(num)
    return bind("reshape", _bits(key, 2 * num), shape=(num, 2))


def fold_in(key, data: int):
    """A new key from `key` and an integer (e.g. a step number), as `jax.random.fold_in`."""
    k = _check_key(key)
    words = np.array([(int(data) >> 32) & _MASK32, int(data) & _MASK32], np.int64)
    return bind(threefry2x32_p, k, words)


def bits(key, shape=()) -> np.ndarray:
    """Random 32-bit words of `shape`, as int64 values in [0, 2**32)."""
    shape = _shape(shape)
    return bind("reshape", _bits(key, math.prod(shape)), shape=shape)


# ---------------------------------------------------------------- distributions


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _float_dtype(dtype) -> np.dtype:
    dt = dtypes.canonical(dtype)
    if not dtypes.is_float(dt):
        raise TracejitTypeError(f"expected a float dtype, got {dt}")
    return dt


def _full(value, dtype, like):
    return _filled(shape_of(like), value, dtype, innermost_trace([like]))


def _unit_interval(key, shape: tuple[int, ...], dtype: np.dtype):
    """Uniform floats in [0, 1) with every mantissa bit random: 24 bits for float32 (11 for
    float16, 8 for bfloat16) and 53 bits for float64 (two words), scaled exactly by a power
    of two."""
    n = math.prod(shape)
    precision = dtypes.finfo(dtype).nmant + 1
    if precision <= 24:
        words = _bits(key, n)
        top = bind("shr", words, _full(32 - precision, _I64, words))
        u = bind("mul", cast(top, dtype), _full(2.0**-precision, dtype, top))
    else:
        words = _bits(key, 2 * n)
        hi = bind("slice", words, starts=(0,), stops=(n,), steps=(1,))
        lo = bind("slice", words, starts=(n,), stops=(2 * n,), steps=(1,))
        hi = cast(bind("shr", hi, _full(5, _I64, hi)), dtype)
        lo = cast(bind("shr", lo, _full(6, _I64, lo)), dtype)
        u = bind("add", bind("mul", hi, _full(2.0**26, dtype, hi)), lo)
        u = bind("mul", u, _full(2.0**-53, dtype, u))
    return bind("reshape", u, shape=shape)


def _is_scalar(x, value: float) -> bool:
    """Whether `x` is a concrete scalar equal to `value` (False for tracers and arrays)."""
    return not isinstance(x, Tracer) and np.ndim(x) == 0 and bool(x == value)


def uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval).

    >>> import tracejit as tj
    >>> x = tj.random.uniform(tj.random.key(0), (1000,))
    >>> bool((x >= 0).all() and (x < 1).all())
    True
    """
    dt = _float_dtype(dtype)
    u = _unit_interval(key, _shape(shape), dt)
    if _is_scalar(minval, 0.0) and _is_scalar(maxval, 1.0):
        return u
    lo, hi = tnp.asarray(minval, dt), tnp.asarray(maxval, dt)  # traced bounds differentiate
    return tnp.maximum(tnp.add(tnp.multiply(u, tnp.subtract(hi, lo)), lo), lo)


def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats (Box–Muller on two independent uniform streams).

    >>> import tracejit as tj
    >>> tj.random.normal(tj.random.key(0), (2, 3)).shape
    (2, 3)
    """
    dt = _float_dtype(dtype)
    shape = _shape(shape)
    keys = split(key, 2)
    k1 = bind("reshape", bind("slice", keys, starts=(0, 0), stops=(1, 2), steps=(1, 1)), shape=(2,))
    k2 = bind("reshape", bind("slice", keys, starts=(1, 0), stops=(2, 2), steps=(1, 1)), shape=(2,))
    u1 = tnp.subtract(tnp.asarray(1.0, dt), _unit_interval(k1, shape, dt))  # (0, 1]: log is finite
    u2 = _unit_interval(k2, shape, dt)
    radius = tnp.sqrt(tnp.multiply(pm.log(u1), tnp.asarray(-2.0, dt)))
    return tnp.multiply(radius, pm.cospi(tnp.multiply(u2, tnp.asarray(2.0, dt))))


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability `p` (a float or an array broadcasting to shape).

    >>> import tracejit as tj
    >>> tj.random.bernoulli(tj.random.key(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    if shape is None:
        shape = tuple(shape_of(p)) if not isinstance(p, (int, float)) else ()
    dt = np.dtype(np.float64) if getattr(p, "dtype", None) == np.float64 else np.dtype(np.float32)
    return tnp.less(uniform(key, shape, dt), tnp.asarray(p, dt))


def permutation(key, x):
    """A random permutation of `range(x)` (an int) or of `x` along axis 0 (an array, traced
    and differentiated too): the stable argsort of one random word per row.

    >>> import tracejit as tj
    >>> sorted(tj.random.permutation(tj.random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    key = _check_key(key)
    if isinstance(x, Tracer) and x.ndim == 0:
        raise UnsupportedError(
            "tj.random.permutation(key, n) needs a concrete n (the result's length); pass an "
            "int, or an array to permute"
        )
    n = int(x) if np.ndim(x) == 0 else shape_of(x)[0]
    order = tnp.argsort(bits(key, (n,)), stable=True)
    return order if np.ndim(x) == 0 else tnp.take(x, order, axis=0)


from tracejit._public import only_public_names
from tracejit._random_gamma import *
from tracejit._random_more import *
from tracejit._random_samplers import *

__all__ = [
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "random_gamma_p",
    "rayleigh",
    "split",
    "t",
    "threefry2x32_block",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]


def _narrow(dtype) -> bool:
    return dtypes.is_low_precision(dtypes.canonical(dtype))


def _drawn_in_float32(sampler):
    """`sampler` with float16 and bfloat16 draws made in float32 and rounded once: a Box-Muller
    or rejection step in half precision would lose most of its bits (and float16 overflows in
    its intermediates), and rounding float32's draws is the same bits on every path."""
    signature = inspect.signature(sampler)

    @functools.wraps(sampler)
    def draw(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        dtype = bound.arguments.get("dtype", signature.parameters["dtype"].default)
        if dtype is None or not _narrow(dtype):
            return sampler(*args, **kwargs)
        bound.arguments["dtype"] = np.dtype(np.float32)
        return tnp.astype(sampler(*bound.args, **bound.kwargs), dtypes.canonical(dtype))

    return draw


# Every float sampler but `uniform` (whose narrow draws are exact: _unit_interval).
for _name in __all__:
    _default = inspect.signature(globals()[_name]).parameters.get("dtype")
    if (
        _name != "uniform"
        and _default is not None
        and (_default.default is None or dtypes.is_float(np.dtype(_default.default)))
    ):
        globals()[_name] = _drawn_in_float32(globals()[_name])
only_public_names(__name__)
