"""tracejit.nn forward values against NumPy formulas, eager and jitted, plus extreme inputs.

Gradients of these functions are checked in test_autodiff.py (test_nn_function_vjp).
"""

from __future__ import annotations

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj

_erf = np.vectorize(math.erf)


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


REFERENCE = {
    "relu": (tj.nn.relu, lambda x: np.maximum(x, 0)),
    "gelu_tanh": (
        tj.nn.gelu,
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    "gelu_erf": (
        lambda x: tj.nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    ),
    "sigmoid": (tj.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softplus": (tj.nn.softplus, lambda x: np.log1p(np.exp(x))),
    "silu": (tj.nn.silu, lambda x: x / (1 + np.exp(-x))),
    "softmax": (tj.nn.softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    "log_softmax": (tj.nn.log_softmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    "logsumexp": (tj.nn.logsumexp, lambda x: np.log(np.exp(x).sum())),
    "logsumexp_axis0_keep": (
        lambda x: tj.nn.logsumexp(x, axis=0, keepdims=True),
        lambda x: np.log(np.exp(x).sum(0, keepdims=True)),
    ),
}


@pytest.mark.parametrize("name", sorted(REFERENCE))
@settings(max_examples=6)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_forward_matches_numpy_formula(name, shape, dtype, seed):
    fn, reference = REFERENCE[name]
    x = (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)
    expected = reference(x.astype(np.float64))
    rtol = 2e-6 if dtype == np.float32 else 1e-12
    out = fn(x)
    assert out.dtype == dtype and out.shape == np.shape(expected)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tj.jit(fn)(x), expected, rtol=5 * rtol, atol=5 * rtol)


def test_extreme_inputs_stay_finite_and_exact():
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e308, 0.0, 1e3]])
    sm = tj.nn.softmax(x)
    np.testing.assert_allclose(sm, [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], atol=1e-300)
    ls = tj.nn.log_softmax(x)
    np.testing.assert_allclose(ls[0, :2], [-np.log(2.0)] * 2)
    assert np.all(np.isfinite(tj.nn.logsumexp(x, axis=1)))
    np.testing.assert_allclose(tj.nn.softplus(np.array([800.0, -800.0])), [800.0, 0.0])
    np.testing.assert_allclose(tj.nn.sigmoid(np.array([800.0, -800.0])), [1.0, 0.0])
    assert tj.nn.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf  # not nan
    g = tj.grad(lambda x: tj.nn.logsumexp(x))(np.array([1000.0, 1000.0]))
    np.testing.assert_allclose(g, [0.5, 0.5])


def test_relu_gradient_at_zero_is_zero_and_softplus_at_zero_is_half():
    np.testing.assert_array_equal(tj.grad(lambda x: tj.nn.relu(x).sum())(np.zeros(2)), [0, 0])
    np.testing.assert_allclose(tj.grad(lambda x: tj.nn.softplus(x).sum())(np.zeros(1)), [0.5])


def test_one_hot():
    labels = np.array([[0, 3], [2, 1]])
    out = tj.nn.one_hot(labels, 4)
    assert out.dtype == np.float32 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out, np.eye(4, dtype=np.float32)[labels])
    np.testing.assert_array_equal(tj.jit(lambda y: tj.nn.one_hot(y, 4))(labels), out)
    np.testing.assert_array_equal(tj.nn.one_hot(np.array([5, -1]), 3, dtype=np.int32), 0)
    with pytest.raises(TypeError, match="integer class indices"):
        tj.nn.one_hot(np.array([0.5]), 3)


def test_int_inputs_promote_like_numpy():
    out = tj.nn.sigmoid(np.array([0, 1]))
    assert out.dtype == np.float64
    assert tj.nn.relu(np.array([-1, 2])).dtype == np.int64


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_softmax_family_over_a_size_zero_axis_is_empty_not_an_error(mode):
    # NumPy-style: nothing to normalize gives an empty result (scipy's logsumexp: -inf),
    # where the max used for the shift raised ShapeError.
    import scipy.special

    x = np.zeros((3, 0), np.float32)

    def f(x):
        return (
            tj.nn.softmax(x, axis=-1),
            tj.nn.log_softmax(x, axis=-1),
            tj.nn.logsumexp(x, axis=-1),
            tj.nn.softmax(x, axis=0),
        )

    got = f(x) if mode == "eager" else tj.jit(f)(x)
    empty = np.empty((3, 0), np.float32)  # (scipy's softmax raises on a size-0 axis)
    want = [empty, empty, scipy.special.logsumexp(x, axis=-1).astype(np.float32), empty]
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == np.float32
        np.testing.assert_array_equal(g, w)
