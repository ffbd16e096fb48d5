"""Graph passes: a golden IR test per rule, random programs with passes on and off, node counts.

Goldens were written by hand from the expected IR (names are assigned in printing order);
each golden test also checks the input graph is left untouched (jit caches traced graphs).
"""

from __future__ import annotations

import textwrap

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir.graph import Graph, Node, Value, verify
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import (
    PASSES,
    cse,
    fold,
    numerics,
    optimize,
    remove_dead_nodes,
    run_passes,
    simplify,
    unused_inputs,
)
from tracejit.ir.passes.fold import FOLD_LIMIT
from tracejit.ir.passes.rewrite import P, Rule, rewrite
from tracejit.ir.passes.simplify import simplify_post_grad
from tracejit.ir.primitives import get
from tracejit.numpy._core import constant
from tracejit.tracer.core import bind

F32 = np.dtype(np.float32)


def ir(fn, *shapes, dtype=np.float32) -> Graph:
    return tj.make_ir(fn)(*[np.ones(s, dtype) for s in shapes])


def splat(like, c):
    """A Python-scalar constant as tnp emits it: a 0-d const broadcast to `like`'s shape."""
    c0 = constant(c, like.dtype, False, like._trace)
    return bind("broadcast_in_dim", c0, shape=like.shape, dims=())


def const(like, array):
    """A materialized const node in `like`'s trace."""
    return constant(np.asarray(array), np.asarray(array).dtype, False, like._trace)


def text(s: str) -> str:
    return textwrap.dedent(s).strip()


def check_golden(graph: Graph, pass_fn, before: str, after: str) -> Graph:
    assert str(graph) == text(before)
    out = pass_fn(graph)
    verify(out)
    assert str(out) == text(after)
    assert str(graph) == text(before), "the pass mutated its input graph"
    return out


IDENTITY_23 = """
{ lambda a:f32[2,3] . let
  in (a,) }
"""

# ---------------------------------------------------------------- simplify: one golden per rule

SIMPLIFY_GOLDENS = {
    "reshape-noop": (
        lambda x: bind("reshape", x, shape=(2, 3)),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = reshape[shape=(2, 3)] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "reshape-reshape": (
        lambda x: bind("reshape", bind("reshape", x, shape=(6,)), shape=(3, 2)),
        """
        { lambda a:f32[2,3] . let
            b:f32[6] = reshape[shape=(6,)] a
            c:f32[3,2] = reshape[shape=(3, 2)] b
          in (c,) }
        """,
        """
        { lambda a:f32[2,3] . let
            b:f32[3,2] = reshape[shape=(3, 2)] a
          in (b,) }
        """,
    ),
    "reshape-roundtrip": (
        lambda x: bind("reshape", bind("reshape", x, shape=(6,)), shape=(2, 3)),
        """
        { lambda a:f32[2,3] . let
            b:f32[6] = reshape[shape=(6,)] a
            c:f32[2,3] = reshape[shape=(2, 3)] b
          in (c,) }
        """,
        IDENTITY_23,
    ),
    "broadcast-noop": (
        lambda x: bind("broadcast_in_dim", x, shape=(2, 3), dims=(0, 1)),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = broadcast_in_dim[dims=(0, 1), shape=(2, 3)] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "transpose-noop": (
        lambda x: bind("transpose", x, perm=(0, 1)),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = transpose[perm=(0, 1)] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "transpose-transpose": (
        lambda x: bind("transpose", bind("transpose", x, perm=(1, 0)), perm=(1, 0)),
        """
        { lambda a:f32[2,3] . let
            b:f32[3,2] = transpose[perm=(1, 0)] a
            c:f32[2,3] = transpose[perm=(1, 0)] b
          in (c,) }
        """,
        IDENTITY_23,
    ),
    "slice-noop": (
        lambda x: bind("slice", x, starts=(0, 0), stops=(2, 3), steps=(1, 1)),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = slice[starts=(0, 0), steps=(1, 1), stops=(2, 3)] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "rev-noop": (
        lambda x: bind("rev", x, axes=()),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = rev[axes=()] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "reduce-noop": (
        lambda x: bind("reduce_sum", x, axes=()),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = reduce_sum[axes=()] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "convert-noop": (
        lambda x: bind("convert", x, dtype=F32),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = convert[dtype=f32] a
          in (b,) }
        """,
        IDENTITY_23,
    ),
    "neg-neg": (
        lambda x: tnp.negative(tnp.negative(x)),
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = neg a
            c:f32[2,3] = neg b
          in (c,) }
        """,
        IDENTITY_23,
    ),
    "mul-one": (
        lambda x: x * 1.0,
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=1.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = mul a c
          in (d,) }
        """,
        IDENTITY_23,
    ),
    "one-mul": (
        lambda x: tnp.multiply(1.0, x),
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=1.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = mul c a
          in (d,) }
        """,
        IDENTITY_23,
    ),
    "add-zero": (
        lambda x: tnp.add(0.0, x),
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=0.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = add c a
          in (d,) }
        """,
        IDENTITY_23,
    ),
    "sub-zero": (
        lambda x: x - 0.0,
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=0.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = sub a c
          in (d,) }
        """,
        IDENTITY_23,
    ),
    "div-one": (
        lambda x: x / 1.0,
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=1.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = div a c
          in (d,) }
        """,
        IDENTITY_23,
    ),
}


@pytest.mark.parametrize("rule", sorted(SIMPLIFY_GOLDENS))
def test_simplify_golden(rule):
    fn, before, after = SIMPLIFY_GOLDENS[rule]
    stats: dict = {}
    check_golden(ir(fn, (2, 3)), lambda g: simplify(g, stats), before, after)
    assert stats, "no rule fired"


def test_transpose_transpose_composes_permutations():
    def fn(x):
        return bind("transpose", bind("transpose", x, perm=(1, 0, 2)), perm=(2, 0, 1))

    before = """
    { lambda a:f32[2,3,4] . let
        b:f32[3,2,4] = transpose[perm=(1, 0, 2)] a
        c:f32[4,3,2] = transpose[perm=(2, 0, 1)] b
      in (c,) }
    """
    after = """
    { lambda a:f32[2,3,4] . let
        b:f32[4,3,2] = transpose[perm=(2, 1, 0)] a
      in (b,) }
    """
    g = check_golden(ir(fn, (2, 3, 4)), simplify, before, after)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(evaluate(g, [x])[0], x.transpose(1, 0, 2).transpose(2, 0, 1))


def test_broadcast_broadcast_composes_dims():
    def fn(x):
        y = bind("broadcast_in_dim", x, shape=(2, 3), dims=(1,))
        return bind("broadcast_in_dim", y, shape=(4, 2, 3), dims=(1, 2))

    before = """
    { lambda a:f32[3] . let
        b:f32[2,3] = broadcast_in_dim[dims=(1,), shape=(2, 3)] a
        c:f32[4,2,3] = broadcast_in_dim[dims=(1, 2), shape=(4, 2, 3)] b
      in (c,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[4,2,3] = broadcast_in_dim[dims=(2,), shape=(4, 2, 3)] a
      in (b,) }
    """
    g = check_golden(ir(fn, (3,)), simplify, before, after)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(evaluate(g, [x])[0], np.broadcast_to(x, (4, 2, 3)))


def test_stop_gradient_is_dropped_only_post_grad():
    g = ir(lambda x: bind("stop_gradient", x), (2, 3))
    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = stop_gradient a
      in (b,) }
    """
    assert simplify(g) is g
    assert optimize(g, stage="pre_grad") is g
    assert optimize(g, stage="joint") is g
    check_golden(g, simplify_post_grad, before, IDENTITY_23)
    assert str(optimize(g, stage="post_grad")) == text(IDENTITY_23)


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda x: x * 0.0, id="x*0 (NaN*0 is NaN)"),
        pytest.param(lambda x: x - x, id="x-x (inf-inf is NaN)"),
        pytest.param(lambda x: (x + 1.0) - 1.0, id="no reassociation"),
        pytest.param(lambda x: x * 2.0 * 0.5, id="no reassociation of products"),
        pytest.param(lambda x: x + 1.0, id="x+1"),
        pytest.param(lambda x: tnp.log(x + 2.0), id="log(x+2)"),
        pytest.param(
            lambda x: bind("convert", bind("convert", x, dtype=F32), dtype=np.dtype(np.float64)),
            id="f64->f32->f64 rounds",
        ),
    ],
)
def test_inexact_rewrites_are_not_done(fn):
    g = ir(fn, (3,), dtype=np.float64)
    assert _compute_ops(optimize(g, verify_each=True)) == _compute_ops(g)


def _compute_ops(graph):
    """The primitives applied, constants aside (CSE may share equal constants; nothing else)."""
    return [n.prim.name for n in graph.nodes if n.prim.name not in ("const", "broadcast_in_dim")]


def test_integer_identities_apply():
    g = ir(lambda x: (x * 1) + 0, (3,), dtype=np.int32)
    assert str(optimize(g)) == text(
        """
        { lambda a:i32[3] . let
          in (a,) }
        """
    )


# ---------------------------------------------------------------- fold


def test_fold_splat_arithmetic():
    def fn(x):
        return x * (splat(x, 2.0) + splat(x, 3.0))

    before = """
    { lambda a:f32[3] . let
        b:f32[] = const[value=2.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[] = const[value=3.0]
        e:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] d
        f:f32[3] = add c e
        g:f32[3] = mul a f
      in (g,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[] = const[value=5.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[3] = mul a c
      in (d,) }
    """
    check_golden(ir(fn, (3,)), fold, before, after)


def test_fold_small_const_arrays():
    def fn(x):
        return x + bind("mul", const(x, np.arange(3, dtype=np.float32)), const(x, np.ones(3, F32)))

    before = """
    { lambda a:f32[3] . let
        b:f32[3] = const[value=[0.,1.,2.]]
        c:f32[3] = const[value=[1.,1.,1.]]
        d:f32[3] = mul b c
        e:f32[3] = add a d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = const[value=[0.,1.,2.]]
        c:f32[3] = add a b
      in (c,) }
    """
    check_golden(ir(fn, (3,)), fold, before, after)


def test_fold_respects_the_size_limit():
    n = FOLD_LIMIT + 1
    big = np.arange(n, dtype=np.float32)

    def fn(x):
        return x + bind("mul", const(x, big), const(x, big))

    g = ir(fn, (n,))
    assert fold(g) is g  # the product has more than FOLD_LIMIT elements: computed at run time

    def small_broadcast(x):  # a broadcast of a const array within the limit is folded
        return x + bind("broadcast_in_dim", const(x, big[:2]), shape=(4, 2), dims=(1,))

    folded = fold(ir(small_broadcast, (4, 2)))
    assert [n.prim.name for n in folded.nodes] == ["const", "add"]

    def large_broadcast(x):
        return x + bind("broadcast_in_dim", const(x, big[:2]), shape=(n, 2), dims=(1,))

    g = ir(large_broadcast, (n, 2))
    assert fold(g) is g


def _iota_graph(n: int) -> Graph:
    x = Value((n,), F32)
    iota = Node(get("iota"), [], {"shape": (n,), "dtype": F32, "axis": 0}, [Value((n,), F32)])
    out = Value((n,), F32)
    return Graph([x], [iota, Node(get("add"), [x, iota.outputs[0]], {}, [out])], [out])


def test_fold_iota_within_the_limit():
    before = """
    { lambda a:f32[3] . let
        b:f32[3] = iota[axis=0, dtype=f32, shape=(3,)]
        c:f32[3] = add a b
      in (c,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = const[value=[0.,1.,2.]]
        c:f32[3] = add a b
      in (c,) }
    """
    check_golden(_iota_graph(3), fold, before, after)
    big = _iota_graph(FOLD_LIMIT + 1)
    assert fold(big) is big


def test_splat_broadcast_itself_is_kept():
    g = ir(lambda x: x + 2.0, (3,))
    assert fold(g) is g


# ---------------------------------------------------------------- numerics


def test_log1p_golden():
    before = """
    { lambda a:f32[3] . let
        b:f32[] = const[value=1.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[3] = add c a
        e:f32[3] = log d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = log1p a
      in (b,) }
    """
    check_golden(ir(lambda x: tnp.log(1.0 + x), (3,)), numerics, before, after)


def test_expm1_golden():
    before = """
    { lambda a:f32[3] . let
        b:f32[3] = exp a
        c:f32[] = const[value=1.0]
        d:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] c
        e:f32[3] = sub b d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = expm1 a
      in (b,) }
    """
    check_golden(ir(lambda x: tnp.exp(x) - 1.0, (3,)), numerics, before, after)


STABLE_SHIFT = """
    b:f32[2] = reduce_max[axes=(1,)] a
    c:f32[2] = stop_gradient b
    d:bool[2] = isfinite c
    e:f32[] = const[value=0.0]
    f:f32[2] = broadcast_in_dim[dims=(), shape=(2,)] e
    g:f32[2] = select d c f
    h:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] g
    i:f32[2,3] = sub a h
    j:f32[2,3] = exp i
    k:f32[2] = reduce_sum[axes=(1,)] j
    l:f32[2] = log k
"""


def _with_shift(tail: str, out: str) -> str:
    lines = ["{ lambda a:f32[2,3] . let"]
    lines += ["    " + s.strip() for s in (STABLE_SHIFT + tail).strip().splitlines()]
    return "\n".join(lines) + f"\n  in ({out},) }}"


def test_logsumexp_golden():
    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2] = log c
      in (d,) }
    """
    after = _with_shift("m:f32[2] = add l g", "m")
    g = ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1)), (2, 3))
    check_golden(g, numerics, before, after)


def test_logsumexp_keepdims_golden():
    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,1] = reshape[shape=(2, 1)] c
        e:f32[2,1] = log d
      in (e,) }
    """
    after = _with_shift("m:f32[2] = add l g\nn:f32[2,1] = reshape[shape=(2, 1)] m", "n")
    g = ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (2, 3))
    check_golden(g, numerics, before, after)


LOG_SOFTMAX_AFTER = _with_shift(
    "m:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] l\nn:f32[2,3] = sub i m", "n"
)


def test_log_softmax_golden():
    def naive(x):
        e = tnp.exp(x)
        return tnp.log(e / tnp.sum(e, axis=1, keepdims=True))

    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,1] = reshape[shape=(2, 1)] c
        e:f32[2,3] = broadcast_in_dim[dims=(0, 1), shape=(2, 3)] d
        f:f32[2,3] = div b e
        g:f32[2,3] = log f
      in (g,) }
    """
    check_golden(ir(naive, (2, 3)), numerics, before, LOG_SOFTMAX_AFTER)


def test_log_softmax_without_keepdims_golden():
    def naive(x):
        e = tnp.exp(x)
        return tnp.log(e / bind("broadcast_in_dim", tnp.sum(e, axis=1), shape=(2, 3), dims=(0,)))

    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] c
        e:f32[2,3] = div b d
        f:f32[2,3] = log e
      in (f,) }
    """
    check_golden(ir(naive, (2, 3)), numerics, before, LOG_SOFTMAX_AFTER)


def test_log_softmax_with_two_exp_calls():
    # users write exp twice: two exp nodes, but both read the one value the pattern binds
    g = ir(lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (2, 3))
    assert str(numerics(g)) == LOG_SOFTMAX_AFTER
    assert str(optimize(g, stage="pre_grad")) == LOG_SOFTMAX_AFTER


def test_log_softmax_over_a_size_one_axis():
    # tnp drops the broadcast when the keepdims shape already is x's shape
    g = ir(lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (3, 1))
    out = optimize(g, verify_each=True)
    assert "div" not in str(out)
    x = np.array([[1000.0], [-1000.0], [0.5]], np.float32)
    np.testing.assert_array_equal(evaluate(out, [x])[0], np.zeros((3, 1), np.float32))


def test_mismatched_softmax_axes_are_not_rewritten():
    def wrong(x):  # sums over axis 1 but broadcasts back along axis 0
        s = tnp.sum(tnp.exp(x), axis=1)
        return tnp.log(tnp.exp(x) / bind("broadcast_in_dim", s, shape=(3, 3), dims=(1,)))

    g = cse(ir(wrong, (3, 3)))
    assert numerics(g) is g


def test_the_stable_form_is_left_alone():
    def stable(x):
        s = x - tnp.max(x, axis=1, keepdims=True)
        return tnp.log(tnp.sum(tnp.exp(s), axis=1))

    g = ir(stable, (2, 3))
    assert numerics(g) is g


def test_log_of_a_user_shifted_softmax_is_rewritten_without_a_second_shift():
    def shifted_softmax_log(x):
        s = x - tnp.max(x, axis=1, keepdims=True)
        return tnp.log(tnp.exp(s) / tnp.sum(tnp.exp(s), axis=1, keepdims=True))

    x = np.array([[0.0, -200.0, 10.0]], np.float32)
    g = tj.make_ir(shifted_softmax_log)(x)
    out = optimize(g, verify_each=True)
    assert [n.prim.name for n in out.nodes].count("reduce_max") == 1
    with np.errstate(all="ignore"):
        assert np.isneginf(evaluate(g, [x])[0]).any()  # exp(-210) underflows to 0
    np.testing.assert_allclose(evaluate(out, [x])[0], _log_softmax_ref(x, 1), **_tol(x.dtype, x))


def _naive_log_softmax(axis):
    return lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=axis, keepdims=True))


def _log_softmax_ref(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def test_naive_log_softmax_of_large_logits_is_finite(device):
    x = np.array([[1000.0, -1000.0, 0.0], [1.0, 2.0, 3.0]], np.float32)
    out = tj.device_get(tj.jit(_naive_log_softmax(-1), device=device)(x))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, _log_softmax_ref(x, -1), rtol=1e-6, atol=1e-4)
    with np.errstate(all="ignore"):  # without the rewrite: log(inf / inf)
        assert not np.isfinite(evaluate(ir(_naive_log_softmax(-1), (2, 3)), [x])[0]).all()


def _tol(dtype, x):
    eps = np.finfo(dtype).eps
    return {"rtol": 32 * eps, "atol": 32 * eps * (1.0 + float(np.abs(x).max(initial=0.0)))}


@st.composite
def _logits(draw):
    shape = draw(st.sampled_from([(1,), (4,), (2, 3), (3, 1), (2, 1, 4)]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    scale = draw(st.sampled_from([1.0, 30.0, 1000.0]))
    unit = st.floats(-1, 1, width=np.dtype(dtype).itemsize * 8)
    x = draw(hnp.arrays(dtype, shape, elements=unit)) * dtype(scale)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return x, axis


@given(_logits())
def test_log_softmax_rewrite_matches_stable_reference(case):
    x, axis = case
    g = optimize(tj.make_ir(_naive_log_softmax(axis))(x), verify_each=True)
    out = evaluate(g, [x])[0]
    assert out.dtype == x.dtype and np.isfinite(out).all()
    np.testing.assert_allclose(out, _log_softmax_ref(x, axis), **_tol(x.dtype, x))


@given(_logits(), st.booleans())
def test_logsumexp_rewrite_matches_stable_reference(case, keepdims):
    x, axis = case
    fn = lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=axis, keepdims=keepdims))
    g = optimize(tj.make_ir(fn)(x), verify_each=True)
    out = evaluate(g, [x])[0]
    x64 = x.astype(np.float64)
    m = x64.max(axis=axis, keepdims=True)
    ref = m + np.log(np.exp(x64 - m).sum(axis=axis, keepdims=True))
    ref = ref if keepdims else np.squeeze(ref, axis)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, **_tol(x.dtype, x))


def test_logsumexp_of_all_minus_inf_stays_minus_inf():
    x = np.full((2, 3), -np.inf)
    g = optimize(tj.make_ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1)))(x))
    np.testing.assert_array_equal(evaluate(g, [x])[0], [-np.inf, -np.inf])


@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 6),
        elements=st.floats(-0.999, 50) | st.floats(-1e-12, 1e-12),
    )
)
def test_log1p_and_expm1_rewrites_match_numpy(x):
    g = optimize(tj.make_ir(lambda x: (tnp.log(1.0 + x), tnp.exp(x) - 1.0))(x))
    assert {n.prim.name for n in g.nodes} == {"log1p", "expm1"}
    log1p, expm1 = evaluate(g, [x])
    np.testing.assert_allclose(log1p, np.log1p(x), rtol=1e-15)
    np.testing.assert_allclose(expm1, np.expm1(x), rtol=1e-15)


# ---------------------------------------------------------------- CSE, DCE, counts


def test_cse_golden_and_count():
    before = """
    { lambda a:f32[3] . let
        b:f32[3] = sin a
        c:f32[3] = sin a
        d:f32[3] = mul b c
      in (d,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = sin a
        c:f32[3] = mul b b
      in (c,) }
    """
    check_golden(ir(lambda x: tnp.sin(x) * tnp.sin(x), (3,)), cse, before, after)


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

    # the joint graph built without passes computes sin and cos twice ...
    unoptimized = [n.prim.name for n in joint_graph(tj.make_ir(f)(x), (0,), (0,)).nodes]
    assert unoptimized.count("sin") == 2 and unoptimized.count("cos") == 2
    # ... grad runs the pre-grad and joint stages, so its graph shares them
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
    assert changed == ["cse", "simplify", "numerics"]  # rewrites drop what they leave dead
    assert records[2].rules == {"mul-one": 1} and records[3].rules == {"log1p": 1}
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


EXACT_PASSES = [e for e in PASSES if e.name != "numerics"]


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
