"""Forward mode through tj.custom_vjp: it transposes the user's bwd, which is the JVP only when
bwd is linear in the cotangent. Such a bwd keeps forward mode (jvp, jacfwd, linearize,
hessian); any other raises CustomVJPForwardModeError naming the function and the line, as JAX
refuses forward mode through a custom_vjp. Oracles: central finite differences in float64 of
the primal (whose rules here are its true derivative), and the analytic rule for reverse mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.errors import CustomVJPForwardModeError, UnsupportedError

EPS = 1e-6
RNG = np.random.default_rng(3)
X = RNG.standard_normal(4)
W = RNG.standard_normal((3, 4))


@tj.custom_vjp
def layer(x, w):
    """(tanh(w @ x), relu(x) / 2): its bwd, the true VJP, uses most linear primitives."""
    return tnp.tanh(w @ x), tnp.where(x > 0, x, 0.0) / 2.0


def _layer_fwd(x, w):
    y = layer(x, w)
    return y, (x, w, y[0])


def _layer_bwd(res, g):
    x, w, y = res
    g1, g2 = g
    d = (g1 * (1.0 - y * y)).astype(np.float32).astype(np.float64)  # float casts are linear
    gx = tnp.transpose(w) @ d + tnp.where(x > 0, g2, 0.0) / 2.0
    gw = tnp.reshape(d, (3, 1)) * tnp.broadcast_to(x, (3, 4))
    gx = lax.cond(x[0] > 10.0, lambda v: -v, lambda v: tnp.concatenate([v[:2], v[2:]]), gx)
    return gx, gw


layer.defvjp(_layer_fwd, _layer_bwd)


def _primal(x, w):
    return np.tanh(w @ x), np.where(x > 0, x, 0.0) / 2.0


def _fd(f, xs, ts):
    plus = f(*[x + EPS * t for x, t in zip(xs, ts)])
    minus = f(*[x - EPS * t for x, t in zip(xs, ts)])
    return [(p - m) / (2 * EPS) for p, m in zip(plus, minus)]


def test_linear_bwd_keeps_jvp_and_jacfwd_equal_to_finite_differences():
    tx, tw = RNG.standard_normal(4), RNG.standard_normal((3, 4))
    out, tangent = tj.jvp(layer, (X, W), (tx, tw))
    for got, want in zip(out, _primal(X, W)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(tangent, _fd(_primal, [X, W], [tx, tw])):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)  # float32 cast: 1e-7
    jac = tj.jacfwd(lambda x: layer(x, W)[0])(X)
    want = np.stack([_fd(_primal, [X, W], [e, 0 * W])[0] for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(jac, want, rtol=1e-6, atol=1e-7)
    _, f_jvp = tj.linearize(lambda x: layer(x, W)[1], X)
    np.testing.assert_allclose(f_jvp(tx), _fd(_primal, [X, W], [tx, 0 * W])[1], atol=1e-7)


def test_linear_bwd_keeps_hessian_and_jvp_under_vmap():
    hess = tj.hessian(lambda x: tnp.sum(layer(x, W)[0] ** 2))(X)
    grad = lambda x: 2.0 * W.T @ (np.tanh(W @ x) * (1.0 - np.tanh(W @ x) ** 2))
    want = np.stack([(grad(X + EPS * e) - grad(X - EPS * e)) / (2 * EPS) for e in np.eye(4)])
    np.testing.assert_allclose(hess, want, rtol=1e-6, atol=1e-7)
    xs, ts = np.stack([X, -X]), RNG.standard_normal((2, 4))
    _, tangent = tj.jvp(tj.vmap(lambda x: layer(x, W)[0]), (xs,), (ts,))
    want = [_fd(_primal, [x, W], [t, 0 * W])[0] for x, t in zip(xs, ts)]
    np.testing.assert_allclose(tangent, np.stack(want), rtol=1e-6, atol=1e-7)


def _with_bwd(name, bwd_of_g):
    @tj.custom_vjp
    def f(x):
        return tnp.sin(x)

    f.defvjp(lambda x: (f(x), tnp.cos(x)), lambda c, g: (bwd_of_g(g) * c,))
    f.__name__ = name
    return f


def _scan_square(g):  # a carry squared in a scan: not linear
    return lax.scan(lambda c, v: (c * c + v, c), 0.0 * g[0], g)[1]


def _scan_square_np(g):
    c, ys = 0.0 * g[0], []
    for v in g:
        ys.append(c)
        c = c * c + v
    return np.array(ys)


NONLINEAR = {  # name: (bwd of the cotangent, the primitive named, the same bwd in NumPy)
    "square": (lambda g: g * g, "mul", lambda g: g * g),
    "clip": (lambda g: tnp.clip(g, -1.0, 1.0), "m", lambda g: np.clip(g, -1.0, 1.0)),
    "round": (tnp.round, "round", np.round),
    "quantize": (
        lambda g: tnp.floor(g * 8.0).astype(np.float16) / 8.0,
        "floor",
        lambda g: np.floor(g * 8.0).astype(np.float16) / 8.0,
    ),
    "scan_square": (_scan_square, "mul", _scan_square_np),
}


def _while_jvp(f):
    def loop(x):
        return lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, f(c[1])), (0, x))[1]

    return tj.jvp(loop, (X,), (np.ones(4),))


@pytest.mark.parametrize("name", sorted(NONLINEAR))
def test_nonlinear_bwd_refuses_forward_mode_by_name_and_line(name):
    bwd_of_g, prim, numpy_bwd = NONLINEAR[name]
    f = _with_bwd(name, bwd_of_g)
    uses = {
        "jvp": lambda: tj.jvp(f, (X,), (np.ones(4),)),
        "jacfwd": lambda: tj.jacfwd(f)(X),
        "linearize": lambda: tj.linearize(f, X),
        "jvp of a while_loop": lambda: _while_jvp(f),
        "jvp in a scan": lambda: tj.jvp(
            lambda x: lax.scan(lambda c, _: (f(c), None), x, None, length=2)[0], (X,), (X,)
        ),
    }
    for what, use in uses.items():
        with pytest.raises(CustomVJPForwardModeError) as info:
            use()
        msg = str(info.value)
        assert isinstance(info.value, UnsupportedError), what
        assert f"custom_vjp function {name!r}" in msg, (what, msg)
        assert f"`{prim}" in msg and "not linear in" in msg and "tj.custom_jvp" in msg, msg
        assert "test_custom_vjp_forward_mode.py:" in msg, msg  # the bwd's line
    # reverse mode still follows the rule: vjp(ct) = bwd(ct) * cos(x)
    ct = RNG.standard_normal(4)
    (got,) = tj.vjp(f, X)[1](ct)
    np.testing.assert_allclose(got, numpy_bwd(ct) * np.cos(X), rtol=1e-12)
    got = tj.grad(lambda x: tnp.sum(f(x)))(X)
    np.testing.assert_allclose(got, numpy_bwd(np.ones(4)) * np.cos(X), rtol=1e-12)


def test_hessian_differentiates_a_nonlinear_bwd_as_code():
    """Forward over reverse differentiates bwd w.r.t. its residuals, not its cotangent: fine."""
    f = _with_bwd("round_again", lambda g: tnp.round(g * 4.0) / 4.0)
    hess = tj.hessian(lambda x: tnp.sum(f(x)))(X)
    np.testing.assert_allclose(hess, np.diag(-np.sin(X)), rtol=1e-12)


def test_scan_over_the_cotangent_is_linear():
    @tj.custom_vjp
    def cumsum(x):
        return tnp.cumsum(x)

    def bwd(_, g):  # reversed cumulative sum by a scan: linear in g
        return (lax.scan(lambda c, v: (c + v, c + v), 0.0 * g[0], g, reverse=True)[1],)

    cumsum.defvjp(lambda x: (cumsum(x), None), bwd)
    t = RNG.standard_normal(4)
    np.testing.assert_allclose(tj.jvp(cumsum, (X,), (t,))[1], np.cumsum(t), rtol=1e-12)


def test_mxfp8_scaled_dot_general_refuses_jvp_instead_of_returning_zero():
    a = RNG.standard_normal((2, 32)).astype(np.float32)
    b = RNG.standard_normal((3, 32)).astype(np.float32)
    dn = (((1,), (1,)), ((), ()))
    mx = [tj.nn.get_scaled_dot_general_config("mxfp8")] * 3
    f = lambda a: tj.nn.scaled_dot_general(a, b, dn, configs=mx)
    with pytest.raises(CustomVJPForwardModeError, match="'product'.*`abs`.*not linear in it"):
        tj.jvp(f, (a,), (np.ones_like(a),))
    assert np.abs(tj.grad(lambda a: tnp.sum(f(a)))(a)).sum() > 0  # reverse mode unchanged
    # nvfp4's bwd masks exact products (linear): forward mode is the transpose of vjp
    fp4 = [tj.nn.get_scaled_dot_general_config("nvfp4")] * 3
    f4 = lambda a: tj.nn.scaled_dot_general(a, b, dn, configs=fp4)
    t, c = RNG.standard_normal(a.shape), RNG.standard_normal((2, 3))
    tangent = tj.jvp(f4, (a,), (t.astype(np.float32),))[1]
    (cotangent,) = tj.vjp(f4, a)[1](c.astype(np.float32))
    np.testing.assert_allclose(np.sum(tangent * c), np.sum(t * cotangent), rtol=1e-4)
