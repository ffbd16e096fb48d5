"""The one graph builder: appends nodes to a `Graph`, interning (hash-consing) pure ones.

Every producer of nodes goes through `GraphBuilder.bind` (the tracer, autodiff, the rewrite
engine), so a node equal to one already in the graph (the same primitive, the same input
values, equal attributes) is not added again: its outputs are returned instead. Common
subexpression elimination thus happens as nodes are created, in one pass, with no
whole-graph sweep.

Two nodes are equal when:

- their inputs are the same `Value`s (in either order for commutative primitives: IEEE
  addition and multiplication are commutative exactly);
- their attributes are equal *bit for bit*: literals are keyed by their bit pattern, so
  `0.0` and `-0.0`, or two NaNs with different payloads, stay distinct constants.

Never interned: nodes of effectful primitives (collectives: each call communicates), random
primitives, nodes without outputs (they exist for an effect: `tj.debug.print`), nodes whose
regions hold any of those, and nodes with an unhashable attribute.

>>> import numpy as np
>>> from tracejit.ir.graph import Value
>>> from tracejit.ir.primitives import get
>>> b = GraphBuilder()
>>> x = Value((2,), np.float32)
>>> b.graph.inputs.append(x)
>>> (s1,) = b.bind(get("sin"), [x], {})
>>> (s2,) = b.bind(get("sin"), [x], {})
>>> s1 is s2, len(b.graph.nodes)
(True, 1)
"""

from __future__ import annotations

import struct

import numpy as np

from tracejit.errors import TracejitAttributeError
from tracejit.ir.graph import ConstValue, Graph, Node, Value
from tracejit.ir.primitives import RANDOM, Primitive, get
from tracejit.ir.regions import Region, region_graphs

# Operand order does not change the result, bit for bit.
COMMUTATIVE = frozenset({"add", "mul", "max", "min", "and", "or", "xor", "eq", "ne"})


# Attribute values that are their own key (no float inside: no bit pattern to tell apart).
_PLAIN = frozenset({int, str, bool, type(None)})


def _literal(value):
    """A hashable key of an attribute value that distinguishes every bit pattern."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, float):
        return ("f64", struct.pack("<d", value))
    if isinstance(value, np.generic):
        return (value.dtype.str, value.tobytes())
    if isinstance(value, tuple):
        for v in value:
            if type(v) not in _PLAIN:
                return tuple(_literal(v) for v in value)
        return value  # a shape, axes: ints only
    return value  # ConstValue compares by bytes; Region by text and payloads; the rest by ==


def _marks_effect(prim: Primitive, has_outputs: bool) -> bool:
    return not has_outputs or prim.effectful or prim.kind == RANDOM


def _attrs_key(attrs: dict) -> tuple[tuple, list[Graph]]:
    """The attributes' interning key (sorted `(name, literal)` pairs) and the graphs of the
    regions among them, in one pass (this runs for every node a trace records)."""
    items, graphs = [], []
    for name in sorted(attrs):
        value = attrs[name]
        kind = type(value)
        if kind in _PLAIN:
            items.append((name, value))
            continue
        for item in value if isinstance(value, tuple) else (value,):
            if type(item) not in _PLAIN and isinstance(item, Region):
                graphs.append(item.graph)
        items.append((name, _literal(value)))
    return tuple(items), graphs


def _regions_effectful(stack: list[Graph]) -> bool:
    """Whether any node of these region graphs, at any depth, has an effect."""
    while stack:
        for n in stack.pop().nodes:
            if _marks_effect(n.prim, bool(n.outputs)):
                return True
            stack.extend(region_graphs(n))
    return False


def node_key(prim: Primitive, inputs, attrs: dict, n_outputs: int = 1) -> tuple | None:
    """The interning key of `prim(*inputs, **attrs)`, or None when it must stay distinct.
    The key may still be unhashable (an unhashable attribute): `GraphBuilder` never merges
    such a node."""
    if _marks_effect(prim, n_outputs > 0):
        return None
    literals = ()
    if attrs:
        literals, graphs = _attrs_key(attrs)
        if graphs and _regions_effectful(graphs):
            return None
    if prim.name not in COMMUTATIVE:
        return (prim, tuple(inputs), literals)
    if len(inputs) == 2:
        a, b = inputs
        return (prim, (a, b) if id(a) <= id(b) else (b, a), literals)
    return (prim, tuple(sorted(inputs, key=id)), literals)


class GraphBuilder:
    """Appends nodes to `graph` (a new one by default), returning earlier equal nodes' outputs.

    Nodes already in `graph` are interned first, so building on a graph (autodiff appending a
    backward pass to its forward) shares with what is there.
    """

    def __init__(self, graph: Graph | None = None):
        self.graph = Graph() if graph is None else graph
        self.merged = 0  # nodes not added because an equal one existed
        self._table: dict[tuple, list[Value]] = {}
        # (primitive, input types, attribute key) -> output types: an unrolled loop applies
        # each shape rule to the same types over and over (rules are pure functions of these)
        self._out_avals: dict[tuple, list[tuple]] = {}
        for node in self.graph.nodes:
            key = node_key(node.prim, node.inputs, node.attrs, len(node.outputs))
            if key is not None:
                try:
                    self._table.setdefault(key, node.outputs)
                except TypeError:  # an unhashable attribute: never merged
                    pass

    def bind(
        self,
        prim: Primitive,
        inputs: list[Value],
        attrs: dict,
        source: str | None = None,
        phase: str = "forward",
    ) -> list[Value]:
        """The outputs of `prim(*inputs, **attrs)`: an equal earlier node's, or a new node's.

        The shape rule runs only for a new node (an equal one passed it already), so shape
        errors are raised here, before anything is appended.
        """
        out_avals = None
        n_out = 1
        if prim.multiple_results:  # how many outputs (none: a node kept for its effect)
            out_avals = self._rule(prim, inputs, attrs)
            n_out = len(out_avals)
        key, found = self._find(node_key(prim, inputs, attrs, n_out))
        if found is not None:
            return found
        if out_avals is None:
            out_avals = self._single_rule(prim, inputs, attrs, key)
        outs = [Value(*aval) for aval in out_avals]
        return self._append(Node(prim, list(inputs), attrs, outs, source, phase), key)

    def inline(self, graph: Graph, inputs: list[Value]) -> list[Value]:
        """`graph`'s outputs, each of its nodes bound here (so interned) on `inputs`."""
        env: dict[Value, Value] = dict(zip(graph.inputs, inputs))
        for n in graph.nodes:
            outs = self.bind(n.prim, [env[v] for v in n.inputs], n.attrs, n.source, n.phase)
            env.update(zip(n.outputs, outs))
        return [env[v] for v in graph.outputs]

    def add(self, node: Node) -> list[Value]:
        """Append the existing `node` unless an equal one exists; the outputs to use."""
        key, found = self._find(node_key(node.prim, node.inputs, node.attrs, len(node.outputs)))
        if found is not None:
            return found
        return self._append(node, key)

    def _find(self, key: tuple | None) -> tuple[tuple | None, list[Value] | None]:
        """(`key`, or None when it cannot be interned; an equal node's outputs or None)."""
        if key is None:
            return None, None
        try:
            found = self._table.get(key)
        except TypeError:  # an unhashable attribute: never merged
            return None, None
        if found is not None:
            self.merged += 1
        return key, found

    def _append(self, node: Node, key: tuple | None) -> list[Value]:
        self.graph.nodes.append(node)
        outs = self.settle(node)
        if key is not None:
            self._table[key] = outs
        return outs

    def _single_rule(self, prim: Primitive, inputs, attrs: dict, key: tuple | None):
        """The output types of an internable node, remembered by its types and attributes."""
        avals = tuple([(v.shape, v.dtype, v.weak) for v in inputs])
        if key is None:
            return prim.abstract_eval(avals, attrs)
        memo = (prim, avals, key[2])
        found = self._out_avals.get(memo)
        if found is None:
            found = self._out_avals[memo] = prim.abstract_eval(avals, attrs)
        return found

    @staticmethod
    def _rule(prim: Primitive, inputs, attrs: dict) -> list[tuple]:
        return prim.abstract_eval([(v.shape, v.dtype, v.weak) for v in inputs], attrs)

    def settle(self, node: Node) -> list[Value]:
        """The values standing for a just-appended node's outputs (a rewrite may replace
        them: `passes/rewrite.py`); equal nodes added later get these too."""
        return node.outputs


class Emitter:
    """Appends nodes to `graph` for a transformation's rules; `e.mul(x, y)` binds `mul`.

    Autodiff's VJP and JVP rules and the batching rules write with it. Every node takes the
    emitter's `source` (the user's line of the node being transformed, for error reports and
    `debug_nans`) and `phase`. Nodes are interned through a `GraphBuilder` (`builder`, or a
    new one): one equal to a node already in `graph` (`cos(x)` in both passes) is not added
    again.
    """

    def __init__(self, graph: Graph, phase: str = "forward", builder: GraphBuilder | None = None):
        self.graph = graph
        self.source: str | None = None
        self.phase = phase
        self._builder = GraphBuilder(graph) if builder is None else builder

    def bind_all(self, prim: Primitive | str, /, *inputs: Value, **attrs) -> list[Value]:
        """Every output of `prim(*inputs, **attrs)` (a multi-result primitive's too)."""
        prim = get(prim) if isinstance(prim, str) else prim
        return self._builder.bind(prim, list(inputs), attrs, self.source, self.phase)

    def bind(self, prim: Primitive | str, /, *inputs: Value, **attrs) -> Value:
        return self.bind_all(prim, *inputs, **attrs)[0]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise TracejitAttributeError(name)
        return lambda *xs, **attrs: self.bind(name, *xs, **attrs)

    def const(self, value, dtype) -> Value:
        return self.bind("const", value=ConstValue(np.asarray(value, dtype)))

    def full(self, value, like) -> Value:
        """A constant array of `like`'s shape and dtype (interned: shared between rules)."""
        scalar = self.const(value, like.dtype)
        if not like.shape:
            return scalar
        return self.bind("broadcast_in_dim", scalar, shape=tuple(like.shape), dims=())


__all__ = ["COMMUTATIVE", "Emitter", "GraphBuilder", "node_key"]
