"""The rest of jax.nn's activations and helpers, composed from tracejit.numpy.

Imported into `tracejit.nn`; each follows jax.nn's definition (and its gradient convention at
kinks: the derivative of the branch taken, 0 for the flat side of a clip).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit import numpy as tnp
from tracejit._public import defined_here
from tracejit.numpy._core import as_float, normalize_axes

# SELU's constants (Klambauer et al. 2017, "Self-Normalizing Neural Networks")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _nn():
    from tracejit import nn

    return nn


def identity(x):
    """The identity activation.

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.identity(np.array([-1.0, 2.0]))
    array([-1.,  2.])
    """
    return as_float(x)


def relu6(x):
    """min(max(x, 0), 6).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.relu6(np.array([-1.0, 3.0, 9.0]))
    array([0., 3., 6.])
    """
    x = as_float(x)
    return tnp.minimum(tnp.maximum(x, 0.0), 6.0)


def leaky_relu(x, negative_slope: float = 1e-2):
    """x for x >= 0, negative_slope * x below.

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.leaky_relu(np.array([-2.0, 3.0]), 0.5)
    array([-1.,  3.])
    """
    x = as_float(x)
    return tnp.where(tnp.greater_equal(x, 0.0), x, tnp.multiply(x, negative_slope))


def elu(x, alpha: float = 1.0):
    """x for x > 0, alpha * (exp(x) - 1) below.

    >>> import numpy as np, tracejit as tj
    >>> float(tj.nn.elu(np.array(-1.0)))
    -0.6321205588285577
    """
    x = as_float(x)
    safe = tnp.minimum(x, 0.0)  # keeps expm1 from overflowing on the unused branch
    return tnp.where(tnp.greater(x, 0.0), x, tnp.multiply(alpha, tnp.expm1(safe)))


def celu(x, alpha: float = 1.0):
    """max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)."""
    x = as_float(x)
    safe = tnp.minimum(x, 0.0)
    return tnp.where(
        tnp.greater(x, 0.0), x, tnp.multiply(alpha, tnp.expm1(tnp.divide(safe, alpha)))
    )


def selu(x):
    """scale * elu(x, alpha) with SELU's self-normalizing constants."""
    return tnp.multiply(_SELU_SCALE, elu(x, _SELU_ALPHA))


def hard_tanh(x):
    """clip(x, -1, 1)."""
    x = as_float(x)
    return tnp.minimum(tnp.maximum(x, -1.0), 1.0)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return tnp.divide(relu6(tnp.add(as_float(x), 3.0)), 6.0)


def hard_silu(x):
    """x * hard_sigmoid(x) (also `hard_swish`)."""
    x = as_float(x)
    return tnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def soft_sign(x):
    """x / (|x| + 1)."""
    x = as_float(x)
    return tnp.divide(x, tnp.add(tnp.absolute(x), 1.0))


def squareplus(x, b: float = 4.0):
    """(x + sqrt(x^2 + b)) / 2."""
    x = as_float(x)
    return tnp.divide(tnp.add(x, tnp.sqrt(tnp.add(tnp.multiply(x, x), b))), 2.0)


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 for |x| < 1, x for x >= 1."""
    x = as_float(x)
    mid = tnp.divide(tnp.square(tnp.add(x, 1.0)), 4.0)
    return tnp.where(tnp.less_equal(x, -1.0), 0.0, tnp.where(tnp.greater_equal(x, 1.0), x, mid))


def sparse_sigmoid(x):
    """0 for x <= -1, (x + 1) / 2 for |x| < 1, 1 for x >= 1 (the derivative of sparse_plus)."""
    x = as_float(x)
    return tnp.where(tnp.less_equal(x, -1.0), 0.0, tnp.where(
        tnp.greater_equal(x, 1.0), 1.0, tnp.divide(tnp.add(x, 1.0), 2.0)))  # fmt: skip


def mish(x):
    """x * tanh(softplus(x))."""
    x = as_float(x)
    return tnp.multiply(x, tnp.tanh(_nn().softplus(x)))


def tanh(x):
    """The hyperbolic tangent (jax.nn re-exports it)."""
    return tnp.tanh(x)


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate at both ends (Maechler's switch at log 2)."""
    x = as_float(x)
    small = tnp.less(x, math.log(2.0))
    return tnp.where(small, tnp.log(tnp.negative(tnp.expm1(tnp.negative(x)))),
                     tnp.log1p(tnp.negative(tnp.exp(tnp.negative(x)))))  # fmt: skip


def logmeanexp(x, axis=None, keepdims: bool = False):
    """log(mean(exp(x))) = logsumexp(x) - log(n), computed stably."""
    x = as_float(x)
    n = math.prod(tnp.shape(x)[a] for a in normalize_axes(axis, tnp.ndim(x), "logmeanexp"))
    return tnp.subtract(_nn().logsumexp(x, axis=axis, keepdims=keepdims), math.log(n))


def glu(x, axis: int = -1):
    """Gated linear unit: a * sigmoid(b) for the two halves a, b of x along `axis`."""
    a, b = tnp.split(as_float(x), 2, axis=axis)
    return tnp.multiply(a, _nn().sigmoid(b))


def standardize(x, axis=-1, mean=None, variance=None, epsilon: float = 1e-5, where=None):
    """(x - mean) / sqrt(variance + epsilon) over `axis` (jax.nn.standardize)."""
    x = as_float(x)
    if mean is None:
        mean = tnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        centred = tnp.subtract(x, mean)
        variance = tnp.mean(tnp.multiply(centred, centred), axis=axis, keepdims=True, where=where)
    return tnp.divide(tnp.subtract(x, mean), tnp.sqrt(tnp.add(variance, epsilon)))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False):  # fmt: skip
    """softmax(q k^T * scale + bias, masked) v for (B, T, N, H) query and (B, S, N, H) key and
    value (jax.nn's layout); `scale` defaults to 1/sqrt(H)."""
    q, k, v = (as_float(t) for t in (query, key, value))
    h = tnp.shape(q)[-1]
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    logits = tnp.multiply(tnp.einsum("...tnh,...snh->...nts", q, k), scale)
    if bias is not None:
        logits = tnp.add(logits, bias)
    if is_causal:
        t, s = tnp.shape(logits)[-2:]
        mask = np.tril(np.ones((t, s), np.bool_)) if mask is None else tnp.logical_and(
            mask, np.tril(np.ones((t, s), np.bool_)))  # fmt: skip
    if mask is not None:
        logits = tnp.where(mask, logits, np.finfo(np.float32).min)
    weights = _nn().softmax(logits, axis=-1)
    return tnp.einsum("...nts,...snh->...tnh", weights, v)


__all__ = defined_here(globals(), extra=("hard_swish",))  # noqa: PLE0605
