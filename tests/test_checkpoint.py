"""tj.checkpoint: policies decide what the vjp partition saves; gradients stay exact."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

rng = np.random.default_rng(7)
W = rng.standard_normal((8, 8)) * 0.3
X = rng.standard_normal((4, 8))
P = tj.checkpoint_policies


def _layers(w, x):
    return tnp.tanh(tnp.tanh(x @ w) @ w)


def _loss_np(w):
    return np.tanh(np.tanh(X @ w) @ w).sum()


def _vjp(fn, **kw):
    out, f_vjp = tj.vjp(lambda w, x: fn(w, x).sum(), W, X, **kw)
    grads = f_vjp(np.float64(1.0))
    return out, f_vjp, grads


def _kinds(f_vjp):
    """The primitives whose outputs the forward saves (inputs: 'input')."""
    producers = {v: n.prim.name for n in f_vjp.forward.nodes for v in n.outputs}
    return sorted(producers.get(v, "input") for v in f_vjp.residual_values)


def test_policies_choose_the_residuals_and_keep_gradients_exact():
    want = numeric_grad(_loss_np, W)
    _, plain, g_plain = _vjp(_layers)
    _, nothing, g_nothing = _vjp(tj.checkpoint(_layers))
    _, dots, g_dots = _vjp(tj.checkpoint(_layers, policy=P.dots_saveable))
    for g in (g_plain, g_nothing, g_dots):
        np.testing.assert_allclose(g[0], want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g[1], g_plain[1], rtol=1e-12)
    assert "tanh" in _kinds(plain)  # without a checkpoint, activations are saved
    assert set(_kinds(nothing)) == {"input"}
    assert nothing.saved_bytes == W.nbytes + X.nbytes < plain.saved_bytes
    # dots_saveable: the matmul outputs, never the activations or their derivatives
    assert _kinds(dots).count("matmul") == 2
    assert not {"tanh", "sub"} & set(_kinds(dots))
    _, budget0, _ = _vjp(_layers, memory_budget=0.0)
    assert nothing.saved_bytes < budget0.saved_bytes  # beyond what the budget alone reaches


def test_checkpoint_of_an_inner_region_only():
    def fn(w, x):
        h = tnp.tanh(x @ w)  # outside: its matmul output is saved as usual
        return tj.checkpoint(lambda h: tnp.tanh(h @ w))(h)

    _, f_vjp, g = _vjp(fn)
    np.testing.assert_allclose(g[0], numeric_grad(_loss_np, W), rtol=1e-6, atol=1e-8)
    kinds = _kinds(f_vjp)
    assert kinds.count("tanh") == 1 and "sub" not in kinds  # h saved, the region recomputed
    assert f_vjp.saved_bytes < _vjp(_layers)[1].saved_bytes


def test_checkpoint_under_jit_grad_and_eagerly():
    loss = lambda w: tj.checkpoint(_layers)(w, X).sum()
    want = numeric_grad(_loss_np, W)
    np.testing.assert_allclose(tj.jit(tj.grad(loss))(W), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tj.remat(_layers)(W, X), np.tanh(np.tanh(X @ W) @ W), rtol=1e-14)


def test_checkpoint_policy_must_be_callable():
    with pytest.raises(TypeError, match="policy"):
        tj.checkpoint(_layers, policy="dots")
