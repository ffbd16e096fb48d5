"""Fusion and the CPU backend end to end: random programs, gradients, nn functions, schedule
shape, compiler errors. Every compiled result is checked against device="numpy"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cpu import compiler, schedule_graph
from tracejit.errors import CompileError, TracejitError
from tracejit.ir import kernel as K
from tracejit.tracer.core import bind

try:
    compiler.find_compiler()
except TracejitError as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"no C++ compiler: {exc}", allow_module_level=True)


def close(got, want, rtol=1e-9, atol=1e-11):
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------- random programs

UNARY_OPS = {
    "tanh": tnp.tanh,
    "exp": lambda a: tnp.exp(tnp.clip(a, -5.0, 5.0)),
    "sin": tnp.sin,
    "abs": tnp.abs,
    "neg": lambda a: -a,
    "sqrt": lambda a: tnp.sqrt(tnp.abs(a)),
}
BINARY_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "max": tnp.maximum,
    "where": lambda a, b: tnp.where(a > b, a, b * 0.5),
}
REDUCE_OPS = {
    "sum_rows": lambda a: tnp.sum(tnp.broadcast_to(a, (3, 4)), axis=-1, keepdims=True),
    "max_cols": lambda a: tnp.max(tnp.broadcast_to(a, (3, 4)), axis=0, keepdims=True),
    "mean_all": lambda a: tnp.mean(a),
    "softmax": lambda a: tj.nn.softmax(tnp.broadcast_to(a, (3, 4)), axis=-1),
    "transpose": lambda a: tnp.broadcast_to(a, (3, 4)).T.T[::-1],
}

op_step = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(sorted(UNARY_OPS)), st.integers(0, 99)),
    st.tuples(st.just("b"), st.sampled_from(sorted(BINARY_OPS)), st.integers(0, 99)),
    st.tuples(st.just("r"), st.sampled_from(sorted(REDUCE_OPS)), st.integers(0, 99)),
)


def program(steps):
    """A DAG of ops: each step reads earlier values (index modulo the pool)."""

    def run(x, y):
        pool = [x, y, x * 0.5]
        for kind, name, k in steps:
            a, b = pool[k % len(pool)], pool[(k // 3) % len(pool)]
            if kind == "u":
                pool.append(UNARY_OPS[name](a))
            elif kind == "b":
                pool.append(BINARY_OPS[name](a, b))
            else:
                pool.append(REDUCE_OPS[name](a))
        return pool[-1], pool[-2] + pool[0]

    return run


@settings(max_examples=10)
@given(steps=st.lists(op_step, min_size=1, max_size=8), seed=st.integers(0, 2**16))
def test_random_programs_match_the_interpreter(steps, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    f = program(steps)
    close(tj.jit(f, device="cpu")(x, y), tj.jit(f, device="numpy")(x, y))


# ---------------------------------------------------------------- gradients and nn


UNARY_SMOOTH = ["exp", "sin", "cos", "tanh", "sinh", "atan", "erf", "expm1", "log1p", "sqrt"]


def _unary_loss(x):
    x = tnp.abs(x) + 0.5
    return sum(tnp.sum(bind(name, x) * (i + 1.0)) for i, name in enumerate(UNARY_SMOOTH))


def _nn_loss(w, x, labels):
    h = tj.nn.gelu(x @ w["w1"]) + tj.nn.silu(x @ w["w1"]) * tj.nn.sigmoid(x @ w["w1"])
    mu = tnp.mean(h, axis=-1, keepdims=True)
    h = (h - mu) / tnp.sqrt(tnp.var(h, axis=-1, keepdims=True) + 1e-5)
    logits = tj.nn.relu(h) @ w["w2"] + tj.nn.softplus(h[:, :3])
    logp = tj.nn.log_softmax(logits)
    onehot = tj.nn.one_hot(labels, 3)
    return -tnp.mean(tnp.sum(onehot * logp, axis=-1)) + tnp.mean(tj.nn.logsumexp(logits, axis=0))


def test_gradients_of_elementwise_primitives_match_the_interpreter():
    x = np.random.default_rng(0).standard_normal((5, 3))
    g = tj.grad(_unary_loss)
    close(tj.jit(g, device="cpu")(x), tj.jit(g, device="numpy")(x))


def test_value_and_grad_of_a_small_network_match_the_interpreter():
    rng = np.random.default_rng(0)
    w = {"w1": rng.standard_normal((6, 8)), "w2": rng.standard_normal((8, 3))}
    x, labels = rng.standard_normal((5, 6)), np.array([0, 2, 1, 1, 0])
    vg = tj.value_and_grad(_nn_loss)
    got = tj.jit(vg, device="cpu")(w, x, labels)
    want = tj.jit(vg, device="numpy")(w, x, labels)
    close(tj.tree_leaves(got), tj.tree_leaves(want))


# ---------------------------------------------------------------- schedule shape


def test_softmax_schedule_reads_each_row_in_one_kernel_and_plans_no_arena():
    x = np.ones((4, 8), np.float32)
    graph = tj.jit(lambda x: tj.nn.softmax(x, axis=-1)).lower(x).graph
    schedule = schedule_graph(graph)
    (kern,) = schedule.steps
    assert isinstance(kern, K.Kernel) and kern.nphases == 3
    assert schedule.arena_bytes == 0
    assert "phase 2" in str(schedule)


def test_temporaries_share_the_arena_and_contiguous_reshape_is_a_view():
    x = np.ones((8, 8), np.float32)

    def f(x):
        a = (x @ x).reshape(4, 16) + 1.0  # a reshape of contiguous data: no copy
        b = tnp.sum(a.reshape(8, 8) @ x, axis=0)
        return b @ x

    schedule = schedule_graph(tj.jit(f).lower(x).graph)
    assert any(isinstance(s, K.View) for s in schedule.steps)
    temps = [b for b in schedule.buffers if b.kind == "temp"]
    assert schedule.arena_bytes < sum(max(b.nbytes, 64) for b in temps)
    close(tj.jit(f)(x), tj.jit(f, device="numpy")(x), rtol=1e-6)


# ---------------------------------------------------------------- compiler errors


def test_a_failing_compile_raises_compile_error_with_stderr_and_kept_source(monkeypatch):
    monkeypatch.setattr(compiler, "FLAGS", (*compiler.FLAGS, "-fno-such-flag-tracejit"))
    f = tj.jit(lambda x: x * 3.0 + 1.0)
    with pytest.raises(CompileError) as info:
        f(np.ones(3, np.float32))
    message = str(info.value)
    assert "no-such-flag-tracejit" in message
    kept = message.split("the source is kept at ")[1].split()[0]
    with open(kept) as source:
        assert "tj_run" in source.read()


def test_no_compiler_says_to_install_one_or_use_numpy(monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(CompileError, match="device='numpy'"):
        compiler.find_compiler()


def test_row_kernel_never_writes_in_place_over_a_row_a_later_phase_reads():
    """Regression: a phase-0 store reused the block of a temp that phases 1-2 still read."""
    rng = np.random.default_rng(0)
    w1, w2, x = (
        rng.standard_normal((6, 8)),
        rng.standard_normal((8, 3)),
        rng.standard_normal((5, 6)),
    )

    def f(w1, w2, x):
        h = tj.nn.gelu(x @ w1)
        h2 = (h - tnp.mean(h, axis=-1, keepdims=True)) / tnp.sqrt(
            tnp.var(h, axis=-1, keepdims=True)
        )
        return tj.nn.relu(h2) @ w2 + h2[:, :3]

    close(tj.jit(f)(w1, w2, x), tj.jit(f, device="numpy")(w1, w2, x))


def test_a_deep_elementwise_chain_compiles_without_recursion():
    """Regression: structural hashing of expressions recursed once per fused op."""

    def f(x):
        for i in range(600):
            x = x * 1.0001 + 0.5 if i % 2 else tnp.tanh(x)
        return x

    x = np.linspace(-2, 2, 10)
    close(tj.jit(f)(x), tj.jit(f, device="numpy")(x))


def test_no_kernel_writes_a_constant_buffer():
    # A scalar constant that a library step needs in memory (the index of `take`, here the
    # fill value of unique(size=)) is a "const" buffer holding its payload. Fusion used to
    # also store it from a kernel on every call: memory that every call and thread shares
    # (and on the CPU the payload's own NumPy array) was written while others read it.
    from tracejit.ir.fusion import fuse
    from tracejit.ir.memory import step_io

    i = np.array([[3, -1, 0, 7], [2, 2, -5, 1], [0, 4, 4, -2]])

    def f(i):
        return tuple(tnp.unique_counts(i % 3, size=3)) + (tnp.take(i.ravel(), 0) * 2,)

    s = fuse(tj.make_ir(f)(i))
    consts = {b.id for b in s.buffers if b.kind == "const"}
    assert any(isinstance(st, K.Fallback) and set(st.inputs) & consts for st in s.steps)
    assert not [st.name for st in s.steps if step_io(st)[1] & consts]
    want = np.unique_counts(i % 3)
    got = tj.jit(f)(i)
    np.testing.assert_array_equal(got[0], want.values)
    np.testing.assert_array_equal(got[1], want.counts)
    assert got[2] == 6
