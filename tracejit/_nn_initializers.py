"""`tracejit.nn.initializers`: jax.nn.initializers' weight initializers over tracejit.random.

Each factory returns `init(key, shape, dtype=float32)`. Fans follow JAX: for a shape
(..., fan_in, fan_out) the receptive field is the product of the leading dimensions.

>>> import tracejit as tj
>>> w = tj.nn.initializers.glorot_uniform()(tj.random.key(0), (3, 4))
>>> w.shape, bool(abs(w).max() <= (6 / 7) ** 0.5)
((3, 4), True)
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np

from tracejit import numpy as tnp
from tracejit import random
from tracejit.errors import UnsupportedError


def constant(value, dtype=np.float32):
    """All entries `value`."""
    return lambda key, shape, dtype=dtype: tnp.full(shape, value, dtype)


def zeros(key, shape, dtype=np.float32):
    """All zeros."""
    return tnp.zeros(shape, dtype)


def ones(key, shape, dtype=np.float32):
    """All ones."""
    return tnp.ones(shape, dtype)


def uniform(scale: float = 1e-2, dtype=np.float32):
    """Uniform in [0, scale)."""
    return lambda key, shape, dtype=dtype: random.uniform(key, shape, dtype, 0.0, scale)


def normal(stddev: float = 1e-2, dtype=np.float32):
    """Normal with standard deviation `stddev`."""
    return lambda key, shape, dtype=dtype: tnp.multiply(random.normal(key, shape, dtype), stddev)


def _fans(shape, in_axis=-2, out_axis=-1):
    shape = tuple(shape)
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    receptive = math.prod(d for i, d in enumerate(shape) if i not in (in_axis % len(shape),
                                                                       out_axis % len(shape)))  # fmt: skip
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(scale: float, mode: str, distribution: str, in_axis=-2, out_axis=-1,
                     dtype=np.float32):  # fmt: skip
    """Variance `scale / fan` (fan_in, fan_out or their mean) as a uniform or normal draw."""
    if distribution not in ("uniform", "normal", "untruncated_normal"):
        raise UnsupportedError(f"variance_scaling: distribution {distribution!r} (truncated "
                                  "normal needs erfinv) is not supported")  # fmt: skip

    def init(key, shape, dtype=dtype):
        fan_in, fan_out = _fans(shape, in_axis, out_axis)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = scale / fan
        if distribution == "uniform":
            bound = math.sqrt(3 * variance)
            return random.uniform(key, shape, dtype, -bound, bound)
        return tnp.multiply(random.normal(key, shape, dtype), math.sqrt(variance))

    return init


def _scaled(name: str, scale: float, mode: str, distribution: str):
    def factory(in_axis=-2, out_axis=-1, dtype=np.float32):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, dtype)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"`variance_scaling({scale}, {mode!r}, {distribution!r})`."
    return factory


glorot_uniform = _scaled("glorot_uniform", 1.0, "fan_avg", "uniform")
glorot_normal = _scaled("glorot_normal", 1.0, "fan_avg", "untruncated_normal")
he_uniform = _scaled("he_uniform", 2.0, "fan_in", "uniform")
he_normal = _scaled("he_normal", 2.0, "fan_in", "untruncated_normal")
lecun_uniform = _scaled("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _scaled("lecun_normal", 1.0, "fan_in", "untruncated_normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal

initializers = types.ModuleType("tracejit.nn.initializers", __doc__)
_NAMES = ["constant", "zeros", "ones", "uniform", "normal", "variance_scaling", "glorot_uniform",
          "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
          "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"]  # fmt: skip
for _n in _NAMES:
    setattr(initializers, _n, globals()[_n])
initializers.__all__ = sorted(_NAMES)
sys.modules.setdefault(initializers.__name__, initializers)
