"""Reductions, matmuls and library steps on float16/bfloat16 run in float32.

Elementwise kernels compute 16-bit floats in float32 already (ir/c_types.py); this pass does
the same for everything else: each such node reads its 16-bit operands converted to float32
and its results are rounded back once. So sums and matmuls accumulate in float32 (as JAX and
cuBLAS do), a float16 matmul is one sgemm, and no backend needs a 16-bit accumulator. The
converts fuse into the neighbouring kernels. Runs on graphs that will not be differentiated
again (post_grad), so gradients are unchanged.

>>> import numpy as np, tracejit as tj
>>> g = widen_low_precision(tj.make_ir(lambda x: x.sum())(np.ones(4, np.float16)))
>>> [n.prim.name for n in g.nodes]
['convert', 'reduce_sum', 'convert']
"""

from __future__ import annotations

import numpy as np

from tracejit.ir.dtypes import is_low_precision
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.primitives import get

_FLOAT32 = np.dtype(np.float32)
# Every primitive that is not elementwise (those compute in float32 inside the kernel) and
# not pure data movement (layout, take: copying 16-bit values needs no arithmetic).
WIDENED = frozenset(
    [
        "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax", "argmin", "cumsum",
        "cumprod",
        "matmul", "take_add", "take_along_add", "solve", "inv", "cholesky", "det", "slogdet",
        "eigh", "eigvalsh", "qr", "svd", "svdvals",
        "argsort", "sort", "searchsorted",  # ml_dtypes' bfloat16 sort misplaces NaN
    ]
)  # fmt: skip


def _convert(prim, x: Value, dtype) -> tuple[Node, Value]:
    out = Value(x.shape, dtype, x.weak)
    return Node(prim, [x], {"dtype": np.dtype(dtype)}, [out]), out


def _widened(node: Node, convert) -> list[Node]:
    nodes, inputs = [], []
    for v in node.inputs:
        if is_low_precision(v.dtype):
            n, v = _convert(convert, v, _FLOAT32)
            nodes.append(n)
        inputs.append(v)
    avals = node.prim.abstract_eval([(v.shape, v.dtype, v.weak) for v in inputs], node.attrs)
    outputs = []
    after = []
    for old, aval in zip(node.outputs, avals):
        new = Value(*aval)
        if new.dtype != old.dtype:  # round back into the node's original output value
            after.append(Node(convert, [new], {"dtype": old.dtype}, [old], node.source))
        else:
            new = old
        outputs.append(new)
    return [*nodes, Node(node.prim, inputs, node.attrs, outputs, node.source, node.phase), *after]


def widen_low_precision(graph: Graph, stats: dict | None = None) -> Graph:
    """`graph` with every WIDENED node over float16/bfloat16 computed in float32."""
    hits = {
        id(n)
        for n in graph.nodes
        if n.prim.name in WIDENED and any(is_low_precision(v.dtype) for v in n.inputs)
    }
    if not hits:
        return graph
    convert = get("convert")
    nodes = []
    for n in graph.nodes:
        nodes.extend(_widened(n, convert) if id(n) in hits else [n])
    if stats is not None:
        stats["widen_low_precision"] = len(hits)
    return Graph(list(graph.inputs), nodes, list(graph.outputs))
