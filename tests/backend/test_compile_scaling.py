"""Large unrolled programs (issue 10): a Python loop inside `jit` unrolls into thousands of
nodes. Their compiled results equal the reference interpreter's, and the generated C++ holds
each repeated step once (timings are in benchmarks/compile_scaling.py, not here)."""

from __future__ import annotations

import numpy as np

import tracejit as tj

STEPS = 100


def _rnn_loss(params, xs, y):
    h = np.zeros((xs.shape[1], params["wh"].shape[0]))
    for x in xs:
        h = np.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
    return np.sum((h @ params["wo"] - y) ** 2)


def _lstm_loss(params, xs):
    h = np.zeros((xs.shape[1], params["w"].shape[1] // 4))
    c = h
    total = 0.0
    for x in xs:
        z = np.hstack([x, h]) @ params["w"]
        i, f, o, g = np.split(z, 4, axis=1)
        c = c * (0.5 * np.tanh(f) + 0.5) + (0.5 * np.tanh(i) + 0.5) * np.tanh(g)
        h = (0.5 * np.tanh(o) + 0.5) * np.tanh(c)
        logits = h @ params["out"]
        m = np.max(logits, axis=1, keepdims=True)
        total = (
            total
            + np.sum(logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True)))[None]
        )
    return total[0]


def _rng_params(rng, shapes):
    return {k: rng.standard_normal(s) * 0.3 for k, s in shapes.items()}


def _compare(loss, *args):
    compiled = tj.jit(tj.value_and_grad(loss))
    reference = tj.jit(tj.value_and_grad(loss), device="numpy")
    (value, grads), (want_value, want_grads) = compiled(*args), reference(*args)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for k in want_grads:
        np.testing.assert_allclose(grads[k], want_grads[k], rtol=1e-9, atol=1e-12)
    return compiled.lower(*args).compile()


def test_unrolled_rnn_with_grad_matches_the_reference_interpreter():
    rng = np.random.default_rng(0)
    params = _rng_params(rng, {"wx": (3, 8), "wh": (8, 8), "b": (8,), "wo": (8, 2)})
    xs, y = rng.standard_normal((STEPS, 2, 3)), rng.standard_normal((2, 2))
    compiled = _compare(_rnn_loss, params, xs, y)
    assert len(compiled.kernels()) > STEPS  # the loop really unrolled
    # every repeated step shares one C++ function: a handful, not one per step
    functions = compiled.source().count("static int tj_step_")
    assert functions < 30, functions


def test_unrolled_lstm_with_grad_matches_the_reference_interpreter():
    rng = np.random.default_rng(1)
    params = _rng_params(rng, {"w": (4 + 6, 24), "out": (6, 4)})
    xs = rng.standard_normal((STEPS // 10, 3, 4))
    _compare(_lstm_loss, params, xs)


def test_cuda_source_holds_each_repeated_kernel_once():
    from tracejit.backend_cuda.codegen import generate
    from tracejit.ir import fusion, memory

    rng = np.random.default_rng(2)
    params = _rng_params(rng, {"wx": (3, 8), "wh": (8, 8), "b": (8,), "wo": (8, 2)})
    xs, y = rng.standard_normal((30, 2, 3)), rng.standard_normal((2, 2))
    graph = tj.jit(tj.grad(_rnn_loss)).lower(params, xs, y).graph
    program = generate(memory.plan_memory(fusion.fuse(graph)))
    names = {launch.name for launch in program.launches}
    assert len(program.launches) > 30 and len(names) < 15  # 30 steps, a few distinct kernels
    for name in names:  # every launch finds its kernel, defined once
        assert program.source.count(f" {name}(") == 1, name


def test_a_chain_that_reuses_each_step_twice_compiles_in_linear_time():
    # Euclid unrolled: each step reads the previous one twice. Printed as a tree, the fused
    # expression doubled per step (16 steps took minutes, 92 ran out of memory).
    def gcd(a, b):
        for _ in range(60):
            nz = b != 0
            a, b = np.where(nz, b, a), np.where(nz, a % np.where(nz, b, 1), 0)
        return a

    a = np.arange(1, 65, dtype=np.int64)
    b = np.arange(64, 0, -1, dtype=np.int64) * 3
    np.testing.assert_array_equal(tj.jit(gcd)(a, b), np.gcd(a, b))


def test_shared_subexpressions_print_once():
    from tracejit.ir import kernel as K

    e = K.Load(0, 0, (1,), np.dtype("float32"))
    for _ in range(64):
        e = K.Op("add", (e, e), e.dtype, e.dtype)
    text = K.format_expr(e)
    assert text.count("b0[i0]") == 2 and text.count(" = add(") == 63


def test_a_sum_with_a_term_per_step_is_split_into_kernels_of_bounded_width():
    # The gradient of a weight shared by every step is such a sum. As one kernel it read one
    # buffer per step (800 at 800 steps), and g++'s time on it grew faster than its size.
    from tracejit.backend_cpu import schedule_graph
    from tracejit.ir import kernel as K
    from tracejit.ir.fusion_merge import MAX_READS
    from tracejit.ir.memory import step_io

    def f(x, ws):
        total = x @ ws[0]
        for w in ws[1:]:
            total = total + x @ w
        return total

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    ws = [rng.standard_normal((4, 5)) for _ in range(5 * MAX_READS)]
    schedule = schedule_graph(tj.jit(f).lower(x, ws).graph)
    widths = [len(step_io(s)[0]) for s in schedule.steps if isinstance(s, K.Kernel)]
    assert len(widths) >= 5 and max(widths) <= 2 * MAX_READS, widths
    got = tj.jit(f)(x, ws)
    np.testing.assert_allclose(got, tj.jit(f, device="numpy")(x, ws), rtol=1e-12, atol=1e-12)
