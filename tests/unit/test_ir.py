"""The IR: printer, verifier, dtype promotion, primitive registry."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
from tracejit.ir import dtypes, primitives
from tracejit.ir.graph import Graph, Node, Value, VerifyError, verify
from tracejit.ir.interpret import evaluate


def test_printer_matches_jaxpr_style():
    a, b = Value((4, 8), np.float32), Value((8, 2), np.float32)
    c, d = Value((4, 2), np.float32), Value((), np.float32)
    g = Graph(
        [a, b],
        [
            Node(primitives.get("matmul"), [a, b], {}, [c]),
            Node(primitives.get("reduce_sum"), [c], {"axes": (0, 1)}, [d]),
        ],
        [d],
    )
    assert str(g) == (
        "{ lambda a:f32[4,8] b:f32[8,2] . let\n"
        "    c:f32[4,2] = matmul a b\n"
        "    d:f32[] = reduce_sum[axes=(0, 1)] c\n"
        "  in (d,) }"
    )
    verify(g)
    (out,) = evaluate(g, [np.ones((4, 8)), np.ones((8, 2))])
    assert out == 64.0


def test_printer_marks_unused_binders():
    g = tj.make_ir(lambda x, unused: x + 1.0)(np.ones(2), np.ones(3))
    assert str(g).startswith("{ lambda a:f64[2] _:f64[3] . let")


def test_verifier_rejects_use_before_definition_and_wrong_types():
    a = Value((2,), np.float32)
    b = Value((2,), np.float32)
    bad_order = Graph([a], [Node(primitives.get("add"), [a, b], {}, [Value((2,), np.float32)])], [])
    with pytest.raises(VerifyError, match="before it is defined"):
        verify(bad_order)
    wrong_type = Graph([a], [Node(primitives.get("exp"), [a], {}, [b])], [b])
    verify(wrong_type)
    c = Value((3,), np.float32)
    with pytest.raises(VerifyError, match="disagrees with its rule"):
        verify(Graph([a], [Node(primitives.get("exp"), [a], {}, [c])], [c]))
    with pytest.raises(VerifyError, match="never defined"):
        verify(Graph([a], [], [c]))


def test_traced_graphs_verify():
    g = tj.make_ir(lambda x, y: np.tanh(x * y + 0.5 * x) * 2 - y)(np.ones(3), np.ones(3))
    verify(g)
    assert [n.prim.name for n in g.nodes].count("tanh") == 1


# weak values come from Python scalars, so they carry Python's default dtypes
PYTHON_DTYPES = [np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float64)]
# bfloat16 is not NumPy's: its promotion (JAX's) is tested in test_tnp_dtypes.py
KINDS = [(d, False) for d in dtypes.SUPPORTED if d != dtypes.BFLOAT16] + [
    (d, True) for d in PYTHON_DTYPES
]


@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3))
def test_result_type_matches_numpy2(operands):
    # NumPy oracle: a weak operand is a Python scalar, a strong one a 1-element array.
    standin = {"b": True, "i": 1, "f": 1.0}
    values = [standin[d.kind] if w else np.ones(1, d) for d, w in operands]
    expected = np.result_type(*values)
    got, weak = dtypes.result_type(*operands)
    assert got == expected
    assert weak == all(w for _, w in operands)


def test_unsupported_dtype_names_supported_ones():
    with pytest.raises(tj.errors.UnsupportedError, match="datetime64.*float32"):
        dtypes.canonical("datetime64[s]")


def test_unknown_primitive_is_a_named_error():
    with pytest.raises(tj.errors.UnsupportedError, match="no primitive named 'nope'"):
        primitives.get("nope")


def test_every_primitive_has_kind_rule_and_impl():
    kinds = {
        "elementwise",
        "reduction",
        "layout",
        "matmul",
        "gather-scatter",
        "random",
        "creation",
        "opaque",
        "control",
    }
    for name, prim in primitives.PRIMITIVES.items():
        assert prim.name == name and prim.kind in kinds
        assert callable(prim.rule) and callable(prim.impl)


def test_the_schedule_holds_simplified_kernels():
    # fuse simplifies every kernel once, for both backends: a contiguous (64, 1024) loop is
    # one flat loop, a sum over the last axis keeps its (outer, inner) split, a padded copy
    # (a kernel built apart from the fused groups) has its size-1 dims dropped
    from tracejit.ir import kernel as K
    from tracejit.ir.fusion import fuse
    from tracejit.ir.kernel_simplify import simplify

    def kernels(fn, *args):
        return [s for s in fuse(tj.make_ir(fn)(*args)).steps if isinstance(s, K.Kernel)]

    x = np.ones((64, 1024), np.float32)
    (flat,) = kernels(lambda a: a * 2.0 + 1.0, x)
    assert flat.outer == (64 * 1024,)
    (rows,) = kernels(lambda a: a.sum(axis=1), x)
    assert (rows.outer, rows.inner) == ((64,), (1024,))
    padded = kernels(lambda a: tj.numpy.pad(a, ((0, 0), (1, 1), (0, 0))), np.ones((3, 1, 4)))
    for k in [flat, rows, *padded]:
        again = simplify(k)
        assert (again.outer, again.inner) == (k.outer, k.inner), k.name
    assert all(1 not in k.outer for k in padded)
