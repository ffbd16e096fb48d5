"""tj.vmap: axes, pytrees, nesting, and composition with jit and grad, against loops."""

from __future__ import annotations

import numpy as np
import pytest
from _finite_diff import numeric_grad
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.batching import BATCH_RULES
from tracejit.errors import BatchingError

rng = np.random.default_rng(0)


def _loop(f, args, in_axes):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    rows = []
    for b in range(size):
        ex = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
        rows.append(f(*ex))
    return rows


def _layer(x, w, b):
    return np.tanh(x @ w + b)


def test_in_axes_and_out_axes():
    x, w, b = rng.random((4, 3)), rng.random((3, 5)), rng.random(5)
    got = tj.vmap(_layer, in_axes=(0, None, None))(x, w, b)
    np.testing.assert_allclose(got, np.stack(_loop(_layer, (x, w, b), (0, None, None))), rtol=1e-12)
    xt = np.ascontiguousarray(x.T)
    got = tj.vmap(_layer, in_axes=(1, None, None), out_axes=1)(xt, w, b)
    np.testing.assert_allclose(got, np.stack(_loop(_layer, (x, w, b), (0, None, None)), axis=1))
    got = tj.vmap(lambda x, y: x * y, in_axes=(-1, 0))(xt, rng.random((4, 3)))
    assert got.shape == (4, 3)


def test_pytree_in_axes_and_outputs():
    params = {"w": rng.random((3, 2)), "b": rng.random((6, 2))}
    x = rng.random((6, 3))

    def f(p, x):
        return {"y": x @ p["w"] + p["b"], "n": (x * x).sum()}

    out = tj.vmap(f, in_axes=({"w": None, "b": 0}, 0), out_axes={"y": 0, "n": 0})(params, x)
    np.testing.assert_allclose(out["y"], x @ params["w"] + params["b"], rtol=1e-12)
    np.testing.assert_allclose(out["n"], (x * x).sum(axis=1), rtol=1e-12)


def test_keyword_arguments_map_over_axis_0():
    x, y = rng.random((3, 2)), rng.random((3, 2))
    got = tj.vmap(lambda x, y=None: x - y)(x, y=y)
    np.testing.assert_array_equal(got, x - y)


def test_unbatched_output_is_broadcast_and_out_axes_none():
    x = rng.random((4, 2))
    const, mean = tj.vmap(lambda x, c: (c * 2.0, x.sum()), in_axes=(0, None))(x, np.ones(3))
    np.testing.assert_array_equal(const, np.full((4, 3), 2.0))
    got = tj.vmap(lambda x, c: c * 2.0, in_axes=(0, None), out_axes=None)(x, np.ones(3))
    np.testing.assert_array_equal(got, np.full(3, 2.0))
    np.testing.assert_allclose(mean, x.sum(axis=1))


def test_nested_vmap_is_an_outer_product():
    a, b = rng.random(4), rng.random(5)
    got = tj.vmap(tj.vmap(lambda x, y: x * y + 1.0, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(got, np.outer(a, b) + 1.0)


def test_vmap_of_jit_and_jit_of_vmap():
    x = rng.random((5, 3)).astype(np.float32)
    inner = tj.jit(lambda x: tnp.exp(x).sum() * 2.0)
    want = np.exp(x).sum(axis=1) * 2.0
    np.testing.assert_allclose(tj.vmap(inner)(x), want, rtol=1e-6)
    np.testing.assert_allclose(tj.jit(tj.vmap(inner))(x), want, rtol=1e-6)


def test_grad_of_vmap_against_finite_differences():
    x, w = rng.random((4, 3)), rng.random((3, 2))

    def loss(w):
        return (tj.vmap(lambda x: np.tanh(x @ w), in_axes=0)(x) ** 2).sum()

    def numpy_loss(w):
        return (np.tanh(x @ w) ** 2).sum()

    np.testing.assert_allclose(tj.grad(loss)(w), numeric_grad(numpy_loss, w), rtol=1e-6)


def _mlp_loss(params, x, y):
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return ((out - y) ** 2).sum()


def _mlp(dtype, n=8):
    params = {
        "w1": rng.standard_normal((6, 16)).astype(dtype),
        "b1": rng.standard_normal(16).astype(dtype),
        "w2": rng.standard_normal((16, 2)).astype(dtype),
    }
    return (
        params,
        rng.standard_normal((n, 6)).astype(dtype),
        rng.standard_normal((n, 2)).astype(dtype),
    )


def test_per_example_gradients_equal_a_loop_of_grad():
    params, x, y = _mlp(np.float64)
    per_example = tj.vmap(tj.grad(_mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    loop = [tj.grad(_mlp_loss)(params, x[i], y[i]) for i in range(len(x))]
    for k in params:
        np.testing.assert_allclose(per_example[k], np.stack([g[k] for g in loop]), rtol=1e-12)
    # one example's gradient against central differences of the NumPy loss
    w1 = params["w1"]

    def numpy_loss(w):
        h = np.tanh(x[0] @ w + params["b1"])
        return ((h @ params["w2"] - y[0]) ** 2).sum()

    np.testing.assert_allclose(
        per_example["w1"][0], numeric_grad(numpy_loss, w1), rtol=1e-6, atol=1e-7
    )


def test_per_example_gradients_compile_to_one_batched_program():
    fn = tj.jit(tj.vmap(tj.grad(_mlp_loss), in_axes=(None, 0, 0)))
    params, x, y = _mlp(np.float32, 4)
    got = fn(params, x, y)
    want = [tj.grad(_mlp_loss)(params, x[i], y[i]) for i in range(4)]
    for k in params:
        np.testing.assert_allclose(got[k], np.stack([g[k] for g in want]), rtol=2e-5, atol=1e-5)
    assert len(fn._executables) == 1
    # one batched program: its size does not grow with the number of examples
    big = _mlp(np.float32, 64)
    assert len(fn.lower(*big).graph.nodes) == len(fn.lower(params, x, y).graph.nodes)


def test_random_with_a_key_per_example():
    keys = tj.random.split(tj.random.key(0), 3)
    got = tj.vmap(lambda k: tj.random.uniform(k, (4,)))(keys)
    want = np.stack([tj.random.uniform(k, (4,)) for k in keys])
    np.testing.assert_array_equal(got, want)


def test_errors_are_named():
    with pytest.raises(BatchingError, match="different sizes"):
        tj.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(BatchingError, match="axis_size"):
        tj.vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="one entry per argument"):
        tj.vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="out of range"):
        tj.vmap(lambda a: a, in_axes=2)(np.ones(3))
    with pytest.raises(BatchingError, match="out_axes cannot be None"):
        tj.vmap(lambda a: a * 2.0, out_axes=None)(np.ones(3))


def test_axis_size_with_nothing_mapped():
    got = tj.vmap(lambda c: c + 1.0, in_axes=None, axis_size=3)(np.ones(2))
    np.testing.assert_array_equal(got, np.full((3, 2), 2.0))


def test_primitive_without_rule_raises_batching_error(monkeypatch):
    monkeypatch.delitem(BATCH_RULES, "cumsum")
    with pytest.raises(BatchingError, match="no batching rule for 'cumsum'"):
        tj.vmap(lambda x: tnp.cumsum(x))(np.ones((2, 3)))


def _collatz_steps(n):
    def body(c):
        n, steps = c
        odd = tnp.remainder(n, 2.0) == 1.0
        return tnp.where(odd, 3.0 * n + 1.0, n / 2.0), steps + 1.0

    return tj.lax.while_loop(lambda c: c[0] > 1.0, body, (n, n * 0.0))[1]


def test_vmap_of_control_flow_compiled_against_a_loop():
    ns = np.array([1.0, 6.0, 7.0, 27.0])  # per-example trip counts 0, 8, 16, 111
    want = np.array([_collatz_steps(n) for n in ns])
    np.testing.assert_array_equal(want, [0.0, 8.0, 16.0, 111.0])
    np.testing.assert_array_equal(tj.jit(tj.vmap(_collatz_steps))(ns), want)

    def cumulative(w, xs):
        return tj.lax.scan(lambda c, x: (c * w + x, c), np.float64(0.0), xs)

    xs = rng.random((3, 5))
    final, ys = tj.jit(tj.vmap(cumulative, in_axes=(None, 0)))(0.5, xs)
    loop = [cumulative(0.5, x) for x in xs]
    np.testing.assert_allclose(final, [f for f, _ in loop], rtol=1e-14)
    np.testing.assert_allclose(ys, np.stack([y for _, y in loop]), rtol=1e-14)


# ---------------------------------------------------------------- property: random programs

_UNARY = [tnp.sin, tnp.tanh, tnp.exp, lambda v: v * v, lambda v: tnp.cumsum(v, axis=-1)]
_BINARY = [tnp.add, tnp.multiply, tnp.maximum, lambda a, b: a @ b.T[:, :3]]
_REDUCE = [
    lambda v: v.sum(),
    lambda v: v.max(axis=0).sum(),
    lambda v: (v[::-1, 1:] ** 2).mean(),
    lambda v: tnp.concatenate([v, v * 2.0], axis=1).sum(axis=1).prod(),
]


@st.composite
def _programs(draw):
    """A random (3, 3) -> scalar program: unary/binary steps over two inputs, then a reduction."""
    steps = draw(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 1)), min_size=1, max_size=4))
    reduce = draw(st.integers(0, len(_REDUCE) - 1))

    def program(x, y):
        v = x
        for op, other in steps:
            if op < len(_UNARY):
                v = _UNARY[op](v)
            else:
                v = _BINARY[op - len(_UNARY)](v, y if other else x)
            v = tnp.tanh(v)  # keeps values in range for the next step
        return _REDUCE[reduce](v)

    return program


@settings(deadline=None)
@given(
    _programs(),
    st.sampled_from([(0, 0), (1, None), (None, 2), (2, 0)]),
    st.integers(0, 2**31 - 1),
)
def test_random_programs_batch_like_a_loop(program, in_axes, seed):
    r = np.random.default_rng(seed)
    size = 3
    shapes = [(3, 3) if a is None else (3, 3)[:a] + (size,) + (3, 3)[a:] for a in in_axes]
    x, y = (r.uniform(-1, 1, s) for s in shapes)
    got = tj.vmap(program, in_axes=in_axes)(x, y)
    want = np.stack(_loop(program, (x, y), in_axes))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    grads = tj.vmap(tj.grad(program, argnums=(0, 1)), in_axes=in_axes)(x, y)
    loop = _loop(tj.grad(program, argnums=(0, 1)), (x, y), in_axes)
    for k in range(2):
        np.testing.assert_allclose(grads[k], np.stack([g[k] for g in loop]), rtol=1e-10, atol=1e-12)


def test_batched_programs_compile_for_the_test_device(device):
    """Per-example gradients, batched gathers and scatters, compiled on cpu (or cuda)."""
    params, x, y = _mlp(np.float32, 4)
    fn = tj.jit(tj.vmap(tj.grad(_mlp_loss), in_axes=(None, 0, 0)), device=device)
    got = tj.device_get(fn(params, x, y))
    for k in params:
        want = np.stack([tj.grad(_mlp_loss)(params, x[i], y[i])[k] for i in range(4)])
        np.testing.assert_allclose(got[k], want, rtol=1e-4, atol=5e-5)  # float32, compiled tanh
    table = rng.random((4, 5)).astype(np.float32)
    idx = np.array([[0, 4], [1, 1], [-1, 2], [2, 3]])  # one row of indices per example

    def gather_scatter(t, i):
        return tnp.take(t, i) * 2.0, tnp.zeros(5, np.float32).at[i].add(t[:2])

    gathered, scattered = tj.device_get(tj.jit(tj.vmap(gather_scatter), device=device)(table, idx))
    loop = _loop(gather_scatter, (table, idx), (0, 0))
    np.testing.assert_array_equal(gathered, np.stack([g for g, _ in loop]))
    np.testing.assert_array_equal(scattered, np.stack([s for _, s in loop]))


def test_per_example_gradients_through_scan_and_cond():
    def loss(w, xs):
        c, ys = tj.lax.scan(lambda c, x: (tnp.tanh(c * w + x), c), np.zeros(3), xs)
        return (c**2).sum() + ys.sum()

    w, xs = rng.random(3), rng.random((4, 5, 3))
    loop = np.stack([tj.grad(loss)(w, x) for x in xs])
    np.testing.assert_allclose(tj.vmap(tj.grad(loss), in_axes=(None, 0))(w, xs), loop, rtol=1e-12)
    total = tj.grad(lambda w: tj.vmap(loss, in_axes=(None, 0))(w, xs).sum())(w)
    np.testing.assert_allclose(total, loop.sum(axis=0), rtol=1e-12)

    def branchy(x):  # the branch taken differs per example
        return tj.lax.cond(x.sum() > 1.0, lambda v: tnp.sin(v), lambda v: v * 2.0, x).sum()

    x2 = np.array([[0.1, 0.2], [0.9, 0.8], [0.3, 0.1]])
    want = np.stack([tj.grad(branchy)(x) for x in x2])
    np.testing.assert_array_equal(want[0], [2.0, 2.0])  # the loop took both branches
    np.testing.assert_allclose(want[1], np.cos(x2[1]))
    np.testing.assert_allclose(tj.vmap(tj.grad(branchy))(x2), want, rtol=1e-14)
