"""Forward mode through lax.while_loop (and loops nested in scan / cond), as JAX: the
tangent is carried through the loop with the primal. Oracles: central finite differences
in float64 along the tangent direction."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.errors import UnsupportedError

EPS = 1e-6
RNG = np.random.default_rng(7)


def _fd(f, xs, ts):
    """d/de f(*(x + e t)) at e = 0, by central differences (a pytree of leaves)."""
    plus = f(*[x + EPS * t for x, t in zip(xs, ts)])
    minus = f(*[x - EPS * t for x, t in zip(xs, ts)])
    return tj.tree_map(lambda a, b: (np.asarray(a) - b) / (2 * EPS), plus, minus)


def _newton_sqrt(a, w):
    """sqrt(a) by Newton's method until converged (the trip count depends on a), plus a
    pytree carry with an int counter and a loop-invariant w that has a tangent."""

    def cond(c):
        return (c["n"] < 50) & (tnp.max(tnp.abs(c["x"] * c["x"] - a)) > 1e-12)

    def body(c):
        x = 0.5 * (c["x"] + a / c["x"])
        return {"n": c["n"] + 1, "x": x, "acc": c["acc"] + tnp.sin(w * x)}

    out = lax.while_loop(cond, body, {"n": 0, "x": a + 1.0, "acc": tnp.zeros_like(a)})
    return out["x"], out["acc"] * w


def _check(f, xs, ts, device=None, rtol=1e-6):
    out, tan = tj.jvp(f, tuple(xs), tuple(ts))
    for got, want in zip(tj.tree_leaves(out), tj.tree_leaves(f(*xs))):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(tj.tree_leaves(tan), tj.tree_leaves(_fd(f, xs, ts))):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-8)
    jitted = tj.jit(lambda *a: tj.jvp(f, a[: len(xs)], a[len(xs) :]), device=device)
    _, jtan = jitted(*xs, *ts)
    for got, want in zip(tj.tree_leaves(jtan), tj.tree_leaves(tan)):
        np.testing.assert_allclose(tj.device_get(got), want, rtol=1e-9, atol=1e-12)


def test_jvp_through_while_loop_with_a_data_dependent_trip_count(device):
    a, w = np.array([2.0, 0.3, 7.0]), np.array([0.5, -1.2, 0.8])
    ta, tw = RNG.standard_normal(3), RNG.standard_normal(3)
    _check(_newton_sqrt, [a, w], [ta, tw], device)
    _, (t_sqrt, _) = tj.jvp(_newton_sqrt, (a, w), (ta, np.zeros(3)))
    np.testing.assert_allclose(t_sqrt, ta / (2 * np.sqrt(a)), rtol=1e-9)  # analytic


def test_fori_loop_with_traced_bounds_jvp_and_jacfwd(device):
    def f(x, n):  # n is traced under jit: the fori_loop is a while_loop
        return lax.fori_loop(0, n, lambda i, v: tnp.tanh(v * 1.3 + i * 0.1), x)

    x, t = np.array([0.2, -0.4]), np.array([1.0, 2.0])
    n = np.int64(4)
    tangent = tj.jit(lambda x, t, n: tj.jvp(lambda v: f(v, n), (x,), (t,))[1], device=device)
    np.testing.assert_allclose(
        tj.device_get(tangent(x, t, n)), _fd(lambda x: f(x, n), [x], [t]), rtol=1e-6
    )
    jac = tj.jit(tj.jacfwd(f), device=device)(x, n)
    cols = [_fd(lambda x: f(x, n), [x], [e]) for e in np.eye(2)]
    np.testing.assert_allclose(tj.device_get(jac), np.stack(cols, axis=1), rtol=1e-6)
    with pytest.raises(UnsupportedError, match="while_loop"):  # it is a while_loop indeed
        tj.jit(tj.grad(lambda x, n: f(x, n).sum()))(x, n)


def test_fori_loop_with_static_bounds_jvp():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, v: v * tnp.cos(v) + i, x)

    x, t = np.array([0.2, 1.1]), np.array([0.3, -1.0])
    _check(f, [x], [t])


def test_while_nested_in_scan_and_cond():
    def f(x, y):
        def step(c, xi):
            def halve(v):
                return lax.while_loop(lambda u: tnp.sum(u * u) > 1.0, lambda u: u * 0.6, v)

            c = lax.cond(tnp.sum(xi) > 0, halve, lambda v: v * tnp.sin(v), c * xi + y)
            return c, tnp.sum(c * c)

        return lax.scan(step, x, np.array([[1.5, 2.0], [-0.3, 0.2], [2.0, 1.0]]))

    x, y = np.array([1.4, -0.8]), np.array([0.3, 0.9])
    _check(f, [x, y], [np.array([0.7, 0.1]), np.array([-0.2, 0.5])])


def test_second_order_forward_mode_and_linearize_through_while():
    def f(x):
        return lax.while_loop(lambda v: v[0] < 3.0, lambda v: v * v + 0.5, x)

    x, t = np.array([0.9, 0.2]), np.array([1.0, 0.0])

    def df(x):
        return tj.jvp(f, (x,), (t,))[1]

    _, d2 = tj.jvp(df, (x,), (t,))
    np.testing.assert_allclose(d2, _fd(df, [x], [t]), rtol=1e-5)
    out, f_jvp = tj.linearize(f, x)
    np.testing.assert_array_equal(out, f(x))
    np.testing.assert_allclose(f_jvp(t), df(x), rtol=1e-12)
    np.testing.assert_allclose(f_jvp(2 * t), 2 * df(x), rtol=1e-12)
    out, tangent, aux = tj.jvp(lambda v: (f(v), f(v)[0] > 5.0), (x,), (t,), has_aux=True)
    np.testing.assert_allclose(tangent, df(x), rtol=1e-12)
    assert aux == (f(x)[0] > 5.0)


def test_reverse_mode_through_while_still_says_to_use_scan():
    def f(x):
        return lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x)

    with pytest.raises(UnsupportedError, match=r"while_loop.*lax\.scan.*forward mode"):
        tj.jacrev(f)(np.float64(1.0))
    np.testing.assert_allclose(tj.jacfwd(f)(np.float64(1.0)), 16.0)
