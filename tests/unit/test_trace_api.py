"""The trace API (tracer/tracing.py): `trace` a function into a graph, `inline` a graph."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracerLeakError
from tracejit.tracer.tracing import inline, trace


def _f(x, scale):
    return {"y": tnp.sin(x) * scale, "n": x.shape[0]}


def test_trace_gives_the_graph_output_tree_and_no_captures():
    x = np.linspace(0.0, 1.0, 4)
    traced = trace(_f, (x, 2.0))
    assert [v.type_str for v in traced.graph.inputs] == ["f64[4]", "f64[]"]
    assert traced.graph.inputs[1].weak  # a Python scalar is a weak 0-d input
    assert traced.captured == []
    assert traced.out_tree.num_leaves == 2
    n, y = inline(traced.graph, [x, 2.0])  # dict leaves in key order
    np.testing.assert_array_equal(y, np.sin(x) * 2.0)
    assert int(n) == 4 and y.flags.writeable  # an ordinary array the user may write


def test_inline_records_into_the_enclosing_trace():
    g = trace(lambda x: tnp.exp(x) + 1.0, (np.ones(3),)).graph

    def outer(x):
        (y,) = inline(g, [x * 2.0])
        return y

    graph = tj.make_ir(outer)(np.ones(3))
    assert [n.prim.name for n in graph.nodes].count("exp") == 1
    got = tj.jit(outer, device="numpy")(np.arange(3.0))
    np.testing.assert_allclose(got, np.exp(np.arange(3.0) * 2.0) + 1.0, rtol=1e-15)


def test_inlined_backward_nodes_keep_their_phase():
    def loss(x):
        return tnp.sum(tnp.tanh(x) ** 2)

    graph = tj.make_ir(tj.grad(loss))(np.ones(3))
    phases = {n.phase for n in graph.nodes}
    assert phases == {"forward", "backward"}


def test_inline_refuses_a_leaked_tracer():
    leaked = []

    def keep(x):
        leaked.append(x)
        return x

    tj.make_ir(keep)(np.ones(2))
    g = trace(lambda x: x + 1.0, (np.ones(2),)).graph
    with pytest.raises(TracerLeakError):
        inline(g, [leaked[0]])
