"""Every primitive's batching rule against a Python loop over the batch.

`CASES` holds per-example operands for every primitive in the registry; a primitive added
without a batching rule, or without a case here, fails `test_every_primitive_has_a_rule`.
Each rule runs with several batch-axis layouts (all first, all last, one operand batched and
the others shared) and must equal stacking the primitive's results example by example.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _prims import elementwise_names, kinds_of

import tracejit as tj  # registers every primitive, tracejit.random's included
import tracejit.numpy as tnp
from tracejit.batching import batch_graph, rule_for
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.interpret import apply_primitive, evaluate
from tracejit.ir.primitives import PRIMITIVES

SIZE = 3
F64, I64 = np.dtype(np.float64), np.dtype(np.int64)

# positive and below 1 suits every float function's domain but acosh's
_DOMAIN = {"acosh": (1.1, 3.0), "log1p": (0.1, 0.9)}


def _operand(rng, kinds: str, shape=(2, 3), name=""):
    if "f" in kinds:
        lo, hi = _DOMAIN.get(name, (0.1, 0.9))
        return rng.uniform(lo, hi, shape)
    if "i" in kinds:
        return rng.integers(1, 5, shape).astype(np.int64)
    return rng.random(shape) < 0.5


def _elementwise_case(name, kinds, arity):
    return lambda rng: ([_operand(rng, kinds, name=name) for _ in range(arity)], {})


CASES = {
    name: _elementwise_case(name, kinds_of(name), arity)
    for arity in (1, 2)
    for name in elementwise_names(arity)
}


def _case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


@_case("select")
def _select(rng):
    return [rng.random((2, 3)) < 0.5, rng.random((2, 3)), rng.random((2, 3))], {}


@_case("convert")
def _convert(rng):
    return [rng.uniform(-3, 3, (2, 3))], {"dtype": np.dtype(np.float32)}


for _name in ("real", "imag", "conj"):
    CASES[_name] = lambda rng: ([rng.random((2, 3)) + 1j * rng.random((2, 3))], {})
CASES["complex"] = lambda rng: ([rng.random((2, 3)), rng.random((2, 3))], {})
CASES["bitcast_convert_type"] = lambda rng: ([rng.random((2, 3))], {"dtype": np.dtype(np.int64)})
for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
    CASES[_name] = lambda rng: ([rng.random((3, 4))], {"axes": (1,)})
for _name in ("argmax", "argmin"):
    CASES[_name] = lambda rng: ([rng.random((3, 4))], {"axis": 1})
CASES["cumsum"] = lambda rng: ([rng.random((3, 4))], {"axis": 0})
CASES["cumprod"] = lambda rng: ([rng.random((3, 4))], {"axis": 1})
CASES["reshape"] = lambda rng: ([rng.random((3, 4))], {"shape": (2, 6)})
CASES["transpose"] = lambda rng: ([rng.random((2, 3, 4))], {"perm": (2, 0, 1)})
CASES["broadcast_in_dim"] = lambda rng: ([rng.random((3,))], {"shape": (2, 3), "dims": (1,)})
CASES["rev"] = lambda rng: ([rng.random((3, 4))], {"axes": (1,)})
CASES["slice"] = lambda rng: (
    [rng.random((5, 4))],
    {"starts": (1, 0), "stops": (5, 3), "steps": (2, 1)},
)
CASES["concatenate"] = lambda rng: ([rng.random((2, 3)), rng.random((1, 3))], {"axis": 0})
CASES["pad"] = lambda rng: (
    [rng.random((2, 3)), np.asarray(rng.random())],
    {"widths": ((1, 0), (0, 2))},
)
# Indices reach past both ends, so the per-example clamping is tested too.
CASES["take"] = lambda rng: ([rng.random((3, 5)), rng.integers(-7, 7, (2, 2))], {"axis": 1})
CASES["take_add"] = lambda rng: (
    [rng.random((5, 3)), rng.integers(-6, 6, (4,)), rng.random((4, 3))],
    {"axis": 0},
)
CASES["take_along_axis"] = lambda rng: (
    [rng.random((3, 4)), rng.integers(-5, 5, (3, 2))],
    {"axis": 1},
)
CASES["take_along_add"] = lambda rng: (
    [rng.random((3, 4)), rng.integers(0, 4, (3, 2)), rng.random((3, 2))],
    {"axis": 1},
)
CASES["matmul"] = lambda rng: ([rng.random((2, 3)), rng.random((3, 4))], {})
CASES["searchsorted"] = lambda rng: (  # a sorted, with a tie, NaN last; every layout batched
    [np.array([0.1, 0.4, 0.4, 0.7, np.nan]) + rng.random() * 0.05, rng.random((2, 3))],
    {"side": "right"},
)
CASES["const"] = lambda rng: ([], {"value": _const(rng.random((2,)))})
CASES["iota"] = lambda rng: ([], {"shape": (3, 2), "dtype": I64, "axis": 1})
CASES["threefry2x32"] = lambda rng: (
    [rng.integers(0, 2**32, (2,)), rng.integers(0, 2**32, (5,))],
    {},
)


def _custom_call():
    """The CustomCall of a custom_vjp function, as recorded by tracing it."""
    f = tj.custom_vjp(lambda x, y: (tnp.sin(x) * y, x.sum()))
    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda r, g: (g[0] * r[1], g[0] * r[0]))
    (node,) = [n for n in tj.make_ir(f)(np.ones((2, 3)), np.ones((2, 3))).nodes]
    return node.attrs["call"]


CASES["custom_vjp_call"] = lambda rng: (
    [rng.random((2, 3)), rng.random((2, 3))],
    {"call": _CUSTOM_CALL},
)


def _node_of(name, fn, *args):
    """The operand avals and attributes of the `name` node in fn's traced graph."""
    graph = tj.make_ir(fn)(*args)
    (node,) = [n for n in graph.nodes if n.prim.name == name]
    return [(v.shape, v.dtype) for v in node.inputs], node.attrs


def _control_case(name, fn, *args):
    avals, attrs = _node_of(name, fn, *args)

    def make(rng):
        ops = []
        for shape, dtype in avals:
            if dtype.kind == "f":
                ops.append(rng.uniform(0.0, 4.0, shape).astype(dtype))
            else:  # a branch index, out of range at times: cond clamps it
                ops.append(rng.integers(-1, 4, shape).astype(dtype))
        return ops, attrs

    return make


def _scan_fn(w, c0, xs):
    return tj.lax.scan(lambda c, x: (c * w + tnp.sin(x), c * x), c0, xs)


def _while_fn(limit, v):
    init = (limit * 0.25, v)
    return tj.lax.while_loop(lambda c: c[0] < limit, lambda c: (c[0] + 1.0, c[1] * 0.5 + 1.0), init)


def _switch_fn(i, x):
    return tj.lax.switch(i, [lambda x: x * 2.0, lambda x: tnp.sin(x), lambda x: x - 1.0], x)


_V3 = np.ones(3)
CASES["scan"] = _control_case("scan", _scan_fn, 0.5 * _V3, _V3, np.ones((4, 3)))
CASES["while_loop"] = _control_case("while_loop", _while_fn, np.float64(3.0), _V3)
CASES["cond"] = _control_case("cond", _switch_fn, np.int32(1), _V3)

CASES["remat_barrier"] = _elementwise_case("remat_barrier", "f", 1)
CASES["debug_print"] = lambda rng: (
    [rng.random((2, 3))],
    {"fmt": "{}", "tree": tj.tree_structure(((0,), {}))},
)

# The collectives, in this one process (tests/backend/test_distributed.py runs them on two).
for _name in ("psum", "pmax", "pmin", "all_gather"):
    CASES[_name] = lambda rng: ([rng.random((2, 3))], {"axis_name": "i", "count": 1})
CASES["psum_scatter"] = lambda rng: ([rng.random((1, 3))], {"axis_name": "i", "count": 1})
CASES["ppermute"] = lambda rng: (
    [rng.random((2, 3))],
    {"axis_name": "i", "count": 1, "perm": ((0, 0),)},
)
CASES["axis_index"] = lambda rng: ([], {"axis_name": "i", "count": 1})


# Linear algebra on well-conditioned (and, for cholesky, positive-definite) matrices.
def _WELL(rng):
    return rng.random((3, 3)) + 3.0 * np.eye(3)


CASES["solve"] = lambda rng: ([_WELL(rng), rng.random((3, 2))], {})
for _name in ("inv", "det", "slogdet"):
    CASES[_name] = lambda rng: ([_WELL(rng)], {})
CASES["eigh"] = CASES["eigvalsh"] = lambda rng: ([_WELL(rng) @ _WELL(rng).T], {})
CASES["cholesky"] = lambda rng: ([_WELL(rng) @ _WELL(rng).T], {"upper": True})
CASES["svd"] = lambda rng: ([rng.random((4, 3))], {"full_matrices": False})
CASES["svdvals"] = lambda rng: ([rng.random((4, 3))], {})
CASES["qr"] = lambda rng: ([rng.random((4, 3))], {"complete": True})
CASES["argsort"] = lambda rng: ([rng.integers(0, 3, (3, 5)).astype(np.float64)], {"axis": 1})
CASES["sort"] = CASES["argsort"]
CASES["eig"] = CASES["eigvals"] = lambda rng: ([rng.random((3, 3))], {})
CASES["fft"] = lambda rng: ([rng.random((3, 4))], {"kind": "rfft", "lengths": (3, 4)})

# Extra layouts that take other paths through a rule.
EXTRA = {
    "take_axis0": (
        "take",
        lambda rng: ([rng.random((5, 3)), rng.integers(-6, 6, (4,))], {"axis": 0}),
    ),
    "take_add_axis1": (
        "take_add",
        lambda rng: (
            [rng.random((3, 5)), rng.integers(-6, 6, (2, 2)), rng.random((3, 2, 2))],
            {"axis": 1},
        ),
    ),
    "matmul_batched": ("matmul", lambda rng: ([rng.random((2, 2, 3)), rng.random((2, 3, 4))], {})),
    "reduce_all": ("reduce_sum", lambda rng: ([rng.random((3, 4))], {"axes": (0, 1)})),
    "svd_full_wide": ("svd", lambda rng: ([rng.random((2, 4))], {"full_matrices": True})),
    "argsort_axis0": ("argsort", lambda rng: ([rng.integers(0, 3, (4, 2))], {"axis": 0})),
    "solve_stacked": (
        "solve",
        lambda rng: ([np.stack([_WELL(rng), _WELL(rng)]), rng.random((2, 3, 1))], {}),
    ),
}


def _const(array):
    from tracejit.ir.graph import ConstValue

    return ConstValue(array)


_CUSTOM_CALL = _custom_call()


def _layouts(operands) -> list[tuple]:
    """Batch-axis layouts: all first, all last, and each operand alone batched (first)."""
    n = len(operands)
    if n == 0:
        return [()]
    layouts = [(0,) * n, tuple(np.ndim(x) for x in operands)]
    if n > 1:
        layouts += [tuple(0 if j == i else None for j in range(n)) for i in range(n)]
    return layouts


def _stack_at(xs, dim):
    return np.stack(xs, axis=dim)


def _check(name, make, seed):
    prim = PRIMITIVES[name]
    rng = np.random.default_rng(seed)
    examples = [make(rng) for _ in range(SIZE)]
    attrs = examples[0][1]
    shared = examples[0][0]
    for layout in _layouts(shared):
        batched, per_example = [], [[] for _ in range(SIZE)]
        for k, dim in enumerate(layout):
            if dim is None:
                batched.append(shared[k])
                for ex in per_example:
                    ex.append(shared[k])
            else:
                col = [np.asarray(examples[b][0][k]) for b in range(SIZE)]
                batched.append(_stack_at(col, dim))
                for b, ex in enumerate(per_example):
                    ex.append(col[b])
        ins = [Value(np.shape(x), np.asarray(x).dtype) for x in shared]
        outs = [
            Value(*a) for a in prim.abstract_eval([(v.shape, v.dtype, False) for v in ins], attrs)
        ]
        graph = Graph(ins, [Node(prim, list(ins), attrs, outs)], outs)
        batched_graph = batch_graph(graph, list(layout), SIZE, [0] * len(outs))
        got = evaluate(batched_graph, batched)
        loop = [apply_primitive(prim, [np.asarray(x) for x in ex], attrs) for ex in per_example]
        for i, g in enumerate(got):
            want = np.stack([r[i] for r in loop])
            assert g.shape == want.shape and g.dtype == want.dtype, (name, layout)
            if want.dtype.kind == "f":
                np.testing.assert_allclose(g, want, rtol=1e-13, atol=0, err_msg=f"{name} {layout}")
            else:
                np.testing.assert_array_equal(g, want, err_msg=f"{name} {layout}")


def test_every_primitive_has_a_rule():
    names = [n for n in PRIMITIVES if not n.startswith("test_")]  # other tests' stand-ins
    missing_rule = [n for n in names if rule_for(n) is None]
    missing_case = [n for n in names if n not in CASES]
    assert not missing_rule, f"primitives without a batching rule: {missing_rule}"
    assert not missing_case, f"primitives without a case in test_batching_rules: {missing_case}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_loop(name):
    _check(name, CASES[name], seed=sum(map(ord, name)))


@pytest.mark.parametrize("label", sorted(EXTRA))
def test_rule_matches_loop_extra_layouts(label):
    name, make = EXTRA[label]
    _check(name, make, seed=sum(map(ord, label)))


def test_layouts_cover_unbatched_operands():
    assert (0, None) in _layouts([np.zeros(2), np.zeros(2)])
    assert list(itertools.chain(*_layouts([np.zeros((2, 3))]))) == [0, 2]
