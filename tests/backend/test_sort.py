"""tnp.sort/argsort on the `sort` and `argsort` primitives: NumPy's order (stable for
argsort), NaN last, gradients (ties: each cotangent to the element the stable order puts
there)."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad

import tracejit as tj
import tracejit.numpy as tnp


def _data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        x = rng.integers(-3, 4, shape).astype(dtype)  # many ties
        x[rng.random(shape) < 0.2] = np.nan
        return x
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-3, 4, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 0), (4, 7)])
def test_sort_and_argsort_equal_numpy_stable(shape, dtype):
    x = _data(np.random.default_rng(shape[-1]), shape, dtype)
    axes = [-1, None] + ([0] if len(shape) > 1 else [])

    def f(m, x):
        outs = []
        for ax in axes:
            outs += [m.sort(x, axis=ax), m.argsort(x, axis=ax, kind="stable")]
        return outs

    want = f(np, x)
    for got in (f(tnp, x), tj.jit(lambda v: f(tnp, v), device="cpu")(x)):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_long_rows_take_one_sort_node_not_pairwise_comparisons():
    n = 50_000  # pairwise ranks would need n * n = 2.5e9 comparisons
    x = np.random.default_rng(0).normal(size=n)
    graph = tj.make_ir(tnp.argsort)(x)
    assert [nd.prim.name for nd in graph.nodes] == ["argsort"]
    assert [nd.prim.name for nd in tj.make_ir(tnp.sort)(x).nodes] == ["sort"]  # no gather
    np.testing.assert_array_equal(tj.jit(tnp.sort)(x), np.sort(x))


def test_descending_keeps_ties_in_order():
    x = np.array([1.0, 3.0, 1.0, np.nan, 3.0])
    np.testing.assert_array_equal(tnp.argsort(x, descending=True), [1, 4, 0, 2, 3])


def test_vmap_sorts_each_example():
    x = np.random.default_rng(1).normal(size=(3, 4, 5))
    np.testing.assert_array_equal(tj.vmap(lambda v: tnp.sort(v, axis=0))(x), np.sort(x, axis=1))
    want = np.moveaxis(np.argsort(x, axis=1, kind="stable"), 2, 0)
    np.testing.assert_array_equal(tj.vmap(tnp.argsort, in_axes=2)(x), want)


def test_sort_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    x, w = rng.permutation(12).reshape(3, 4) * 0.5, rng.normal(size=(3, 4))

    def loss(m, v):
        return (m.sort(v, axis=0) ** 2 * w).sum()

    want = numeric_grad(lambda v: loss(np, v), x)
    for g in (tj.grad(lambda v: loss(tnp, v)), tj.jit(tj.grad(lambda v: loss(tnp, v)))):
        np.testing.assert_allclose(g(x), want, rtol=1e-7, atol=1e-8)


def test_sort_gradient_at_ties_follows_the_stable_order():
    x = np.array([[2.0, 1.0, 2.0, np.nan, 1.0, 2.0], [0.0, -0.0, 3.0, 0.0, np.nan, np.nan]])
    w = np.random.default_rng(5).normal(size=x.shape)
    want = np.zeros_like(x)
    np.put_along_axis(want, np.argsort(x, axis=1, kind="stable"), w, axis=1)
    loss = tj.grad(lambda v: (tnp.sort(v, axis=1) * w).sum())
    for g in (loss, tj.jit(loss)):
        np.testing.assert_array_equal(g(x), want)


def test_sorts_on_the_test_device(device):
    x = _data(np.random.default_rng(3), (5, 9), np.float32)
    f = tj.jit(lambda v: (tnp.sort(v, axis=1), tnp.argsort(v, axis=0)), device=device)
    got = tj.device_get(f(x))
    np.testing.assert_array_equal(got[0], np.sort(x, axis=1))
    np.testing.assert_array_equal(got[1], np.argsort(x, axis=0, kind="stable"))
