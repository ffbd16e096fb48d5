"""`f(x).block_until_ready()` on host results (as JAX), without breaking NumPy interop."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tracejit as tj


@pytest.mark.parametrize("device", ["cpu", "numpy"])
def test_jit_results_have_block_until_ready_and_stay_numpy_arrays(device):
    f = tj.jit(lambda x, y: (x * y + 1.0, (x - y).sum()), device=device)
    x, y = np.arange(4.0), np.full(4, 2.0)
    a, s = f(x, y)
    assert a.block_until_ready() is a and s.block_until_ready() is s
    assert isinstance(a, np.ndarray) and a.flags.writeable
    np.testing.assert_array_equal(a, x * y + 1.0)
    assert float(s) == -2.0
    assert type(a + 1.0) is np.ndarray and type(np.sin(a)) is np.ndarray
    assert type(pickle.loads(pickle.dumps(a))) is np.ndarray
    assert repr(a) == repr(x * y + 1.0)
    again, _ = f(a, y)  # a result passed back in, as a training loop does
    np.testing.assert_array_equal(again, a * y + 1.0)


def test_eager_transform_results_have_block_until_ready():
    g = tj.grad(lambda w: (w * w).sum())(np.arange(3.0))
    np.testing.assert_array_equal(g.block_until_ready(), [0.0, 2.0, 4.0])
    _, tangent = tj.jvp(np.sin, (np.zeros(2),), (np.ones(2),))
    np.testing.assert_array_equal(tangent.block_until_ready(), [1.0, 1.0])


def test_tree_block_until_ready_on_the_test_device(device):
    out = tj.jit(lambda x: {"y": x * 2.0}, device=device)(np.ones(3))
    assert tj.block_until_ready(out) is out
    np.testing.assert_array_equal(tj.device_get(out["y"]), [2.0, 2.0, 2.0])


def test_every_result_of_the_test_device_has_block_until_ready(device):
    """As a JAX user times a call: `out.block_until_ready()` on what the device returned
    (CuPy arrays on cuda: kernels run asynchronously there), donated outputs included."""
    f = tj.jit(lambda x, w: (x * w + 1.0, (x @ w).sum()), device=device)
    step = tj.jit(lambda p, g: p - 0.5 * g, donate_argnums=0, device=device)
    x, w = np.arange(4.0).reshape(2, 2), np.full((2, 2), 2.0)
    a, s = f(x, w)
    p = step(tj.device_put(np.ones(3), device), np.ones(3))
    p = step(p, np.ones(3))  # the output written into the donated buffer
    put = tj.device_put({"w": np.ones(2), "n": 3.0}, device)
    for out in (a, s, p, put["w"], put["n"]):
        assert out.block_until_ready() is out
    if device == "cuda":
        import cupy

        assert isinstance(a, cupy.ndarray) and isinstance(p, cupy.ndarray)
    np.testing.assert_array_equal(tj.device_get(a), x * w + 1.0)
    assert float(tj.device_get(s)) == float((x @ w).sum())
    np.testing.assert_array_equal(tj.device_get(p), [0.0, 0.0, 0.0])
