"""The graph builder interns nodes (hash-consing): what it merges and what it must never merge."""

from __future__ import annotations

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir.builder import GraphBuilder
from tracejit.ir.graph import ConstValue, Value
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import optimize
from tracejit.ir.primitives import ELEMENTWISE, Primitive, get


def _prims(graph) -> list[str]:
    return [n.prim.name for n in graph.nodes]


def _const(b: GraphBuilder, array) -> Value:
    (v,) = b.bind(get("const"), [], {"value": ConstValue(np.asarray(array))})
    return v


def test_equal_nodes_are_one_and_commutative_operands_match_in_either_order():
    b = GraphBuilder()
    x, y = Value((3,), np.float32), Value((3,), np.float32)
    b.graph.inputs += [x, y]
    (s,) = b.bind(get("add"), [x, y], {})
    assert b.bind(get("add"), [y, x], {}) == [s]  # add is commutative
    (d1,) = b.bind(get("sub"), [x, y], {})
    (d2,) = b.bind(get("sub"), [y, x], {})
    assert d1 is not d2  # sub is not
    (r1,) = b.bind(get("reduce_sum"), [x], {"axes": (0,)})
    assert b.bind(get("reduce_sum"), [x], {"axes": (0,)}) == [r1]
    assert _prims(b.graph) == ["add", "sub", "sub", "reduce_sum"] and b.merged == 2


def test_literals_are_keyed_by_bit_pattern():
    b = GraphBuilder()
    zero, neg_zero = _const(b, np.float32(0.0)), _const(b, np.float32(-0.0))
    quiet = np.array(np.nan, np.float32)
    payload = np.array(0x7FC00001, np.uint32).view(np.float32)  # another NaN
    nan1, nan2 = _const(b, quiet), _const(b, payload)
    assert len({id(zero), id(neg_zero), id(nan1), id(nan2)}) == 4
    assert _const(b, np.float32(-0.0)) is neg_zero and _const(b, quiet.copy()) is nan1
    # a float attribute too (an unregistered primitive taking one: none of ours does today)
    fill = Primitive("fill", ELEMENTWISE, lambda avals, value: avals[0], lambda x, value: x)
    x = Value((2,), np.float64)
    fills = [b.bind(fill, [x], {"value": v})[0] for v in (0.0, -0.0, 0.0, (-0.0, 1.0))]
    assert len({id(f) for f in fills}) == 3 and fills[2] is fills[0]


def test_signed_zero_constants_stay_distinct_through_jit():
    def f(x):
        return x * 0.0, x * -0.0  # never merged: the second result is -0.0 for positive x

    x = np.array([1.0, 2.0])
    a, b = tj.jit(f, device="numpy")(x)
    assert not np.signbit(a).any() and np.signbit(b).all()
    graph = tj.make_ir(f)(x)
    assert _prims(graph).count("const") == 2


def test_random_draws_with_one_key_are_not_merged():
    key = tj.random.key(0)

    def f(k):
        return tj.random.uniform(k, (3,)), tj.random.uniform(k, (3,))

    graph = tj.make_ir(f)(key)
    assert _prims(graph).count("threefry2x32") == 2
    a, b = evaluate(optimize(graph), [key])
    np.testing.assert_array_equal(a, b)  # the same key gives the same numbers either way


def test_effectful_nodes_are_never_merged():
    import tracejit.lax.parallel  # noqa: F401  registers the collectives (lazy in tracejit)

    b = GraphBuilder()
    x = Value((2,), np.float32)
    psum = get("psum")
    first = b.bind(psum, [x], {"axis_name": "i", "count": 2})
    assert b.bind(psum, [x], {"axis_name": "i", "count": 2}) != first  # two communications

    def printing(x):
        tj.debug.print("x = {}", x)
        tj.debug.print("x = {}", x)
        return x + 1.0

    graph = tj.make_ir(printing)(np.ones(2))
    assert _prims(graph).count("debug_print") == 2


def test_loops_with_an_effect_inside_are_not_merged():
    def f(xs):
        def body(c, x):
            tj.debug.print("x = {}", x)
            return c + x, c

        a, _ = tj.lax.scan(body, 0.0, xs)
        b, _ = tj.lax.scan(body, 0.0, xs)
        return a + b

    graph = tj.make_ir(f)(np.arange(3.0))
    assert _prims(graph).count("scan") == 2


def test_interned_program_matches_numpy():
    def f(x, y):
        return tnp.exp(x + y) + tnp.exp(y + x) * tnp.sin(x) - tnp.sin(x)

    x, y = np.linspace(-1, 1, 5), np.linspace(0, 2, 5)
    graph = tj.make_ir(f)(x, y)
    assert _prims(graph).count("exp") == 1 and _prims(graph).count("sin") == 1
    (got,) = evaluate(graph, [x, y])
    np.testing.assert_array_equal(got, np.exp(x + y) + np.exp(y + x) * np.sin(x) - np.sin(x))
