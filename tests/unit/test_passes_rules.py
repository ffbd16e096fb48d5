"""Graph passes, simplify and fold: one golden IR test per rewrite rule."""

from __future__ import annotations

import numpy as np
import pytest
from _passes_util import F32, IDENTITY_23, check_golden, const, ir, splat, text

import tracejit.numpy as tnp
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import fold, optimize, simplify
from tracejit.ir.passes.fold import FOLD_LIMIT
from tracejit.ir.primitives import get
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- simplify: one golden per rule


def _false_like(x):
    return bind("broadcast_in_dim", const(x, np.bool_(False)), shape=x.shape, dims=())


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
        lambda x: tnp.add(-0.0, x),  # x + 0.0 is not x: -0.0 + 0.0 is +0.0
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=-0.0]
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
    "pow-one": (
        lambda x: bind("pow", x, splat(x, 1.0)),  # x ** 1.0 is x, NaN, inf and -0.0 included
        """
        { lambda a:f32[2,3] . let
            b:f32[] = const[value=1.0]
            c:f32[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = pow a c
          in (d,) }
        """,
        IDENTITY_23,
    ),
    "select-const": (
        lambda x: bind("select", _false_like(x), x, tnp.exp(x)),  # select(c, x, y): c ? x : y
        """
        { lambda a:f32[2,3] . let
            b:bool[] = const[value=False]
            c:bool[2,3] = broadcast_in_dim[dims=(), shape=(2, 3)] b
            d:f32[2,3] = exp a
            e:f32[2,3] = select c a d
          in (e,) }
        """,
        """
        { lambda a:f32[2,3] . let
            b:f32[2,3] = exp a
          in (b,) }
        """,
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
    check_golden(g, lambda g: optimize(g, stage="post_grad"), before, IDENTITY_23)


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


def test_a_matmul_contracting_one_element_becomes_a_broadcast_product():
    # per-example gradients make (..., m, 1) @ (..., 1, n): one product per result, which the
    # broadcast multiply computes bit for bit as the GEMM does, NaN, inf and -0.0 included
    def fn(a, b):
        return bind("matmul", a, b)

    g = simplify(ir(fn, (4, 3, 1), (4, 1, 5)))
    assert "matmul" not in text(str(g)) and "mul" in text(str(g))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 1)).astype(np.float32)
    b = rng.standard_normal((4, 1, 5)).astype(np.float32)
    a[0, 0, 0], a[1, 2, 0], b[2, 0, 3], b[3, 0, 0] = np.nan, -0.0, np.inf, -0.0
    got, want = evaluate(g, [a, b])[0], np.matmul(a, b)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()  # -0.0 * 1 is +0.0 from a GEMM
    assert np.signbit(want[1, 2]).sum() == 0  # the -0.0 row: every product's sign is lost
    assert simplify(ir(fn, (4, 3, 2), (4, 2, 5))).nodes[-1].prim.name == "matmul"  # k = 2 stays
