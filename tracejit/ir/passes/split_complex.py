"""Sums, scans, scatter-adds and matmuls of complex values become the same steps on their real
and imaginary parts, so no backend needs a complex accumulator or a complex BLAS call.

`reduce_sum(z)` is `complex(reduce_sum(real(z)), reduce_sum(imag(z)))` (likewise `cumsum`,
`take_add`, `take_along_add`: linear in their complex operands); `a @ b` is
`complex(ar @ br - ai @ bi, ar @ bi + ai @ br)` (four real matmuls: sgemm/dgemm on the CPU,
cuBLAS on CUDA). The parts are views the kernels read in place (`z.re`), and `complex` fuses
into the kernel that writes the result. Runs at post_grad, so gradients are unchanged.

>>> import numpy as np, tracejit as tj
>>> g = split_complex(tj.make_ir(lambda z: z.sum())(np.ones(3, np.complex64)))
>>> [n.prim.name for n in g.nodes]
['real', 'reduce_sum', 'imag', 'reduce_sum', 'complex']
"""

from __future__ import annotations

from tracejit.ir.dtypes import is_complex
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.primitives import get

LINEAR = frozenset(["reduce_sum", "cumsum", "take_add", "take_along_add"])


class _Emit:
    """Appends nodes to `nodes`, each with the source and phase of the node it replaces."""

    def __init__(self, node: Node):
        self.nodes: list[Node] = []
        self.like = node

    def __call__(self, name: str, *inputs: Value, out: Value | None = None, **attrs) -> Value:
        prim = get(name)
        (aval,) = prim.abstract_eval([(v.shape, v.dtype, v.weak) for v in inputs], attrs)
        out = Value(*aval) if out is None else out
        self.nodes.append(Node(prim, list(inputs), attrs, [out], self.like.source, self.like.phase))
        return out


def _split_linear(node: Node) -> list[Node]:
    e = _Emit(node)
    parts = []
    for part in ("real", "imag"):
        args = [e(part, v) if is_complex(v.dtype) else v for v in node.inputs]
        parts.append(e(node.prim.name, *args, **node.attrs))
    e("complex", *parts, out=node.outputs[0])
    return e.nodes


def _split_matmul(node: Node) -> list[Node]:
    e = _Emit(node)
    a, b = node.inputs
    ar, ai, br, bi = e("real", a), e("imag", a), e("real", b), e("imag", b)
    re = e("sub", e("matmul", ar, br), e("matmul", ai, bi))
    im = e("add", e("matmul", ar, bi), e("matmul", ai, br))
    e("complex", re, im, out=node.outputs[0])
    return e.nodes


def _splits(node: Node) -> bool:
    name = node.prim.name
    return (name in LINEAR or name == "matmul") and any(is_complex(v.dtype) for v in node.inputs)


def split_complex(graph: Graph, stats: dict | None = None) -> Graph:
    """`graph` with complex sums, scans, scatter-adds and matmuls done on real parts."""
    if not any(_splits(n) for n in graph.nodes):
        return graph
    nodes: list[Node] = []
    count = 0
    for n in graph.nodes:
        if not _splits(n):
            nodes.append(n)
            continue
        count += 1
        nodes.extend(_split_matmul(n) if n.prim.name == "matmul" else _split_linear(n))
    if stats is not None:
        stats["split_complex"] = count
    return Graph(list(graph.inputs), nodes, list(graph.outputs))
