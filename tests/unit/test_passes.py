"""Graph passes: the pass manager, CSE, DCE, node counts, random programs with passes on and off.

Per-rule goldens live in test_passes_rules.py, the numerics rewrites in test_passes_numerics.py.
"""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from _passes_util import F32, check_golden, ir, splat, text
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir.graph import Graph, Node, Value, verify
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import (
    PASSES,
    PassEntry,
    cse,
    optimize,
    remove_dead_nodes,
    run_passes,
    unused_inputs,
)
from tracejit.ir.passes.manager import POST_GRAD_RULES, rewrite_pass
from tracejit.ir.passes.rewrite import P, Rule, rewrite
from tracejit.ir.primitives import get
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- CSE, DCE, counts


def test_tracing_interns_equal_nodes_and_cse_merges_a_graph_built_without():
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = sin a
        c:f32[3] = mul b b
      in (c,) }
    """
    assert str(ir(lambda x: tnp.sin(x) * tnp.sin(x), (3,))) == text(after)  # CSE as it traces
    x, s1, s2, out = Value((3,), F32), Value((3,), F32), Value((3,), F32), Value((3,), F32)
    sin, mul = get("sin"), get("mul")
    nodes = [Node(sin, [x], {}, [s1]), Node(sin, [x], {}, [s2]), Node(mul, [s1, s2], {}, [out])]
    before = """
    { lambda a:f32[3] . let
        b:f32[3] = sin a
        c:f32[3] = sin a
        d:f32[3] = mul b c
      in (d,) }
    """
    check_golden(Graph([x], nodes, [out]), cse, before, after)


def test_cse_merges_commutative_operands_and_equal_constants():
    g = optimize(ir(lambda x, y: tnp.exp(x + y) + tnp.exp(y + x) * 2.0 + 2.0, (3,), (3,)))
    names = [n.prim.name for n in g.nodes]
    assert names.count("add") == 3 and names.count("exp") == 1 and names.count("const") == 1


def test_dce_golden_and_unused_inputs():
    def fn(x, y):
        tnp.exp(y)  # dead
        return x + 1.0

    before = """
    { lambda a:f32[3] b:f32[3] . let
        _:f32[3] = exp b
        c:f32[] = const[value=1.0]
        d:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] c
        e:f32[3] = add a d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] _:f32[3] . let
        b:f32[] = const[value=1.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[3] = add a c
      in (d,) }
    """
    g = ir(fn, (3,), (3,))
    out = check_golden(g, remove_dead_nodes, before, after)
    assert unused_inputs(out) == [1] and unused_inputs(g) == [1]
    assert len(out.inputs) == 2  # inputs stay: the calling convention depends on them


def test_jit_lowered_text_is_optimized():
    lowered = tj.jit(lambda x: tnp.sin(x * 1.0) + tnp.sin(x)).lower(np.ones(3, np.float32))
    assert lowered.as_text() == text(
        """
        { lambda a:f32[3] . let
            b:f32[3] = sin a
            c:f32[3] = add b b
          in (c,) }
        """
    )


def test_grad_of_repeated_expression_shares_it():
    def f(x):
        return tnp.sum(tnp.sin(x) * tnp.sin(x))

    x = np.array([0.1, 0.5, 2.0])
    from tracejit.ir.autodiff import joint_graph

    # the joint graph built without passes already computes sin and cos once: tracing and
    # autodiff intern equal nodes as they create them ...
    unoptimized = [n.prim.name for n in joint_graph(tj.make_ir(f)(x), (0,), (0,)).nodes]
    assert unoptimized.count("sin") == 1 and unoptimized.count("cos") == 1
    # ... and the graph of grad (after the pre-grad and joint stages) still does
    shared = [n.prim.name for n in tj.make_ir(tj.grad(f))(x).nodes]
    lowered = [n.prim.name for n in optimize(tj.make_ir(tj.grad(f))(x)).nodes]
    assert shared.count("sin") == 1 and shared.count("cos") == 1
    assert lowered.count("sin") == 1 and lowered.count("cos") == 1
    grad = tj.jit(tj.grad(f), device="numpy")(x)  # the pass result, not a backend, is tested
    np.testing.assert_allclose(grad, 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_pass_records_and_stages():
    g = ir(lambda x: tnp.log(1.0 + tnp.sin(x) * tnp.sin(x) * 1.0), (3,))
    out, records = run_passes(g, "pre_grad", verify_each=True)
    changed = [r.name for r in records if r.changed]
    assert changed == ["rewrite"]  # one sweep: every rule table, CSE, and what it leaves dead
    assert records[0].rules == {"mul-one": 1, "log1p": 1}
    assert [r.name for r in records] == ["rewrite", "dce", "regions"]
    assert [n.prim.name for n in out.nodes] == ["sin", "mul", "log1p"]
    with pytest.raises(ValueError, match="stage"):
        optimize(g, stage="after_lunch")


def test_a_new_rule_is_one_table_entry():
    rule = Rule("sqrt-square", P("sqrt", P("mul", P.var("x"), P.var("x"))), None)
    rule.fn = lambda b, m: b.emit("abs", m["x"])
    g = ir(lambda x: tnp.sqrt(x * x), (3,))
    assert [n.prim.name for n in rewrite(g, [rule]).nodes] == ["abs"]


# ---------------------------------------------------------------- random programs


UNARY = ["neg", "exp", "log", "tanh", "abs", "sqrt", "sin"]
BINARY = ["add", "sub", "mul", "div", "max"]
SPLATS = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5]

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY)),
    st.tuples(st.just("binary"), st.sampled_from(BINARY)),
    st.tuples(st.just("splat"), st.sampled_from(BINARY), st.sampled_from(SPLATS), st.booleans()),
    st.tuples(
        st.just("fold"), st.sampled_from(BINARY), st.sampled_from(SPLATS), st.sampled_from(SPLATS)
    ),
    st.tuples(st.just("twice"), st.sampled_from(UNARY)),
    st.tuples(st.just("layout"), st.sampled_from(["reshape", "transpose", "bcast", "convert"])),
    st.tuples(st.just("negneg")),
    st.tuples(st.just("reduce"), st.sampled_from(["reduce_sum", "reduce_max"]), st.integers(0, 2)),
)


def _apply(kind, args, x, y):
    """One drawn step on values of shape S; every result has shape S again."""
    if kind == "unary":
        return bind(args[0], x)
    if kind == "binary":
        return bind(args[0], x, y)
    if kind == "splat":
        op, c, left = args
        return bind(op, splat(x, c), x) if left else bind(op, x, splat(x, c))
    if kind == "fold":
        op, c1, c2 = args
        return bind("add", x, bind(op, splat(x, c1), splat(x, c2)))
    if kind == "twice":
        return bind("mul", bind(args[0], x), bind(args[0], x))
    if kind == "negneg":
        return bind("neg", bind("neg", x))
    if kind == "layout":
        return _layout_roundtrip(args[0], x)
    op, axis = args
    if x.ndim == 0:
        return x
    axis %= x.ndim
    if op == "reduce_max" and x.shape[axis] == 0:
        op = "reduce_sum"
    r = bind(op, x, axes=(axis,))
    keep = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    return bind(
        "broadcast_in_dim", bind("reshape", r, shape=keep), shape=x.shape, dims=tuple(range(x.ndim))
    )


def _layout_roundtrip(which, x):
    if which == "reshape":
        return bind("reshape", bind("reshape", x, shape=(x.size,)), shape=x.shape)
    if which == "transpose":
        perm = tuple(reversed(range(x.ndim)))
        return bind("transpose", bind("transpose", x, perm=perm), perm=perm)
    if which == "bcast":
        return bind("broadcast_in_dim", x, shape=x.shape, dims=tuple(range(x.ndim)))
    other = np.dtype(np.float64 if x.dtype == np.float32 else np.float32)
    return bind("convert", bind("convert", x, dtype=other), dtype=x.dtype)  # f64 one rounds


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(st.sampled_from([(), (1,), (3,), (2, 3), (1, 4), (0, 3), (2, 1, 3)]))
    special = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])
    finite = st.floats(-3, 3, width=np.dtype(dtype).itemsize * 8)
    elements = st.one_of(finite, finite, finite, special)
    xs = [draw(hnp.arrays(dtype, shape, elements=elements)) for _ in range(2)]
    steps = draw(st.lists(step, min_size=1, max_size=10))
    picks = draw(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=10))
    return xs, steps, picks


def _program_fn(steps, picks):
    def fn(x0, x1):
        vals = [x0, x1]
        for (kind, *args), (i, j) in zip(steps, picks):
            vals.append(_apply(kind, args, vals[i % len(vals)], vals[j % len(vals)]))
        return vals[-1], vals[len(vals) // 2]

    return fn


# the post-grad pipeline without the numerics rules (they change values, by design)
EXACT_PASSES = [
    PassEntry("rewrite", rewrite_pass(*POST_GRAD_RULES)),
    *(e for e in PASSES if e.name != "rewrite"),
]


@given(programs())
def test_random_programs_give_the_same_numbers_with_passes_on_and_off(program):
    xs, steps, picks = program
    g = tj.make_ir(_program_fn(steps, picks))(*xs)
    opt, _ = run_passes(g, "post_grad", verify_each=True, passes=EXACT_PASSES)
    verify(opt)
    with np.errstate(all="ignore"):
        expected, got = evaluate(g, xs), evaluate(opt, xs)
    for e, o in zip(expected, got):
        assert e.dtype == o.dtype and e.shape == o.shape
        rtol = 1e-6 if e.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(o, e, rtol=rtol, atol=0, equal_nan=True)


@given(programs())
def test_random_programs_full_pipeline_verifies_and_never_grows_cse(program):
    xs, steps, picks = program
    g = tj.make_ir(_program_fn(steps, picks))(*xs)
    opt = optimize(g, verify_each=True)
    assert len(cse(g).nodes) <= len(g.nodes)
    assert str(optimize(opt)) == str(opt)  # the pipeline reaches a fixed point in one run
