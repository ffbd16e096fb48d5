"""Gradients through tracejit.lax: central finite differences in float64 and the unrolled
Python loop (differentiated as straight-line code) are the oracles."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _finite_diff import numeric_grad
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

RNG = np.random.default_rng(1)


def _rnn(w, h0, xs, reverse=False):
    def step(h, x):
        h = np.tanh(h @ w + x)
        return h, tnp.sum(h * h)

    h, ys = lax.scan(step, h0, xs, reverse=reverse)
    return tnp.sum(h) + tnp.sum(ys * np.arange(1.0, xs.shape[0] + 1))


def _rnn_unrolled(w, h0, xs, reverse=False):
    h, total = h0, 0.0
    order = range(xs.shape[0])
    for t in reversed(order) if reverse else order:
        h = np.tanh(h @ w + xs[t])
        total = total + tnp.sum(h * h) * (t + 1.0)
    return tnp.sum(h) + total


def _args(n=5, d=3):
    return RNG.standard_normal((d, d)) * 0.6, RNG.standard_normal(d), RNG.standard_normal((n, d))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_grad_matches_finite_differences_and_the_unrolled_loop(reverse):
    w, h0, xs = _args()
    rnn = functools.partial(_rnn, reverse=reverse)
    grads = tj.grad(rnn, argnums=(0, 1, 2))(w, h0, xs)
    unrolled = tj.grad(functools.partial(_rnn_unrolled, reverse=reverse), argnums=(0, 1, 2))(
        w, h0, xs
    )
    args = [w, h0, xs]
    for i, (g, u) in enumerate(zip(grads, unrolled)):
        fd = numeric_grad(lambda a, i=i: rnn(*args[:i], a, *args[i + 1 :]), args[i].copy())
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g, u, rtol=1e-12, atol=1e-14)


def test_jit_value_and_grad_of_scan_matches_eager():
    w, h0, xs = _args()
    vg = tj.value_and_grad(_rnn, argnums=(0, 2))
    v, (gw, gx) = tj.jit(vg)(w, h0, xs)
    v_ref, (gw_ref, gx_ref) = vg(w, h0, xs)
    np.testing.assert_allclose(v, v_ref, rtol=1e-13)
    np.testing.assert_allclose(gw, gw_ref, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-11, atol=1e-13)


def test_grad_of_grad_through_scan_matches_the_unrolled_loop():
    xs = RNG.standard_normal(4)

    def f(a):
        return lax.scan(lambda c, x: (np.sin(c * a + x), None), np.float64(0.3), xs)[0]

    def f_unrolled(a):
        c = np.float64(0.3)
        for x in xs:
            c = np.sin(c * a + x)
        return c

    a = np.float64(0.8)
    g2 = tj.grad(tj.grad(f))(a)
    np.testing.assert_allclose(g2, tj.grad(tj.grad(f_unrolled))(a), rtol=1e-11)
    fd = numeric_grad(lambda v: tj.grad(f_unrolled)(v[0]), np.array([a]), eps=1e-5)
    np.testing.assert_allclose(g2, fd[0], rtol=1e-6)
    np.testing.assert_allclose(tj.jit(tj.grad(tj.grad(f)))(a), g2, rtol=1e-11)


def test_jvp_through_scan_matches_a_directional_finite_difference():
    w, h0, xs = _args()
    dw, dx = RNG.standard_normal(w.shape), RNG.standard_normal(xs.shape)
    _, tangent = tj.jvp(lambda w, xs: _rnn(w, h0, xs), (w, xs), (dw, dx))
    eps = 1e-6
    fd = (_rnn(w + eps * dw, h0, xs + eps * dx) - _rnn(w - eps * dw, h0, xs - eps * dx)) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_scan_with_integer_carry_and_pytree_xs():
    def f(a, xs):
        def step(c, x):
            k, v = c
            return (k + 1, v * a + x["p"] * k), x["q"] * v

        (_, v), ys = lax.scan(step, (np.int64(0), np.float64(1.0)), xs)
        return v + tnp.sum(ys)

    xs = {"p": RNG.standard_normal(4), "q": RNG.standard_normal(4)}
    a = np.array(0.7)
    g = tj.grad(f, argnums=(0, 1))(a, xs)
    np.testing.assert_allclose(g[0], numeric_grad(lambda v: f(v, xs), a.copy()), rtol=1e-7)
    for k in ("p", "q"):
        fd = numeric_grad(lambda v, k=k: f(a, {**xs, k: v}), xs[k].copy())
        np.testing.assert_allclose(g[1][k], fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_grad_differentiates_the_taken_branch(pred):
    def f(x, y, p):  # p traced: a run-time choice (a constant one is inlined by the passes)
        return tnp.sum(lax.cond(p, lambda a, b: np.sin(a) * b, lambda a, b: a * a - b, x, y))

    x, y, p = RNG.standard_normal(3), RNG.standard_normal(3), np.bool_(pred)
    graph = tj.jit(tj.grad(f, argnums=(0, 1))).lower(x, y, p).graph
    # One cond: the backward one (it recomputes its branch); the forward one's value is unused.
    assert [n.prim.name for n in graph.nodes].count("cond") == 1
    gx, gy = tj.jit(tj.grad(f, argnums=(0, 1)))(x, y, p)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: f(v, y, p), x.copy()), rtol=1e-7)
    np.testing.assert_allclose(gy, numeric_grad(lambda v: f(x, v, p), y.copy()), rtol=1e-7)


def test_switch_grad_with_closed_over_values_and_second_order():
    w = RNG.standard_normal(3)

    def f(i, x):
        branches = [lambda v: tnp.sum(v * w), lambda v: tnp.sum(np.exp(v)), lambda v: tnp.sum(v**3)]
        return lax.switch(i, branches, x)

    x = RNG.standard_normal(3)
    for i in range(3):
        g = tj.grad(f, argnums=1)(i, x)
        np.testing.assert_allclose(
            g, numeric_grad(lambda v, i=i: f(i, v), x.copy()), rtol=1e-7, atol=1e-9
        )
    h = tj.jacrev(tj.grad(lambda x: f(2, x)))(x)
    np.testing.assert_allclose(h, np.diag(6 * x), rtol=1e-12)


def test_fori_loop_with_static_bounds_is_differentiable():
    def f(x):
        return lax.fori_loop(1, 4, lambda i, v: np.sin(v) * i + v, x)

    x = np.array([0.3, -1.2])
    g = tj.grad(lambda x: tnp.sum(f(x)))(x)
    np.testing.assert_allclose(g, numeric_grad(lambda v: np.sum(f(v)), x.copy()), rtol=1e-7)


def test_vjp_saves_the_residuals_the_partition_chose():
    w, h0, xs = _args(n=6, d=4)
    _, f_vjp = tj.vjp(lambda w: _rnn(w, h0, xs), w)
    (g,) = f_vjp(np.float64(1.0))
    np.testing.assert_allclose(g, tj.grad(_rnn_unrolled)(w, h0, xs), rtol=1e-12)
    # Per step the backward needs tanh's output (4 floats): the forward stacks it, not more
    # than a few arrays of the step's size (xs slices are re-read from xs, w is loop-invariant).
    assert f_vjp.saved_bytes <= 6 * 4 * 8 * 2 + w.nbytes + xs.nbytes + h0.nbytes


@given(
    length=st.integers(0, 4),
    reverse=st.booleans(),
    scale=st.floats(-1.5, 1.5),
)
def test_scan_grad_property(length, reverse, scale):
    xs = np.linspace(-1.0, 1.0, 2 * length).reshape(length, 2)

    def f(a):
        def step(c, x):
            return np.tanh(c * a + x) + scale * c, c * x

        c, ys = lax.scan(step, np.array([0.2, -0.4]), xs, reverse=reverse)
        return tnp.sum(c * c) + tnp.sum(ys)

    a = np.array([0.5, 1.1])
    np.testing.assert_allclose(tj.grad(f)(a), numeric_grad(f, a.copy()), rtol=1e-6, atol=1e-8)


def test_scan_bodies_follow_the_memory_budget(monkeypatch):
    def loss(w, xs):
        def step(h, x):
            a = np.exp(h * w + x)
            return np.tanh(tnp.sum(a * a) * 0.01 + h), None

        return tnp.sum(lax.scan(step, np.zeros(8), xs)[0])

    w, xs = RNG.standard_normal(8) * 0.3, RNG.standard_normal((5, 8))
    saved = {}
    for budget in (1.0, 0.0):
        monkeypatch.setattr(tj.config, "memory_budget", budget)
        _, f_vjp = tj.vjp(loss, w, xs)
        saved[budget] = f_vjp.saved_bytes
        g = f_vjp(np.float64(1.0))
        np.testing.assert_allclose(g[0], numeric_grad(lambda v: loss(v, xs), w.copy()), rtol=1e-6)
    assert saved[0.0] < saved[1.0]  # budget 0 recomputes the reduction's input per step


def test_jvp_through_cond_matches_a_directional_finite_difference():
    def f(x):
        return lax.cond(tnp.sum(x) > 0, lambda v: np.sin(v) * v, lambda v: v**3, x)

    x, dx = RNG.standard_normal(4), RNG.standard_normal(4)
    _, tangent = tj.jvp(f, (x,), (dx,))
    eps = 1e-6
    np.testing.assert_allclose(tangent, (f(x + eps * dx) - f(x - eps * dx)) / (2 * eps), rtol=1e-6)


_BODY_OPS = [
    lambda c, x, w: np.sin(c) + x,
    lambda c, x, w: c * w,
    lambda c, x, w: np.tanh(c + x * w),
    lambda c, x, w: c * c * 0.5 - x,
]


def _random_step(ops, w):
    def step(carry, x):
        a, b = carry["a"], carry["b"]
        for k in ops:
            a = _BODY_OPS[k](a, x, w)
            b = b + a * 0.1
        return {"a": a, "b": b}, a * b

    return step


@given(
    ops=st.lists(st.integers(0, len(_BODY_OPS) - 1), min_size=1, max_size=3),
    length=st.integers(0, 3),
    reverse=st.booleans(),
)
def test_random_scan_bodies_match_the_unrolled_loop_and_finite_differences(ops, length, reverse):
    xs = np.linspace(-0.8, 0.9, 2 * length).reshape(length, 2)
    init = {"a": np.array([0.3, -0.2]), "b": np.array([0.1, 0.4])}

    def f(w, unrolled):
        step = _random_step(ops, w)
        if unrolled:
            carry, ys = init, [None] * length
            for t in reversed(range(length)) if reverse else range(length):
                carry, ys[t] = step(carry, xs[t])
            total = sum((tnp.sum(y * (t + 1.0)) for t, y in enumerate(ys)), 0.0)
        else:
            carry, ys = lax.scan(step, init, xs, reverse=reverse)
            total = tnp.sum(ys * np.arange(1.0, length + 1)[:, None])
        return tnp.sum(carry["a"]) + tnp.sum(carry["b"] ** 2) + total

    w = np.array([0.7, -0.4])
    g = tj.grad(lambda w: f(w, False))(w)
    np.testing.assert_allclose(g, tj.grad(lambda w: f(w, True))(w), rtol=1e-11, atol=1e-13)
    fd = numeric_grad(lambda v: f(v, False), w.copy())
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
