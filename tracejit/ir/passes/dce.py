"""Dead-code elimination: drop nodes no output depends on; report unused inputs.

Graph inputs are never removed: the calling convention (one array per flattened argument)
depends on them. `unused_inputs` says which ones the computation ignores.
"""

from __future__ import annotations

from tracejit.ir.graph import Graph, Value


def _live_values(graph: Graph) -> set[Value]:
    live: set[Value] = set(graph.outputs)
    for node in reversed(graph.nodes):
        if _kept(node, live):
            live.update(node.inputs)
    return live


def _kept(node, live: set[Value]) -> bool:
    """Used, or a node without outputs (it exists for its effect: tj.debug.print)."""
    return not node.outputs or any(v in live for v in node.outputs)


def remove_dead_nodes(graph: Graph) -> Graph:
    """`graph` without the nodes whose outputs nothing uses; `graph` itself if none.

    >>> import numpy as np, tracejit as tj
    >>> g = tj.make_ir(lambda x: (np.exp(x), x)[1])(np.ones(2))
    >>> [n.prim.name for n in remove_dead_nodes(g).nodes]
    []
    """
    live = _live_values(graph)
    kept = [n for n in graph.nodes if _kept(n, live)]
    if len(kept) == len(graph.nodes):
        return graph
    return Graph(list(graph.inputs), kept, list(graph.outputs))


def unused_inputs(graph: Graph) -> list[int]:
    """Positions of the graph inputs no output depends on.

    >>> import numpy as np, tracejit as tj
    >>> unused_inputs(tj.make_ir(lambda x, y: x + 1.0)(np.ones(2), np.ones(2)))
    [1]
    """
    live = _live_values(graph)
    return [i for i, v in enumerate(graph.inputs) if v not in live]
