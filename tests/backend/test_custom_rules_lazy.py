"""custom_vjp / custom_jvp rules are traced when a transformation first needs them (as in
JAX), not when the function is called: inference (jit, vmap) never traces them, so rules
valid only for differentiation serve it; a bad rule raises, named and with its line, where a
derivative is asked; each rule is traced once per signature.
Oracles: NumPy for values, the rule the user wrote (analytic) for gradients, counters in the
rules for how often they are traced."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.cache.graph_key import graph_fingerprint
from tracejit.errors import ShapeError

X = np.array([0.3, -1.2, 2.0])
XS = np.stack([X, 2.0 * X])


def _counted():
    """sin(x), its gradient deliberately 10 cos(x), with a count of each rule's traces."""
    counts = {"fwd": 0, "bwd": 0}

    @tj.custom_vjp
    def f(x):
        return tnp.sin(x)

    def fwd(x):
        counts["fwd"] += 1
        return f(x), tnp.cos(x)

    def bwd(cos_x, g):
        counts["bwd"] += 1
        return (g * cos_x * 10.0,)

    f.defvjp(fwd, bwd)
    return f, counts


def _bad_rules():
    """A custom_vjp whose fwd and bwd fail when traced (an add of shapes (3,) and (7,))."""

    @tj.custom_vjp
    def f(x):
        return tnp.sin(x) * 2.0

    def fwd(x):
        return f(x), x + tnp.ones(7)  # BAD FWD LINE

    f.defvjp(fwd, lambda res, g: (g + tnp.ones(7),))
    return f


def _line_of(marker: str) -> int:
    with open(__file__) as src:
        return next(i for i, line in enumerate(src, 1) if marker in line)


def test_rules_are_not_traced_for_inference_and_once_for_gradients():
    f, counts = _counted()
    np.testing.assert_allclose(tj.jit(f)(X), np.sin(X), rtol=1e-15)
    np.testing.assert_allclose(tj.vmap(f)(XS), np.sin(XS), rtol=1e-15)
    np.testing.assert_allclose(tj.jit(tj.vmap(lambda x: f(x) * 2.0))(XS), 2 * np.sin(XS))
    tj.make_ir(lambda x: tnp.sum(f(x)))(X)
    assert counts == {"fwd": 0, "bwd": 0}
    loss = lambda x: tnp.sum(f(x))
    np.testing.assert_allclose(tj.grad(loss)(X), 10.0 * np.cos(X), rtol=1e-14)
    assert counts == {"fwd": 1, "bwd": 1}
    np.testing.assert_allclose(tj.grad(loss)(X), 10.0 * np.cos(X), rtol=1e-14)
    np.testing.assert_allclose(tj.vmap(tj.grad(loss))(XS), 10.0 * np.cos(XS), rtol=1e-14)
    assert counts == {"fwd": 1, "bwd": 1}  # cached per signature, batched from the cache


def test_batched_call_traces_its_rules_when_differentiated():
    f, counts = _counted()
    per_row = lambda w: tnp.sum(tj.vmap(f)(XS * w))
    np.testing.assert_allclose(tj.vmap(f)(XS), np.sin(XS), rtol=1e-15)
    assert counts == {"fwd": 0, "bwd": 0}
    np.testing.assert_allclose(tj.grad(per_row)(1.0), np.sum(10.0 * np.cos(XS) * XS))
    assert counts == {"fwd": 1, "bwd": 1}


def test_forward_mode_traces_the_rules_it_needs():
    f, counts = _counted()
    tangent = tj.jvp(f, (X,), (np.ones(3),))[1]
    np.testing.assert_allclose(tangent, 10.0 * np.cos(X), rtol=1e-14)  # bwd is linear
    assert counts == {"fwd": 1, "bwd": 1}


def test_bad_rules_serve_inference_and_raise_under_grad_with_their_line():
    f = _bad_rules()
    np.testing.assert_allclose(tj.jit(f)(X), 2.0 * np.sin(X), rtol=1e-15)
    np.testing.assert_allclose(tj.vmap(f)(XS), 2.0 * np.sin(XS), rtol=1e-15)
    for derive in (
        lambda: tj.grad(lambda x: tnp.sum(f(x)))(X),
        lambda: tj.jit(tj.grad(lambda x: tnp.sum(f(x))))(X),
        lambda: tj.vmap(tj.grad(lambda x: tnp.sum(f(x))))(XS),
        lambda: tj.jvp(f, (X,), (X,)),
    ):
        with pytest.raises(ShapeError) as info:
            derive()
        assert f"test_custom_rules_lazy.py:{_line_of('# BAD FWD LINE')}" in info.value.source


def test_rules_closing_over_a_tracer_raise_at_grad_not_at_the_call():
    def loss(x, s):
        @tj.custom_vjp
        def f(v):
            return v * s

        f.defvjp(lambda v: (f(v), v[:2] + s), lambda res, g: (g * s,))  # fwd: (2,) + (3,)
        return tnp.sum(f(x))

    np.testing.assert_allclose(tj.jit(loss)(X, X), np.sum(X * X), rtol=1e-15)
    with pytest.raises(ShapeError) as info:
        tj.grad(loss)(X, X)
    assert f"test_custom_rules_lazy.py:{_line_of('# fwd: (2,) + (3,)')}" in info.value.source


def test_custom_jvp_rule_is_traced_only_for_derivatives():
    counts = {"jvp": 0}

    @tj.custom_jvp
    def f(x):
        return tnp.exp(x)

    @f.defjvp
    def _(primals, tangents):
        counts["jvp"] += 1
        return f(primals[0]), tangents[0] * 3.0

    np.testing.assert_allclose(tj.jit(f)(X), np.exp(X), rtol=1e-15)
    np.testing.assert_allclose(tj.vmap(f)(XS), np.exp(XS), rtol=1e-15)
    assert counts["jvp"] == 0
    np.testing.assert_allclose(tj.grad(lambda x: tnp.sum(f(x)))(X), np.full(3, 3.0))
    np.testing.assert_allclose(tj.jvp(f, (X,), (np.ones(3),))[1], np.full(3, 3.0))
    assert counts["jvp"] == 1


def test_graph_key_does_not_depend_on_traced_rules_and_gradients_follow_their_own():
    f, counts = _counted()
    g, _ = _counted()
    g.defvjp(lambda x: (g(x), x), lambda x, ct: (ct * x,))  # same name and primal, other rule
    ir = lambda fun: graph_fingerprint(tj.make_ir(lambda x: tnp.sum(fun(x)))(X))
    before = ir(f)
    assert before == ir(g)  # the compiled primal is the same code
    grad_f = tj.jit(tj.grad(lambda x: tnp.sum(f(x))))
    grad_g = tj.jit(tj.grad(lambda x: tnp.sum(g(x))))
    np.testing.assert_allclose(grad_f(X), 10.0 * np.cos(X), rtol=1e-14)
    np.testing.assert_allclose(grad_g(X), X, rtol=1e-15)
    assert counts == {"fwd": 1, "bwd": 1}
    assert ir(f) == before
