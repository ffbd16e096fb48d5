"""tj.custom_vjp and tj.custom_jvp: the user's rule is used by grad, jit, vmap, jvp and
higher-order grad; values against NumPy, gradients against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ShapeError, UnsupportedError

x64 = np.linspace(-1.5, 2.0, 5)


# ---------------------------------------------------------------- custom_vjp


@tj.custom_vjp
def sin_vjp(x):
    return tnp.sin(x)


sin_vjp.defvjp(lambda x: (tnp.sin(x), tnp.cos(x)), lambda cos_x, g: (cos_x * g,))


@tj.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (tnp.clip(g, -1.0, 1.0),))


def test_custom_vjp_value_and_gradient_against_finite_differences():
    np.testing.assert_array_equal(sin_vjp(x64), np.sin(x64))

    def loss(x):
        return (sin_vjp(x) * x).sum()

    want = numeric_grad(lambda x: (np.sin(x) * x).sum(), x64)
    np.testing.assert_allclose(tj.grad(loss)(x64), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(tj.jit(tj.grad(loss))(x64), want, rtol=1e-7, atol=1e-9)


def test_custom_vjp_rule_is_used_not_derived():
    g = tj.grad(lambda x: (3.0 * clip_gradient(x)).sum())(x64)
    np.testing.assert_array_equal(g, np.ones_like(x64))  # 3 clipped to 1; autodiff would give 3
    g = tj.jit(tj.grad(lambda x: (0.5 * clip_gradient(x)).sum()))(x64)
    np.testing.assert_array_equal(g, np.full_like(x64, 0.5))


def test_custom_vjp_second_order_differentiates_bwd():
    def first(x):
        return tj.grad(lambda x: sin_vjp(x).sum())(x)

    second = tj.grad(lambda x: first(x).sum())(x64)
    want = numeric_grad(lambda x: np.cos(x).sum(), x64)
    np.testing.assert_allclose(second, want, rtol=1e-7, atol=1e-9)


def test_custom_vjp_nondiff_argnums_and_pytrees():
    def f(scale, p):
        return {"y": p["a"] * scale + p["b"]}

    f = tj.custom_vjp(f, nondiff_argnums=(0,))
    f.defvjp(
        lambda scale, p: (f(scale, p), p["a"]),
        lambda scale, a, ct: ({"a": ct["y"] * scale * 10.0, "b": None},),
    )
    p = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    np.testing.assert_array_equal(f(2.0, p)["y"], [5.0, 8.0])
    g = tj.grad(lambda p: f(2.0, p)["y"].sum())(p)
    np.testing.assert_array_equal(g["a"], [20.0, 20.0])
    np.testing.assert_array_equal(g["b"], [0.0, 0.0])


def test_custom_vjp_under_vmap():
    xs = np.stack([x64, 2 * x64, -x64])
    np.testing.assert_array_equal(tj.vmap(sin_vjp)(xs), np.sin(xs))
    per_row = tj.vmap(tj.grad(lambda x: (3.0 * clip_gradient(x)).sum()))(xs)
    np.testing.assert_array_equal(per_row, np.ones_like(xs))
    shared = tj.grad(lambda w: tj.vmap(lambda x: sin_vjp(x * w).sum())(xs).sum())(x64)
    want = numeric_grad(lambda w: np.sin(xs * w).sum(), x64)
    np.testing.assert_allclose(shared, want, rtol=1e-7, atol=1e-9)


def test_custom_vjp_errors_are_named():
    undefined = tj.custom_vjp(lambda x: x)
    with pytest.raises(UnsupportedError, match="defvjp"):
        tj.grad(lambda x: undefined(x).sum())(x64)
    bad_tree = tj.custom_vjp(lambda x: x)
    bad_tree.defvjp(lambda x: (x, None), lambda _, g: g)
    with pytest.raises(TypeError, match="one cotangent per"):
        tj.grad(lambda x: bad_tree(x).sum())(x64)
    bad_shape = tj.custom_vjp(lambda x: x)
    bad_shape.defvjp(lambda x: (x, None), lambda _, g: (g.sum(),))
    with pytest.raises(ShapeError, match="shape"):
        tj.grad(lambda x: bad_shape(x).sum())(x64)
    bad_fwd = tj.custom_vjp(lambda x: x)
    bad_fwd.defvjp(lambda x: x, lambda _, g: (g,))
    with pytest.raises(TypeError, match=r"\(output, residuals\)"):
        tj.grad(lambda x: bad_fwd(x).sum())(x64)


def test_custom_vjp_closing_over_a_tracer_is_closure_converted():
    def loss(w):
        closes = tj.custom_vjp(lambda x: x * w)
        closes.defvjp(lambda x: (x * w, None), lambda _, g: (g,))  # d/dx as 1: the rule's
        return closes(w + 1.0).sum()

    # through x = w + 1 the user's rule (1); through the closed-over w the primal's own (x)
    np.testing.assert_allclose(tj.grad(loss)(x64), 1.0 + (x64 + 1.0), rtol=1e-15)


# ---------------------------------------------------------------- custom_jvp


@tj.custom_jvp
def log1pexp(x):
    return tnp.log(1.0 + tnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + tnp.exp(x)))


def _np_log1pexp(x):
    return np.log1p(np.exp(x))


def test_custom_jvp_gradient_and_jvp_against_finite_differences():
    want = numeric_grad(lambda x: _np_log1pexp(x).sum(), x64)
    np.testing.assert_allclose(tj.grad(lambda x: log1pexp(x).sum())(x64), want, rtol=1e-7)
    np.testing.assert_allclose(tj.jit(tj.grad(lambda x: log1pexp(x).sum()))(x64), want, rtol=1e-7)
    out, tangent = tj.jvp(log1pexp, (x64,), (np.ones_like(x64),))
    np.testing.assert_allclose(out, _np_log1pexp(x64), rtol=1e-14)
    np.testing.assert_allclose(tangent, want, rtol=1e-7)


def test_custom_jvp_rule_is_used_where_autodiff_gives_nan():
    big = np.array([800.0])  # exp overflows: autodiff of the primal gives inf/inf = nan
    np.testing.assert_array_equal(tj.grad(lambda x: log1pexp(x).sum())(big), [1.0])


def test_custom_jvp_second_order_and_vmap():
    def first(x):
        return tj.grad(lambda x: log1pexp(x).sum())(x)

    second = tj.grad(lambda x: first(x).sum())(x64)
    sigmoid = lambda x: 1.0 / (1.0 + np.exp(-x))
    want = numeric_grad(lambda x: sigmoid(x).sum(), x64)
    np.testing.assert_allclose(second, want, rtol=1e-6, atol=1e-9)
    rows = np.stack([x64, x64 + 1.0])
    got = tj.vmap(tj.grad(lambda x: log1pexp(x).sum()))(rows)
    np.testing.assert_allclose(got, sigmoid(rows), rtol=1e-12)


def test_custom_jvp_nondiff_argnums():
    def power(n, x):
        return x**n

    power = tj.custom_jvp(power, nondiff_argnums=(0,))

    @power.defjvp
    def _power_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return power(n, x), n * x ** (n - 1) * t

    want = numeric_grad(lambda x: (x**3).sum(), x64)
    np.testing.assert_allclose(tj.grad(lambda x: power(3, x).sum())(x64), want, rtol=1e-7)


def test_custom_jvp_bad_jvp_output_is_named():
    bad = tj.custom_jvp(lambda x: x * 2.0)
    bad.defjvp(lambda p, t: p[0] * 2.0)
    with pytest.raises(TypeError, match="jvp must return"):
        tj.grad(lambda x: bad(x).sum())(x64)
