"""custom_vjp / custom_jvp functions (and their rules) closing over traced values: closure
conversion.
Oracles: the analytic rule the user wrote, and central finite differences in float64 of the
primal for the closed-over values (whose derivative is the primal's own)."""

from __future__ import annotations

import numpy as np
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp


def _scaled(s):
    """x * s whose custom derivative w.r.t. x is deliberately 10 s (to tell it apart)."""

    @tj.custom_vjp
    def g(x):
        return tnp.sin(x) * s

    g.defvjp(lambda x: (g(x), tnp.cos(x)), lambda cos_x, ct: (ct * cos_x * s * 10.0,))
    return g


X = np.array([0.3, -1.2, 2.0])
S = np.array([1.5, 0.5, -2.0])


def test_defined_inside_jit_closing_over_a_jit_argument(device):
    def grad_x(x, s):
        return tj.grad(lambda v: _scaled(s)(v).sum())(x)

    f = tj.jit(grad_x, device=device)
    np.testing.assert_allclose(tj.device_get(f(X, S)), np.cos(X) * S * 10.0, rtol=1e-12)


def test_gradient_w_r_t_the_closed_over_value_is_the_primal_derivative():
    def loss(x, s):
        return (_scaled(s)(x) * x).sum()

    gx, gs = tj.grad(loss, argnums=(0, 1))(X, S)
    # x: the user's rule through g (10 s cos x) times x, plus g itself from the product
    np.testing.assert_allclose(gx, 10.0 * S * np.cos(X) * X + np.sin(X) * S, rtol=1e-12)
    np.testing.assert_allclose(gs, numeric_grad(lambda s: loss(X, s), S.copy()), rtol=1e-6)
    jitted = tj.jit(tj.grad(loss, argnums=(0, 1)))(X, S)
    np.testing.assert_allclose(jitted[1], gs, rtol=1e-12)


def test_only_bwd_closes_over_a_tracer():
    def loss(x, s):
        @tj.custom_vjp
        def clip(v):
            return v * 2.0

        clip.defvjp(lambda v: (clip(v), None), lambda _, ct: (ct * s,))
        return clip(x).sum()

    np.testing.assert_allclose(tj.grad(loss)(X, S), S, rtol=1e-15)
    np.testing.assert_allclose(tj.grad(loss, argnums=1)(X, S), np.zeros(3))  # primal ignores s


def test_vmap_of_grad_through_a_closure_converted_rule():
    per_row = tj.vmap(lambda x, s: tj.grad(lambda v: _scaled(s)(v).sum())(x))
    xs, ss = np.stack([X, X + 1.0]), np.stack([S, -S])
    np.testing.assert_allclose(per_row(xs, ss), np.cos(xs) * ss * 10.0, rtol=1e-12)


def test_custom_jvp_closing_over_a_tracer():
    def f(x, s):
        @tj.custom_jvp
        def g(v):
            return tnp.sin(v) * s

        g.defjvp(lambda p, t: (g(*p), t[0] * tnp.cos(p[0]) * s * 10.0))  # 10x, to tell apart
        return g(x).sum()

    gx, gs = tj.grad(f, argnums=(0, 1))(X, S)
    np.testing.assert_allclose(gx, 10.0 * S * np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(gs, np.sin(X), rtol=1e-12)  # the primal's own derivative
    _, tangent = tj.jvp(lambda x: f(x, S), (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, (10.0 * S * np.cos(X)).sum(), rtol=1e-12)


def test_second_order_differentiates_the_rule():
    def grad_x(x, s):  # the rule's output: 10 s cos(x)
        return tj.grad(lambda v: _scaled(s)(v).sum())(x)

    gx, gs = tj.grad(lambda x, s: grad_x(x, s).sum(), argnums=(0, 1))(X, S)
    np.testing.assert_allclose(gx, -10.0 * S * np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(gs, 10.0 * np.cos(X), rtol=1e-12)
