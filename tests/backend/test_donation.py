"""donate_argnums reuses memory: an output of the donated argument's shape and dtype is
written into its buffer when nothing reads the argument afterwards (ir/donation.py), and
the donated array is refused afterwards. Values: NumPy oracles."""

from __future__ import annotations

import pickle

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
        with pytest.raises(DonatedArgumentError, match="'p' was donated"):
            step(old, g)
        if device != "cuda":
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


def test_a_donated_result_refuses_every_use_and_a_donated_numpy_array_is_read_only():
    step = tj.jit(lambda p: p * 0.5, donate_argnums=0)
    mine = np.ones(3)
    p = step(mine)  # jit returns a ConstArray, written into mine's memory
    assert not mine.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        mine[0] = 2.0
    np.testing.assert_array_equal(mine, [0.5, 0.5, 0.5])  # reads see the output it holds
    p2 = step(p)
    uses = {
        "np.add": lambda: p + 1.0,
        "np.sin": lambda: np.sin(p),
        "np.concatenate": lambda: np.concatenate([p, p]),
        "indexing": lambda: p[0],
        "assignment": lambda: p.__setitem__(0, 1.0),
        "float": lambda: float(p),
        ".copy": lambda: p.copy(),
        "pickling": lambda: pickle.dumps(p),
        "passing it as argument": lambda: tj.jit(lambda x: x + 1.0)(p),
    }
    for what, use in uses.items():
        with pytest.raises(DonatedArgumentError, match=f"{what}.* donated"):
            use()
    assert p.shape == (3,) and p.dtype == np.float64 and "donated" in repr(p)
    np.testing.assert_array_equal(p2, [0.25, 0.25, 0.25])
    np.testing.assert_array_equal(step(p2) + 0.0, [0.125, 0.125, 0.125])


def test_a_host_array_donated_to_the_test_device(device):
    f = tj.jit(lambda p: p * 2.0, donate_argnums=0, device=device)
    out = f(np.arange(3.0))  # on cuda it is copied in: nothing to reuse, and no error
    np.testing.assert_array_equal(tj.device_get(out), [0.0, 2.0, 4.0])
