"""Common subexpression elimination by structural hashing.

Two nodes are the same computation when they apply the same primitive, with equal attributes,
to the same input values (in either order for commutative primitives: IEEE addition and
multiplication are commutative exactly). Constants hash by their bytes, so equal constants
merge too. Every primitive is pure, so merging never changes a result.
"""

from __future__ import annotations

from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.passes.rewrite import COMMUTATIVE


def _key(node: Node, inputs: list[Value]) -> tuple | None:
    ids = [id(v) for v in inputs]
    if node.prim.name in COMMUTATIVE:
        ids.sort()
    try:
        attrs = node.attrs_key()
        hash(attrs)
    except TypeError:  # an unhashable attribute: never merged
        return None
    return (node.prim.name, tuple(ids), attrs)


def cse(graph: Graph) -> Graph:
    """`graph` with each repeated computation done once; `graph` itself if none repeats.

    >>> import numpy as np, tracejit as tj
    >>> g = tj.make_ir(lambda x: np.sin(x) * np.sin(x))(np.ones(2))
    >>> [n.prim.name for n in cse(g).nodes]
    ['sin', 'mul']
    """
    seen: dict[tuple, Node] = {}
    env: dict[Value, Value] = {v: v for v in graph.inputs}
    nodes: list[Node] = []
    changed = False
    for node in graph.nodes:
        inputs = [env[v] for v in node.inputs]
        key = _key(node, inputs)
        previous = seen.get(key) if key is not None else None
        if previous is not None:
            env.update(zip(node.outputs, previous.outputs))
            changed = True
            continue
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            node = Node(node.prim, inputs, node.attrs, node.outputs, node.source, node.phase)
        nodes.append(node)
        env.update((v, v) for v in node.outputs)
        if key is not None:
            seen[key] = node
    if not changed:
        return graph
    return Graph(list(graph.inputs), nodes, [env[v] for v in graph.outputs])
