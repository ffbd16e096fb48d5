"""tracejit.nn: common neural-network functions, written with tracejit.numpy so they trace,
fuse and differentiate like any other code.

>>> import numpy as np, tracejit as tj
>>> tj.nn.softmax(np.array([0.0, 0.0]))
array([0.5, 0.5])
"""

from __future__ import annotations

import math

import numpy as np

from tracejit import numpy as tnp
from tracejit.errors import TracejitTypeError
from tracejit.ir import dtypes
from tracejit.numpy._core import as_float, normalize_axes, promote, shape_of

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715  # the cubic coefficient of the tanh GELU approximation (Hendrycks & Gimpel)
# The next wider float type: where logsumexp adds the log of its sum to the max.
_WIDER = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64}


def relu(x):
    """max(x, 0); the gradient at 0 is 0 (as `jax.nn.relu`).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.relu(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    (x,) = promote(x)
    return tnp.where(tnp.greater(x, 0), x, 0)


def _minus_abs(x, positive):
    """-|x| as `where(positive, -x, x)`: the branch's own derivative (-1 or 1) at every x,
    including 0, where the gradient of `abs` would be 0."""
    return tnp.where(positive, tnp.negative(x), x)


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x)), accurate over the whole float range.

    With e = exp(-|x|) (never overflows): 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0,
    so sigmoid(-100) is 3.7e-44, not 0, in float32 and its gradient e / (1 + e)^2 stays
    finite and accurate.

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.sigmoid(np.array([0.0, -800.0]))
    array([0.5, 0. ])
    """
    x = as_float(x)
    positive = tnp.greater_equal(x, 0.0)
    e = tnp.exp(_minus_abs(x, positive))
    return tnp.divide(tnp.where(positive, 1.0, e), tnp.add(e, 1.0))


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), accurate where sigmoid underflows or rounds to 1:
    min(x, 0) - log1p(exp(-|x|)).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.log_sigmoid(np.array([-1000.0, 0.0]))
    array([-1.00000000e+03, -6.93147181e-01])
    """
    x = as_float(x)
    positive = tnp.greater_equal(x, 0.0)
    tail = tnp.log1p(tnp.exp(_minus_abs(x, positive)))
    return tnp.subtract(tnp.where(positive, 0.0, x), tail)


def silu(x):
    """x * sigmoid(x) (also called swish).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.silu(np.array([0.0]))
    array([0.])
    """
    x = as_float(x)
    return tnp.multiply(x, sigmoid(x))


swish = silu


def softplus(x):
    """log(1 + exp(x)), stable for large |x|: max(x, 0) + log1p(exp(-|x|)).

    >>> import numpy as np, tracejit as tj
    >>> float(tj.nn.softplus(np.array(0.0)))
    0.6931471805599453
    """
    x = as_float(x)
    positive = tnp.greater(x, 0.0)
    tail = tnp.log1p(tnp.exp(_minus_abs(x, positive)))
    return tnp.add(tnp.where(positive, x, 0.0), tail)


def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit: x * Phi(x).

    `approximate=True` (the default, as in JAX) uses the tanh form
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); `approximate=False` the exact
    0.5 x (1 + erf(x / sqrt(2))).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.gelu(np.array([0.0]), approximate=False)
    array([0.])
    """
    x = as_float(x)
    if approximate:
        cubic = tnp.multiply(tnp.multiply(tnp.multiply(x, x), x), _GELU_CUBIC)
        inner = tnp.multiply(tnp.add(x, cubic), _SQRT_2_OVER_PI)
        return tnp.multiply(tnp.multiply(x, 0.5), tnp.add(tnp.tanh(inner), 1.0))
    phi = tnp.add(tnp.erf(tnp.multiply(x, 1.0 / math.sqrt(2.0))), 1.0)
    return tnp.multiply(tnp.multiply(x, 0.5), phi)


def _shifted(x, axis, name: str):
    """(x - m, m) with m = max(x, axis, keepdims) behind stop_gradient, 0 where not finite.

    Subtracting the max keeps exp from overflowing; the max is a constant for the gradient
    (the shift cancels mathematically), and a row of -inf shifts by 0 instead of giving nan.
    """
    axes = normalize_axes(axis, len(shape_of(x)), name)
    if any(shape_of(x)[a] == 0 for a in axes):  # nothing to shift (NumPy-style: empty out)
        m = tnp.max(x, axis=axis, keepdims=True, initial=-np.inf)
    else:
        m = tnp.max(x, axis=axis, keepdims=True)
    m = tnp.stop_gradient(tnp.where(tnp.isfinite(m), m, 0.0))
    return tnp.subtract(x, m), m


def logsumexp(x, axis=None, keepdims: bool = False):
    """log(sum(exp(x), axis)), computed stably.

    A float32 (float16) result adds the log of the sum to the max in float64 (float32) and
    rounds once: two float32 roundings there cost up to ~1.5 ulp (NumPy's stable float32
    formula: 1.3), the one rounding at most 0.5 plus the sum's error (tools/ulp_report.py).

    >>> import numpy as np, tracejit as tj
    >>> float(tj.nn.logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    x = as_float(x)
    axes = normalize_axes(axis, len(shape_of(x)), "logsumexp")
    shifted, m = _shifted(x, axes, "logsumexp")
    wide = _WIDER.get(np.dtype(x.dtype), x.dtype)
    total = tnp.astype(tnp.sum(tnp.exp(shifted), axis=axes, keepdims=True), wide)
    out = tnp.astype(tnp.add(tnp.log(total), tnp.astype(m, wide)), x.dtype)
    if keepdims:
        return out
    return tnp.reshape(out, tuple(d for i, d in enumerate(shape_of(x)) if i not in axes))


def log_softmax(x, axis=-1):
    """x - logsumexp(x, axis), computed stably.

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.log_softmax(np.array([0.0, 0.0]))
    array([-0.69314718, -0.69314718])
    """
    x = as_float(x)
    shifted, _ = _shifted(x, axis, "log_softmax")
    return tnp.subtract(shifted, tnp.log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True)))


def _exp_shifted(x, m):
    """exp(x - m), with the rounding error of the subtraction folded back in.

    `x - m` rounds by up to half an ulp of the difference, which exp turns into a relative
    error of the result as large as the difference: 2^-18 (64 float32 ulps) at |x - m| ~ 100,
    where NumPy's stable float32 softmax is 67 ulps off. The exact error `lo` of the rounded
    difference (Knuth's TwoSum, six exact operations) gives exp(x - m) = exp(d) (1 + lo) to
    second order. Where that correction is not finite (an infinite x or exp(d), where lo is
    nan or irrelevant), exp(d) stays as it is.
    """
    d = tnp.subtract(x, m)
    back = tnp.subtract(d, x)  # TwoSum(x, -m): d + lo == x - m exactly
    lo = tnp.add(tnp.subtract(x, tnp.subtract(d, back)), tnp.subtract(tnp.negative(m), back))
    e = tnp.exp(d)
    correction = tnp.multiply(e, lo)
    return tnp.where(tnp.isfinite(correction), tnp.add(e, correction), e)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x), axis), computed stably.

    The shift by the max is exact (`_exp_shifted`): float32 results are within a few ulps
    (NumPy's stable float32 formula: 67 ulps; tools/ulp_report.py).

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.softmax(np.array([[0.0, np.log(3.0)]]))
    array([[0.25, 0.75]])
    """
    x = as_float(x)
    _, m = _shifted(x, axis, "softmax")
    e = _exp_shifted(x, m)
    return tnp.divide(e, tnp.sum(e, axis=axis, keepdims=True))


def one_hot(x, num_classes: int, dtype=np.float32):
    """A `dtype` array of shape `x.shape + (num_classes,)`, 1 where the last index equals x.

    The default dtype is float32, as in `jax.nn.one_hot`: one-hot labels usually meet
    float32 activations, and float64 labels would silently promote the whole loss.

    >>> import numpy as np, tracejit as tj
    >>> tj.nn.one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    (x,) = promote(x)
    if not dtypes.is_int(x.dtype):
        raise TracejitTypeError(f"one_hot needs integer class indices, got {x.dtype}")
    column = tnp.reshape(x, tuple(shape_of(x)) + (1,))
    classes = np.arange(int(num_classes), dtype=x.dtype)
    return tnp.astype(tnp.equal(column, classes), dtypes.canonical(dtype))


from tracejit._nn_block_quant import get_scaled_dot_general_config
from tracejit._nn_extra import *
from tracejit._nn_initializers import initializers
from tracejit._nn_scaled import scaled_matmul
from tracejit._nn_scaled_dot import scaled_dot_general
from tracejit._public import only_public_names

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "get_scaled_dot_general_config",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "scaled_dot_general",
    "scaled_matmul",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
only_public_names(__name__)
