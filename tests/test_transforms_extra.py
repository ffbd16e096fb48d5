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
