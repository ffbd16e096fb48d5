"""Common subexpression elimination: the rewrite sweep with no rules.

The graph builder interns nodes (ir/builder.py): a node equal to an earlier one, the same
primitive with bit-identical attributes on the same inputs (either order for commutative
primitives), is not added again. Tracing already builds graphs that way; the pipeline's one
rewrite sweep (`manager.py`) merges what its rewrites make equal. `cse` runs that sweep alone.
"""

from __future__ import annotations

from tracejit.ir.graph import Graph
from tracejit.ir.passes.rewrite import rewrite


def cse(graph: Graph, stats: dict | None = None) -> Graph:
    """`graph` with each repeated computation done once (and no dead nodes); `graph` itself
    if none repeats.

    >>> import numpy as np
    >>> from tracejit.ir.graph import Graph, Node, Value
    >>> from tracejit.ir.primitives import get
    >>> x, a, b = (Value((2,), np.float32) for _ in range(3))
    >>> sin = get("sin")
    >>> g = Graph([x], [Node(sin, [x], {}, [a]), Node(sin, [x], {}, [b])], [a, b])
    >>> [n.prim.name for n in cse(g).nodes]
    ['sin']
    """
    return rewrite(graph, (), stats)
