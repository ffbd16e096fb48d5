"""Graph passes. `optimize(graph)` runs the listed pass sequence before fusion."""

from __future__ import annotations

from collections.abc import Callable

from tracejit.ir.graph import Graph, verify

Pass = Callable[[Graph], Graph]
PASSES: list[Pass] = []  # filled by the graph-passes work: DCE, CSE, folding, rewrites


def optimize(graph: Graph, verify_each: bool = False) -> Graph:
    """Run every pass of PASSES in order; with `verify_each` the verifier checks each result."""
    for p in PASSES:
        graph = p(graph)
        if verify_each:
            verify(graph)
    return graph
