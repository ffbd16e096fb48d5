"""tracejit.lax compiled on the CPU: loops run inside the generated C++, not unrolled and not
through NumPy callbacks; RNN/LSTM written with scan equal the unrolled programs."""

from __future__ import annotations

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.ir.interpret import evaluate

RNG = np.random.default_rng(2)


def _compiled(fn, *args):
    lowered = tj.jit(fn).lower(*args)
    return lowered, lowered.compile()


def _assert_native(compiled, n_regions: int):
    assert compiled.executable.fallbacks() == []
    source = compiled.source()
    assert source.count("static int tj_region") == n_regions


def test_scan_runs_its_body_in_a_cpp_loop():
    def f(w, xs):
        return lax.scan(lambda h, x: (np.tanh(h @ w + x), h.sum()), np.zeros(4), xs)

    w, xs = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal((50, 4))
    lowered, compiled = _compiled(f, w, xs)
    _assert_native(compiled, 1)
    assert "for (int64_t it = 0; it < 50LL; ++it)" in compiled.source()
    assert len(compiled.kernels()) < 10  # one loop step, not 50 unrolled bodies
    for a, b in zip(compiled(w, xs), evaluate(lowered.graph, [w, xs])):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_cond_compiles_each_branch_and_calls_one():
    def f(p, x):
        return lax.cond(p, lambda v: np.exp(v) * 2.0, lambda v: np.sin(v) - v, x)

    x = RNG.standard_normal(8)
    _, compiled = _compiled(f, np.bool_(True), x)
    _assert_native(compiled, 2)
    assert "switch (k)" in compiled.source()
    np.testing.assert_allclose(compiled(np.bool_(True), x), np.exp(x) * 2.0, rtol=1e-14)
    np.testing.assert_allclose(compiled(np.bool_(False), x), np.sin(x) - x, rtol=1e-14)


def test_while_and_nested_loops_compile_natively():
    def f(x, n):
        def outer(c, row):
            inner = lax.fori_loop(0, 3, lambda i, v: v * 0.5 + row * i, c)
            return inner, tnp.sum(inner)

        c, ys = lax.scan(outer, x, RNG.standard_normal((4, 3)))
        k = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5), (0, c))
        return k[1], ys

    x = np.ones(3)
    lowered, compiled = _compiled(f, x, np.int64(5))
    _assert_native(compiled, 4)  # scan body, its fori_loop body, while cond, while body
    for a, b in zip(compiled(x, np.int64(5)), evaluate(lowered.graph, [x, np.int64(5)])):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_grad_of_scan_compiles_forward_and_backward_loops():
    def loss(w, xs):
        h, _ = lax.scan(lambda h, x: (np.tanh(h @ w + x), None), np.zeros(3), xs)
        return tnp.sum(h * h)

    w, xs = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((20, 3))
    _, compiled = _compiled(tj.grad(loss, argnums=(0, 1)), w, xs)
    _assert_native(compiled, 2)
    gw, gx = compiled(w, xs)
    ew, ex = tj.grad(loss, argnums=(0, 1))(w, xs)
    np.testing.assert_allclose(gw, ew, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(gx, ex, rtol=1e-11, atol=1e-14)


# ---------------------------------------------------------------- RNN / LSTM


def _lstm_cell(params, state, x):
    h, c = state
    z = x @ params["wx"] + h @ params["wh"] + params["b"]
    n = h.shape[-1]
    i, f, o = (1.0 / (1.0 + np.exp(-z[..., k * n : (k + 1) * n])) for k in range(3))
    g = np.tanh(z[..., 3 * n :])
    c = f * c + i * g
    h = o * np.tanh(c)
    return h, c


def _lstm_scan(params, xs):
    batch, hidden = xs.shape[1], params["wh"].shape[0]
    zeros = np.zeros((batch, hidden), np.float32)

    def step(state, x):
        h, c = _lstm_cell(params, state, x)
        return (h, c), h

    (h, _), hs = lax.scan(step, (zeros, zeros), xs)
    return tnp.sum(h * h) + 0.1 * tnp.sum(hs)


def _lstm_unrolled(params, xs):
    batch, hidden = xs.shape[1], params["wh"].shape[0]
    state = (np.zeros((batch, hidden), np.float32),) * 2
    total = 0.0
    for t in range(xs.shape[0]):
        state = _lstm_cell(params, state, xs[t])
        total = total + tnp.sum(state[0])
    return tnp.sum(state[0] * state[0]) + 0.1 * total


def _lstm_params(d=5, n=6):
    def r(*shape):
        return (RNG.standard_normal(shape) * 0.4).astype(np.float32)

    return {"wx": r(d, 4 * n), "wh": r(n, 4 * n), "b": r(4 * n)}


def test_lstm_with_scan_matches_the_unrolled_lstm(steps=12):
    params = _lstm_params()
    xs = RNG.standard_normal((steps, 2, 5)).astype(np.float32)
    vg_scan = tj.jit(tj.value_and_grad(_lstm_scan))
    # The unrolled program's reference: run eagerly (compiling it unrolled costs seconds; the
    # benchmarks compare the compiled programs).
    vg_unrolled = tj.value_and_grad(_lstm_unrolled)
    v, g = vg_scan(params, xs)
    v_ref, g_ref = vg_unrolled(params, xs)
    np.testing.assert_allclose(v, v_ref, rtol=2e-5)
    for k in params:
        np.testing.assert_allclose(g[k], g_ref[k], rtol=2e-4, atol=2e-5)


def test_loops_on_the_test_device(device):
    """scan (and its gradient), while_loop and cond on `device` (CUDA: under the emulator in
    CI), against the reference interpreter."""

    def f(w, xs, n, p):
        def step(h, x):
            return np.tanh(h * w + x), tnp.sum(h)

        h, ys = lax.scan(step, np.zeros(3, np.float32), xs)
        k, h = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5), (0, h))
        h = lax.cond(p, lambda v: v + 1.0, lambda v: v * 2.0, h)
        return h, ys, k

    args = (
        np.float32(0.7),
        RNG.standard_normal((6, 3)).astype(np.float32),
        np.int64(3),
        np.bool_(False),
    )
    got = tj.jit(f, device=device)(*args)
    want = tj.jit(f, device="numpy")(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(tj.device_get(a), b, rtol=1e-5, atol=1e-6)

    def loss(w, xs):  # scan and cond (reverse mode through while_loop is an error)
        h, ys = lax.scan(lambda h, x: (np.tanh(h * w + x), tnp.sum(h)), np.zeros(3, xs.dtype), xs)
        return tnp.sum(lax.cond(tnp.sum(h) > 0, lambda v: v * v, lambda v: v, h)) + tnp.sum(ys)

    g = tj.jit(tj.grad(loss, argnums=(0, 1)), device=device)(*args[:2])
    g_ref = tj.grad(loss, argnums=(0, 1))(*args[:2])
    for a, b in zip(g, g_ref):
        np.testing.assert_allclose(tj.device_get(a), b, rtol=1e-4, atol=1e-5)


def test_gathers_and_scatters_in_loop_bodies_compile_natively():
    def loss(table, idx):
        def step(c, i):
            row = table[i]  # a gather; its gradient scatters into the table
            return c * 0.5 + row, tnp.sum(row * c)

        c, ys = lax.scan(step, np.zeros(3), idx)
        return tnp.sum(c) + tnp.sum(ys)

    table, idx = RNG.standard_normal((5, 3)), np.array([4, 0, 2, 2, 1])
    _, compiled = _compiled(tj.value_and_grad(loss), table, idx)
    assert compiled.executable.fallbacks() == []
    v, g = compiled(table, idx)
    v_ref, g_ref = tj.value_and_grad(loss)(table, idx)
    np.testing.assert_allclose(v, v_ref, rtol=1e-13)
    np.testing.assert_allclose(g, g_ref, rtol=1e-13)


def test_a_debug_print_in_a_loop_body_calls_back_and_the_loop_stays_compiled(capsys):
    def f(xs):
        def step(c, x):
            tj.debug.print("c={c}", c=c)
            return c + x, None

        return lax.scan(step, np.float64(0.0), xs)[0]

    xs = np.arange(1.0, 4.0)
    _, compiled = _compiled(f, xs)
    assert compiled.executable.fallbacks() == ["debug_print"]  # the loop itself is native
    assert "static int tj_region0" in compiled.source()
    capsys.readouterr()
    out = compiled(xs)
    assert out.shape == () and out == 6.0
    assert capsys.readouterr().out.split() == ["c=0.0", "c=1.0", "c=3.0"]
