"""tj.checkpoint: policies decide what is saved for the backward, in the vjp partition and
inside one jitted grad program; gradients stay exact."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp

rng = np.random.default_rng(7)
WS = [rng.standard_normal((16, 16)) * 0.3 for _ in range(3)]
X = rng.standard_normal((32, 16))
P = tj.checkpoint_policies


def _layer(h, w):
    return tnp.tanh(tnp.tanh(h @ w) * 1.5 + 0.1)


def _np_layer(h, w):
    return np.tanh(np.tanh(h @ w) * 1.5 + 0.1)


def _model(layer):
    def loss(ws, x):
        for w in ws:
            x = layer(x, w)
        return (x * x).sum()

    return loss


def _np_loss_of_first(w0):
    h = X
    for w in [w0, *WS[1:]]:
        h = _np_layer(h, w)
    return (h * h).sum()


def _kinds(f_vjp):
    """The primitives whose outputs the forward saves (inputs: 'input')."""
    producers = {v: n.prim.name for n in f_vjp.forward.nodes for v in n.outputs}
    return sorted(producers.get(v, "input") for v in f_vjp.residual_values)


def test_policies_choose_the_residuals_and_keep_gradients_exact():
    want = numeric_grad(_np_loss_of_first, WS[0])
    plain_g, plain = None, None
    results = {}
    for name, layer in [
        ("plain", _layer),
        ("nothing", tj.checkpoint(_layer)),
        ("dots", tj.checkpoint(_layer, policy=P.dots_saveable)),
        ("everything", tj.remat(_layer, policy=P.everything_saveable)),
    ]:
        _, f_vjp = tj.vjp(_model(layer), WS, X)
        grads = f_vjp(np.float64(1.0))
        np.testing.assert_allclose(grads[0][0], want, rtol=1e-6, atol=1e-8)
        if plain is None:
            plain, plain_g = f_vjp, grads
        for g, p in zip(grads[0] + [grads[1]], plain_g[0] + [plain_g[1]]):
            np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-14)
        results[name] = f_vjp
    # nothing inside a region is saved: the inputs, and each layer's output (the identity
    # through which it leaves its region)
    assert _kinds(results["nothing"]) == ["input"] * 4 + ["remat_barrier"] * len(WS)
    assert results["nothing"].saved_bytes <= results["plain"].saved_bytes
    # dots_saveable saves each layer's matmul and recomputes the inner tanh from it
    assert _kinds(results["dots"]).count("matmul") == len(WS)
    assert "matmul" not in _kinds(results["plain"]) + _kinds(results["everything"])


def _arena_bytes(fn, *args) -> int:
    return fn.lower(*args).compile().executable.schedule.arena_bytes


def test_checkpoint_inside_a_jitted_grad_lowers_its_memory():
    want = numeric_grad(_np_loss_of_first, WS[0])
    plain = tj.jit(tj.grad(_model(_layer)))
    ck = tj.jit(tj.grad(_model(tj.checkpoint(_layer))))
    np.testing.assert_allclose(ck(WS, X)[0], want, rtol=1e-6, atol=1e-8)
    for g, p in zip(ck(WS, X), plain(WS, X)):
        np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-14)
    if tj.config.default_device == "cpu":
        # the recomputation is not merged back into the forward: fewer live activations
        assert _arena_bytes(ck, WS, X) < _arena_bytes(plain, WS, X)
    grad2 = tj.grad(lambda w: tj.grad(_model(tj.checkpoint(_layer)))([w, *WS[1:]], X)[0].sum())
    plain2 = tj.grad(lambda w: tj.grad(_model(_layer))([w, *WS[1:]], X)[0].sum())
    np.testing.assert_allclose(grad2(WS[0]), plain2(WS[0]), rtol=1e-10, atol=1e-12)


def test_a_checkpointed_output_is_saved_only_when_the_backward_needs_it():
    w = WS[0]
    block = tj.checkpoint(lambda x: tnp.tanh(tnp.tanh(x @ w) @ w))
    _, plain = tj.vjp(lambda x: tnp.sum(_layer(_layer(x, w), w)), X)
    _, summed = tj.vjp(lambda x: tnp.sum(block(x)), X)
    _, squared = tj.vjp(lambda x: tnp.sum(block(x) ** 2), X)
    assert summed.saved_bytes == X.nbytes < plain.saved_bytes  # only the region's input
    assert squared.saved_bytes == 2 * X.nbytes  # and its output, which d(f**2) reads


def test_checkpoint_eagerly_and_policy_must_be_callable():
    np.testing.assert_allclose(tj.remat(_layer)(X, WS[0]), _np_layer(X, WS[0]), rtol=1e-14)
    with pytest.raises(TypeError, match="policy"):
        tj.checkpoint(_layer, policy="dots")
