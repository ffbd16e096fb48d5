"""jit on methods, donate_argnums, disable_jit, eval_shape, block_until_ready."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import DonatedArgumentError


class Scaler:
    def __init__(self, k):
        self.k = k
        self.calls = 0

    @partial(tj.jit, static_argnums=0)
    def apply(self, x):
        self.calls += 1  # runs once per trace, not per call
        return x * self.k + 1.0

    @tj.jit
    def plain(self, x):
        return x


def test_jit_on_a_method_binds_self():
    s, x = Scaler(3.0), np.arange(4.0)
    np.testing.assert_array_equal(s.apply(x), x * 3.0 + 1.0)
    np.testing.assert_array_equal(s.apply(x), x * 3.0 + 1.0)
    assert s.calls == 1
    other = Scaler(-1.0)
    np.testing.assert_array_equal(other.apply(x), -x + 1.0)
    np.testing.assert_array_equal(Scaler.apply(s, x), x * 3.0 + 1.0)


def test_jit_on_a_method_with_dynamic_self_names_the_argument():
    with pytest.raises(TypeError, match="argument self of type Scaler"):
        Scaler(1.0).plain(np.ones(2))


def test_donated_argument_cannot_be_reused():
    step = tj.jit(lambda p, g: p - 0.1 * g, donate_argnums=0)
    p, g = np.ones(3), np.full(3, 2.0)
    p2 = step(p, g)
    np.testing.assert_allclose(p2, np.full(3, 0.8))
    with pytest.raises(DonatedArgumentError, match="'p' was donated"):
        step(p, g)
    np.testing.assert_allclose(step(p2, g), np.full(3, 0.6))  # the output is a fresh array
    np.testing.assert_array_equal(step(np.ones(3), g), np.full(3, 0.8))


def test_donate_argnums_is_validated():
    with pytest.raises(ValueError, match="static"):
        tj.jit(lambda a, b: a, static_argnums=1, donate_argnums=1)
    with pytest.raises(ValueError, match="non-negative"):
        tj.jit(lambda a: a, donate_argnums=-1)
    with pytest.raises(ValueError, match="positional argument"):
        tj.jit(lambda a, b=1.0: a, donate_argnums=1)(np.ones(2))


def test_disable_jit_runs_python_with_concrete_values():
    seen = []

    @tj.jit
    def f(x):
        seen.append(type(x).__name__)
        return tnp.sin(x) * 2.0

    x = np.linspace(0, 1, 4)
    with tj.disable_jit():
        np.testing.assert_allclose(f(x), np.sin(x) * 2.0)
    assert seen == ["ndarray"]
    np.testing.assert_allclose(f(x), np.sin(x) * 2.0)
    assert seen[-1] == "Tracer"


def test_eval_shape_traces_without_compiling():
    spec = tj.ShapeDtypeStruct((3, 4), np.float32)
    out = tj.eval_shape(
        lambda x, y: {"s": x.sum(axis=1), "m": x @ y}, spec, np.ones((4, 2), np.float32)
    )
    assert out == {
        "s": tj.ShapeDtypeStruct((3,), np.float32),
        "m": tj.ShapeDtypeStruct((3, 2), np.float32),
    }
    jitted = tj.jit(lambda x: tnp.exp(x))
    assert tj.eval_shape(jitted, spec) == spec
    assert not jitted._executables  # traced, never compiled
    with pytest.raises(TypeError, match="argument"):
        tj.eval_shape(lambda x: x, "not an array")


def test_block_until_ready_returns_its_tree():
    tree = {"a": np.ones(2), "b": (np.zeros(1),)}
    assert tj.block_until_ready(tree) is tree
    out = tj.jit(lambda x: x + 1.0)(np.ones(2))
    np.testing.assert_array_equal(tj.block_until_ready(out), np.full(2, 2.0))


# ---------------------------------------------------------------- Jacobians, linearize


def _f(x):
    return tnp.tanh(x[:3]) * tnp.sum(x * x) + x[1:4] ** 2


def _f_np(x):
    return np.tanh(x[:3]) * np.sum(x * x) + x[1:4] ** 2


def _numeric_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        cols.append((f(x + step) - f(x - step)) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x)) + x.shape)


x5 = np.random.default_rng(5).standard_normal(5)


@pytest.mark.parametrize("jac", [tj.jacfwd, tj.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobians_against_finite_differences(jac):
    want = _numeric_jacobian(_f_np, x5)
    np.testing.assert_allclose(jac(_f)(x5), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tj.jit(jac(_f))(x5), want, rtol=1e-6, atol=1e-8)
    x23 = x5[:4].reshape(2, 2)
    got = jac(lambda a, x: a * tnp.sin(x), argnums=1)(2.0, x23)
    np.testing.assert_allclose(got, _numeric_jacobian(lambda x: 2.0 * np.sin(x), x23), rtol=1e-7)


def test_jacfwd_equals_jacrev_exactly_shaped_for_scalars():
    f = lambda x: tnp.sin(x) * x
    s = np.float64(0.7)
    assert tj.jacfwd(f)(s).shape == tj.jacrev(f)(s).shape == ()
    np.testing.assert_allclose(tj.jacfwd(f)(s), np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-14)


def test_hessian_against_finite_differences_of_the_gradient():
    def loss(x):
        return tnp.sum(tnp.tanh(x) ** 2) * tnp.sum(x)

    grad_np = tj.grad(loss)
    want = _numeric_jacobian(lambda x: np.asarray(grad_np(x)), x5)
    np.testing.assert_allclose(tj.hessian(loss)(x5), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tj.jit(tj.hessian(loss))(x5), want, rtol=1e-6, atol=1e-8)


def test_linearize_reuses_one_forward_for_many_tangents():
    out, f_jvp = tj.linearize(_f, x5)
    np.testing.assert_allclose(out, _f_np(x5), rtol=1e-14)
    jac = _numeric_jacobian(_f_np, x5)
    for t in np.eye(5)[:2]:
        np.testing.assert_allclose(f_jvp(t), jac @ t, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="tangent shape"):
        f_jvp(np.ones(4))
    with pytest.raises(TypeError, match="do not match"):
        f_jvp(np.ones(5), np.ones(5))


# ---------------------------------------------------------------- debug.print


def _printing(x):
    tj.debug.print("x={} total={t:.1f}", x, t=x.sum())
    return (x * x).sum()


def test_debug_print_prints_runtime_values_inside_jit(capsys, device):
    f = tj.jit(_printing, device=device)
    f(np.arange(3.0))
    f(np.ones(3))  # the compiled program prints on every call, with that call's values
    assert capsys.readouterr().out.splitlines() == [
        "x=[0. 1. 2.] total=3.0",
        "x=[1. 1. 1.] total=3.0",
    ]
    grad = tj.jit(tj.grad(_printing), device=device)(np.arange(3.0))
    np.testing.assert_array_equal(tj.device_get(grad), [0.0, 2.0, 4.0])
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.0\n"  # the forward's values


def _plain(x):
    tj.debug.print("x={} total={}", x, x.sum())
    return (x * x).sum()


def test_debug_print_eager_vjp_and_vmap(capsys):
    _plain(np.zeros(2))
    _, f_vjp = tj.vjp(_plain, np.ones(2))  # prints in the forward, not again in the backward
    np.testing.assert_array_equal(f_vjp(np.float64(1.0))[0], [2.0, 2.0])
    tj.vmap(_plain)(np.array([[1.0, 2.0], [3.0, 4.0]]))  # one print of the whole batch
    assert capsys.readouterr().out.splitlines() == [
        "x=[0. 0.] total=0.0",
        "x=[1. 1.] total=2.0",
        "x=[[1. 2.]",
        " [3. 4.]] total=[3. 7.]",
    ]
    with pytest.raises(TypeError, match="format must be a str"):
        tj.debug.print(3, np.ones(2))
