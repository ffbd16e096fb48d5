"""Regions: closed sub-graphs held as node attributes (the bodies of scan, while and cond).

A region is *closed*: everything its graph reads is one of its inputs (the enclosing node
passes loop-invariant values in explicitly, as JAX's closed jaxprs do), so every pass can
treat a region node as one opaque, pure operation, and a pass that recurses into a region
sees an ordinary `Graph`.

A `Region` hashes and compares by its printed text and the payloads of its constants (the
text abbreviates large arrays), so two nodes with identical bodies are one computation for
CSE. Passes never mutate a graph (they return new ones), so the key is computed once.

>>> import numpy as np
>>> from tracejit.ir.graph import Graph, Value
>>> x = Value((2,), np.float32)
>>> print(Region(Graph([x], [], [x])))
{ lambda a:f32[2] . let
  in (a,) }
"""

from __future__ import annotations

from collections.abc import Iterator

from tracejit.ir.graph import ConstValue, Graph, Node, Value, format_graph

# Printed region text is indented this much under the line of the node that holds it.
_INDENT = "      "


class Region:
    """A hashable, printable wrapper around a closed `Graph` (a node attribute)."""

    __slots__ = ("_hash", "_key", "_text", "graph")

    def __init__(self, graph: Graph):
        self.graph = graph
        self._text: str | None = None
        self._key: tuple | None = None
        self._hash: int | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = format_graph(self.graph)
        return self._text

    @property
    def key(self) -> tuple:
        """The text and every constant payload (nested regions by their own keys)."""
        if self._key is None:
            parts = []
            for node in self.graph.nodes:
                for value in node.attrs.values():
                    if isinstance(value, ConstValue | Region):
                        parts.append(value)
                    elif isinstance(value, tuple):
                        parts.extend(r for r in value if isinstance(r, Region))
            self._key = (self.text, tuple(parts))
        return self._key

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.key)
        return self._hash

    def __reduce__(self):
        # The graph only: a stored hash of text is another process's (PYTHONHASHSEED)
        return Region, (self.graph,)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Region):
            return NotImplemented
        return self.graph is other.graph or self.key == other.key

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        # Nested in a node's attribute list: continuation lines indented under the node.
        return self.text.replace("\n", "\n" + _INDENT)

    @property
    def in_avals(self) -> list[tuple]:
        return [(v.shape, v.dtype, v.weak) for v in self.graph.inputs]

    @property
    def out_avals(self) -> list[tuple]:
        return [(v.shape, v.dtype, v.weak) for v in self.graph.outputs]


def regions_of(node: Node) -> Iterator[tuple[str, int, Region]]:
    """`(attribute name, position, region)` for every region attribute of `node`.

    Branch tuples (`cond`'s `branches`) yield one entry per branch; `position` is -1 for a
    region held directly.
    """
    for name, value in sorted(node.attrs.items()):
        if isinstance(value, Region):
            yield name, -1, value
        elif isinstance(value, tuple) and value and all(isinstance(r, Region) for r in value):
            for i, r in enumerate(value):
                yield name, i, r


def region_graphs(node: Node) -> list[Graph]:
    """The graphs of `node`'s regions, in `regions_of`'s order."""
    return [r.graph for _, _, r in regions_of(node)]


def nested_graphs(graph: Graph) -> list[Graph]:
    """Every region graph inside `graph`, at any depth (outer before inner; iterative)."""
    found, stack = [], [graph]
    while stack:
        g = stack.pop()
        inner = [sub for n in g.nodes for sub in region_graphs(n)]
        found += inner
        stack += reversed(inner)
    return found


def has_regions(node: Node) -> bool:
    return next(regions_of(node), None) is not None


def map_regions(node: Node, fn) -> Node:
    """`node` with `fn(graph) -> graph` applied to each region; `node` itself if unchanged."""
    attrs, changed = dict(node.attrs), False
    for name, i, region in regions_of(node):
        new = fn(region.graph)
        if new is not region.graph:
            held, changed = attrs[name], True
            attrs[name] = Region(new) if i < 0 else (*held[:i], Region(new), *held[i + 1 :])
    if not changed:
        return node
    return Node(node.prim, list(node.inputs), attrs, list(node.outputs), node.source, node.phase)


def same_avals(a: list[tuple], b: list[tuple]) -> bool:
    """Shapes and dtypes equal position by position (weak flags are ignored)."""
    return len(a) == len(b) and all(
        tuple(x[0]) == tuple(y[0]) and x[1] == y[1] for x, y in zip(a, b)
    )


def aval_str(aval: tuple) -> str:
    return Value(aval[0], aval[1]).type_str


__all__ = [
    "Region",
    "aval_str",
    "has_regions",
    "map_regions",
    "nested_graphs",
    "region_graphs",
    "regions_of",
    "same_avals",
]
