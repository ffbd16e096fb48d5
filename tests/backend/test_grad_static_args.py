"""grad / value_and_grad keep non-differentiated, array-free arguments concrete (as JAX)."""

from __future__ import annotations

import numpy as np
from _finite_diff import numeric_grad

import tracejit as tj


def _power_sum(x, n, mode):
    s = 0.0
    for _ in range(n):  # needs a concrete n
        s = s + (x * x).sum() if mode == "square" else s + x.sum()
    return s


def test_python_int_and_str_arguments_stay_concrete_under_grad():
    x = np.array([0.5, -1.0, 2.0])
    g = tj.grad(_power_sum)(x, 3, "square")
    np.testing.assert_allclose(g, 6 * x, rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(lambda v: _power_sum(v, 3, "square"), x), 1e-6)
    np.testing.assert_allclose(tj.grad(_power_sum)(x, 2, "sum"), 2 * np.ones(3))


def test_jit_of_value_and_grad_with_static_argnums():
    x = np.array([1.0, 2.0])
    f = tj.jit(tj.value_and_grad(_power_sum), static_argnums=(1, 2))
    v, g = f(x, 2, "square")
    assert float(v) == 2 * 5.0
    np.testing.assert_array_equal(g, 4 * x)
    v, g = f(x, 1, "square")  # another static value: another trace
    assert float(v) == 5.0
    np.testing.assert_array_equal(g, 2 * x)


def test_array_arguments_outside_argnums_and_python_floats():
    def f(w, x, scale):
        return (w * x).sum() * scale

    w, x = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_array_equal(tj.grad(f, argnums=1)(w, x, 2.0), 2 * w)
    np.testing.assert_array_equal(tj.grad(f)(w, x, 0.5), 0.5 * x)
