"""The rest of jax.nn's activations (tracejit/_nn_extra.py): values against NumPy formulas
written out here (jax.nn's definitions), gradients against float64 finite differences, one
compiled batch on the test device; and module hygiene of tracejit.nn and tracejit.random."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

X = np.array([-3.0, -1.2, -0.4, 0.3, 0.9, 2.5, 7.0])
SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805


def _softplus(x):
    return np.logaddexp(x, 0.0)


# name -> (tracejit call, NumPy oracle)
ACTIVATIONS = {
    "identity": (lambda x: tj.nn.identity(x), lambda x: x),
    "relu6": (lambda x: tj.nn.relu6(x), lambda x: np.clip(x, 0, 6)),
    "leaky_relu": (lambda x: tj.nn.leaky_relu(x, 0.1), lambda x: np.where(x >= 0, x, 0.1 * x)),
    "elu": (lambda x: tj.nn.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "celu": (lambda x: tj.nn.celu(x, 2.0), lambda x: np.where(x > 0, x, 2 * np.expm1(x / 2))),
    "selu": (tj.nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    "hard_tanh": (tj.nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (tj.nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (tj.nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hard_swish": (tj.nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "soft_sign": (tj.nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "squareplus": (tj.nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "sparse_plus": (tj.nn.sparse_plus,
                    lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    "sparse_sigmoid": (tj.nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "mish": (tj.nn.mish, lambda x: x * np.tanh(_softplus(x))),
    "tanh": (tj.nn.tanh, np.tanh),
    "log1mexp": (lambda x: tj.nn.log1mexp(np.abs(x)), lambda x: np.log(-np.expm1(-np.abs(x)))),
    "logmeanexp": (lambda x: tj.nn.logmeanexp(x), lambda x: np.log(np.mean(np.exp(x)))),
    "glu": (lambda x: tj.nn.glu(x[1:]), lambda x: x[1:4] / (1 + np.exp(-x[4:]))),
    "standardize": (tj.nn.standardize, lambda x: (x - x.mean()) / np.sqrt(x.var() + 1e-5)),
}  # fmt: skip
SMOOTH = {"identity", "elu", "celu", "selu", "soft_sign", "squareplus", "mish", "tanh",
          "log1mexp", "logmeanexp", "glu", "standardize", "hard_silu"}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_gradients(name):
    fn, oracle = ACTIVATIONS[name]
    np.testing.assert_allclose(fn(X), oracle(X), rtol=1e-12, atol=1e-15)
    x = X + 0.01  # away from the kinks at 0, +-1, +-3
    w = np.linspace(0.5, 1.5, np.size(oracle(x)))
    got = tj.grad(lambda v: tnp.sum(fn(v) * w))(x)
    expected = numeric_grad(lambda v: np.sum(oracle(v) * w), x)
    tol = 1e-6 if name in SMOOTH else 1e-5
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_activations_compile_for_the_test_device(device):
    names = sorted(ACTIVATIONS)
    got = tj.jit(lambda x: [ACTIVATIONS[n][0](x) for n in names], device=device)(X)
    for n, g in zip(names, got):
        np.testing.assert_allclose(tj.device_get(g), ACTIVATIONS[n][1](X), rtol=1e-12, err_msg=n)


def test_dot_product_attention_matches_a_numpy_softmax():
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 4, 3, 5)) for _ in range(3))  # (B, T, N, H)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / math.sqrt(5)
    causal = np.tril(np.ones((4, 4), bool))
    for is_causal in (False, True):
        masked = np.where(causal, logits, np.finfo(np.float32).min) if is_causal else logits
        p = np.exp(masked - masked.max(-1, keepdims=True))
        expected = np.einsum("bnts,bsnh->btnh", p / p.sum(-1, keepdims=True), v)
        got = tj.jit(lambda q, k, v, c=is_causal: tj.nn.dot_product_attention(q, k, v, is_causal=c))
        np.testing.assert_allclose(got(q, k, v), expected, rtol=1e-10)


@pytest.mark.parametrize("module", [tj.nn, tj.random])
def test_modules_show_only_their_public_names(module):
    for leaked in ("np", "tnp", "Tracer", "bind", "math", "dtypes", "promote"):
        assert not hasattr(module, leaked), leaked
    assert sorted(dir(module)) == sorted(module.__all__)
    for name in module.__all__:
        value = getattr(module, name)
        assert callable(value) or value is getattr(module, "initializers", None), name


# shape (5, 12, 40): receptive field 5, so fan_in = 60, fan_out = 200, their mean 130
@pytest.mark.parametrize(
    "name, variance",
    [("glorot_uniform", 1 / 130), ("he_normal", 2 / 60), ("lecun_uniform", 1 / 60)],
)
def test_initializers_have_the_stated_variance(name, variance):
    w = getattr(tj.nn.initializers, name)()(tj.random.key(1), (5, 12, 40))
    assert w.shape == (5, 12, 40) and w.dtype == np.float32
    assert abs(np.var(w.astype(np.float64)) / variance - 1) < 0.08
    zeros = tj.nn.initializers.zeros(tj.random.key(0), (2, 3))
    np.testing.assert_array_equal(zeros, np.zeros((2, 3), np.float32))
