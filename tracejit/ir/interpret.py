"""The NumPy reference interpreter: the oracle for tests and the engine of eager calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tracejit.errors import InternalError, TracejitTypeError
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.primitives import Primitive


def apply_primitive(prim: Primitive, args: Sequence[np.ndarray], attrs: dict) -> list[np.ndarray]:
    """Run one primitive on NumPy arrays; results carry exactly the dtypes its rule gives."""
    avals = [(a.shape, a.dtype, False) for a in args]
    expected = prim.abstract_eval(avals, attrs)
    with np.errstate(all="ignore"):  # compiled code never warns; neither does the oracle
        result = prim.impl(*args, **attrs)
    results = result if prim.multiple_results else (result,)
    out = []
    for r, (shape, dtype, _) in zip(results, expected):
        arr = np.asarray(r)
        if arr.dtype != dtype:
            arr = arr.astype(dtype)
        if arr.shape != tuple(shape):
            raise InternalError(f"{prim.name} produced {arr.shape}, its rule says {shape}")
        out.append(arr)
    return out


def eval_graph(
    graph: Graph,
    args: Sequence,
    apply: Callable[[Node, list], list],
) -> list:
    """Walk `graph` in order, calling `apply(node, input_values)` for each node.

    Used with `apply_primitive` for reference evaluation and with the tracer's `bind` to
    inline one graph into another trace.
    """
    if len(args) != len(graph.inputs):
        raise TracejitTypeError(f"graph takes {len(graph.inputs)} inputs, got {len(args)}")
    env: dict[Value, object] = dict(zip(graph.inputs, args))
    for node in graph.nodes:
        outs = apply(node, [env[v] for v in node.inputs])
        env.update(zip(node.outputs, outs))
    return [env[v] for v in graph.outputs]


def evaluate(graph: Graph, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Evaluate `graph` on NumPy arrays with the reference implementations."""
    arrays = [np.asarray(a, dtype=v.dtype) for a, v in zip(args, graph.inputs)]
    return eval_graph(graph, arrays, lambda n, xs: apply_primitive(n.prim, xs, n.attrs))
