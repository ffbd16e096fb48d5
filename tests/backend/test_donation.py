"""donate_argnums reuses memory: an output of the donated argument's shape and dtype is
written into its buffer when nothing reads the argument afterwards (ir/donation.py), and
the donated array is refused afterwards. Values: NumPy oracles."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
from tracejit.errors import DonatedArgumentError
from tracejit.ir.donation import alias_plan
from tracejit.ir.fusion import fuse
from tracejit.ir.memory import plan_memory


def _address(x) -> int:
    if hasattr(x, "__cuda_array_interface__"):
        return x.__cuda_array_interface__["data"][0]
    return x.__array_interface__["data"][0]


def _on(device, x):
    if device == "cuda":
        import cupy

        return cupy.asarray(x)
    return x


def test_sgd_steps_write_into_the_donated_parameters(device):
    step = tj.jit(lambda p, g: (p - 0.1 * g, (g * g).sum()), donate_argnums=0, device=device)
    p0 = np.linspace(-1.0, 1.0, 6)
    g = np.arange(6.0)
    p = _on(device, p0.copy())
    first = _address(p)
    want = p0.copy()
    for _ in range(3):
        old = p
        p, norm = step(p, g)
        want = want - 0.1 * g
        np.testing.assert_allclose(tj.device_get(p), want, rtol=1e-15)
        assert float(tj.device_get(norm)) == 55.0
        assert _address(p) == first  # the same memory, call after call
        assert p is not old
        if device != "cuda":  # (CuPy arrays are only marked where they take weak references)
            with pytest.raises(DonatedArgumentError, match="'p' was donated"):
                step(old, g)
            assert not old.flags.writeable  # it holds the output now: no write through it


def test_a_pytree_of_parameters_is_donated_leaf_by_leaf():
    step = tj.jit(lambda ps, g: {k: v * g for k, v in ps.items()}, donate_argnums=0)
    ps = {"a": np.ones(3), "b": np.full(3, 2.0)}
    where = {k: _address(v) for k, v in ps.items()}
    out = step(ps, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out["a"], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out["b"], [2.0, 4.0, 6.0])
    assert {k: _address(v) for k, v in out.items()} == where


def test_unsafe_or_mismatched_outputs_get_fresh_memory():
    transpose = tj.jit(lambda a: a.T + 1.0, donate_argnums=0)  # reads a[j, i] to write [i, j]
    a = np.arange(9.0).reshape(3, 3)
    want, where = a.T + 1.0, _address(a)
    out = transpose(a)
    np.testing.assert_array_equal(out, want)
    assert _address(out) != where
    total = tj.jit(lambda a: a.sum(axis=0), donate_argnums=0)(np.ones((2, 3)))  # shape differs
    np.testing.assert_array_equal(total, [2.0, 2.0, 2.0])
    x = np.arange(4.0)
    twice = tj.jit(lambda p, q: p * 2.0 + q[::-1], donate_argnums=0)(x, x)  # same array twice
    np.testing.assert_array_equal(twice, np.arange(4.0) * 2.0 + np.arange(4.0)[::-1])
    view = np.arange(8.0)[:4]  # a view of a larger array: never written through
    out = tj.jit(lambda p: p + 1.0, donate_argnums=0)(view)
    np.testing.assert_array_equal(out, np.arange(4.0) + 1.0)
    assert _address(out) != _address(view)


def test_alias_plan_needs_the_last_read_before_the_write():
    def schedule(f, *args):
        return plan_memory(fuse(tj.make_ir(f)(*args)))

    x = np.ones((4, 4))
    assert alias_plan(schedule(lambda p: p * 2.0, x), [0]) == {0: 0}  # in place, elementwise
    assert alias_plan(schedule(lambda p: p @ p, x), [0]) == {}  # matmul reads while writing
    assert alias_plan(schedule(lambda p: p[::-1] * 2.0, x), [0]) == {}  # reversed rows
    assert alias_plan(schedule(lambda p: p.T * 2.0, x), [0]) == {}  # transposed


def test_two_outputs_of_one_kernel_reading_the_donated_input(device):
    two = tj.jit(lambda p: (p * 2.0, p + 1.0), donate_argnums=0, device=device)
    p0 = np.arange(12.0).reshape(3, 4)
    a, b = two(_on(device, p0.copy()))
    np.testing.assert_array_equal(tj.device_get(a), p0 * 2.0)
    np.testing.assert_array_equal(tj.device_get(b), p0 + 1.0)
