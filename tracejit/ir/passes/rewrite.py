"""One rewrite engine for every pattern pass: a table of (pattern -> replacement) rules.

In the style of tinygrad's `PatternMatcher`: a rule is a pattern over the producers of a value
and a function building the replacement; `rewrite(graph, rules)` walks the graph once in
topological order and, whenever a node matches a rule, emits the replacement. Nodes emitted by
a replacement are themselves offered to the rules, and a node's inputs are final by the time
it is matched, so one sweep reaches the fixed point. The sweep builds its graph with the
interning `GraphBuilder` (ir/builder.py), so it is also the common subexpression elimination:
a node equal to an earlier one (after the rewrites of both) is dropped. Every pattern pass
(folding, simplification, numerics) is a rule table; the pipeline runs them all in one sweep.
Adding a rule is one table entry:

>>> from tracejit.ir.passes.rewrite import P, Rule
>>> X = P.var("x")
>>> Rule("neg-neg", P("neg", P("neg", X)), lambda b, m: m["x"])
Rule(neg-neg)

Patterns bind names: `P.var("x")` binds the matched `Value`; `P(op, ..., name="n")` binds the
matched `Node` (for its attrs). A name bound twice must bind the same object, so
`P("div", P("exp", X), P("reduce_sum", P("exp", X)))` needs both `exp`s to read one `x`.
Binary patterns over commutative primitives also try the swapped operand order.

The input graph is never mutated; nodes that do not change are shared with the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from tracejit.errors import InternalError, TracejitValueError
from tracejit.ir.builder import COMMUTATIVE, Emitter, GraphBuilder
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.passes.dce import remove_dead_nodes

ANY_OP = "*"
# Scanning a large const to see whether it is a splat costs time; bigger ones are not splats.
SPLAT_SCAN_LIMIT = 4096
# A replacement that keeps matching its own output would recurse forever: a rule-table bug.
MAX_REWRITE_DEPTH = 64


class P:
    """A pattern. `P(op, *src)` matches a node (op: a name, a tuple of names, or "*")."""

    __slots__ = ("name", "ops", "splat", "src", "where")

    def __init__(
        self,
        op: str | tuple[str, ...] | None = None,
        *src: P,
        name: str | None = None,
        where: Callable[[Any], bool] | None = None,
    ):
        self.ops = None if op is None else ((op,) if isinstance(op, str) else tuple(op))
        self.src = src
        self.name = name
        self.where = where
        self.splat: float | None = None

    @staticmethod
    def var(name: str | None = None, where: Callable[[Value], bool] | None = None) -> P:
        """Any value; binds it under `name`."""
        return P(None, name=name, where=where)

    @staticmethod
    def const(value: float) -> P:
        """A constant whose every element equals `value` (a scalar const, or a broadcast of
        one, as `tracejit.numpy` emits for Python scalars). `-0.0` matches `0`."""
        p = P(None)
        p.splat = value
        return p

    def __repr__(self) -> str:
        if self.splat is not None:
            return f"P.const({self.splat!r})"
        head = "var" if self.ops is None else "|".join(self.ops)
        inner = ", ".join(repr(s) for s in self.src)
        return f"P({head}{', ' + inner if inner else ''})"


class Rule:
    """`pattern -> fn(builder, bindings)`; `fn` returns the replacement Value or None."""

    __slots__ = ("fn", "name", "pattern")

    def __init__(self, name: str, pattern: P, fn: Callable[[Builder, dict], Value | None]):
        if pattern.ops is None:
            raise TracejitValueError(f"rule {name}: the root of a pattern must match a node")
        self.name = name
        self.pattern = pattern
        self.fn = fn

    def __repr__(self) -> str:
        return f"Rule({self.name})"


class Builder(GraphBuilder):
    """Builds the rewritten graph; rule functions emit replacement nodes through it.

    Rules are tried in table order (a `"*"` rule in its place among the others), the first
    that returns a value wins.
    """

    def __init__(self, rules: Iterable[Rule]):
        super().__init__()
        self.producer: dict[Value, Node] = {}
        self.fired: dict[str, int] = {}
        self._rules = list(rules)
        self._by_op: dict[str, list[Rule]] = {}
        self._splats: dict[Value, Any] = {}
        self._emitter = Emitter(self.graph, builder=self)  # source and phase: the node rewritten
        self._depth = 0

    @property
    def nodes(self) -> list[Node]:
        return self.graph.nodes

    def _rules_for(self, op: str) -> list[Rule]:
        found = self._by_op.get(op)
        if found is None:
            found = [r for r in self._rules if op in r.pattern.ops or ANY_OP in r.pattern.ops]
            self._by_op[op] = found
        return found

    # -- helpers for rule functions
    def emit(self, prim: str, *inputs: Value, **attrs) -> Value:
        """`prim(*inputs, **attrs)` (itself offered to the rules, merged with an equal
        earlier node); its result."""
        (out,) = self._emitter.bind_all(prim, *inputs, **attrs)
        return out

    def splat(self, value, like: Value) -> Value:
        """A constant with `like`'s shape and dtype: a 0-d const, broadcast if needed."""
        return self._emitter.full(value, like)

    def node_of(self, v: Value) -> Node | None:
        return self.producer.get(v)

    def splat_value(self, v: Value):
        """The Python scalar every element of `v` equals when `v` is constant, else None."""
        if v not in self._splats:
            self._splats[v] = self._find_splat(v)
        return self._splats[v]

    def _find_splat(self, v: Value):
        node = self.producer.get(v)
        while node is not None and node.prim.name in ("broadcast_in_dim", "reshape"):
            node = self.producer.get(node.inputs[0])
        if node is None or node.prim.name != "const":
            return None
        arr = node.attrs["value"].array
        if arr.size == 0 or arr.size > SPLAT_SCAN_LIMIT:
            return None
        first = arr.flat[0]
        return first.item() if bool(np.all(arr == first)) else None

    # -- the engine
    def settle(self, node: Node) -> list[Value]:
        """Apply the first matching rule to the just-appended `node`; its final outputs."""
        for v in node.outputs:
            self.producer[v] = node
        if len(node.outputs) != 1:
            return node.outputs
        for rule in self._rules_for(node.prim.name):
            bindings: dict = {}
            if not _match(rule.pattern, node.outputs[0], self, bindings):
                continue
            result = self._fire(rule, node, bindings)
            if result is not None:
                return [result]
        return node.outputs

    def _fire(self, rule: Rule, node: Node, bindings: dict) -> Value | None:
        e = self._emitter
        saved = (e.source, e.phase)
        e.source, e.phase = node.source, node.phase
        self._depth += 1
        if self._depth > MAX_REWRITE_DEPTH:
            raise InternalError(f"rewrite rule {rule.name} keeps matching its own output")
        try:
            result = rule.fn(self, bindings)
        finally:
            self._depth -= 1
            e.source, e.phase = saved
        if result is None:
            return None
        out = node.outputs[0]
        if result.shape != out.shape or result.dtype != out.dtype:
            raise InternalError(
                f"rewrite rule {rule.name} changed {out.type_str} into {result.type_str}"
            )
        self.fired[rule.name] = self.fired.get(rule.name, 0) + 1
        return result


def _match(p: P, v: Value, b: Builder, bindings: dict) -> bool:
    if p.splat is not None:
        s = b.splat_value(v)
        return s is not None and s == p.splat
    if p.ops is None:
        if p.where is not None and not p.where(v):
            return False
        return _bind(p.name, v, bindings)
    node = b.producer.get(v)
    if node is None or len(node.outputs) != 1:
        return False
    if ANY_OP not in p.ops and node.prim.name not in p.ops:
        return False
    if p.where is not None and not p.where(node):
        return False
    if p.src:
        if len(p.src) != len(node.inputs):
            return False
        orders = [node.inputs]
        if len(node.inputs) == 2 and node.prim.name in COMMUTATIVE:
            orders.append(node.inputs[::-1])
        for inputs in orders:
            trial = dict(bindings)
            if all(_match(s, x, b, trial) for s, x in zip(p.src, inputs)):
                bindings.clear()
                bindings.update(trial)
                break
        else:
            return False
    return _bind(p.name, node, bindings)


def _bind(name: str | None, obj, bindings: dict) -> bool:
    if name is None:
        return True
    if name in bindings:
        return bindings[name] is obj
    bindings[name] = obj
    return True


def rewrite(graph: Graph, rules: Iterable[Rule], stats: dict | None = None) -> Graph:
    """Apply `rules` to a fixed point, merging equal nodes; `graph` itself when nothing
    changed. The result has no dead nodes.

    `stats`, when given, receives how often each rule fired, and under `"cse"` how many
    nodes were merged into an equal one.
    """
    b = Builder(rules)
    env: dict[Value, Value] = {v: v for v in graph.inputs}
    for node in graph.nodes:
        inputs = [env[v] for v in node.inputs]
        if any(a is not x for a, x in zip(inputs, node.inputs)):
            node = Node(node.prim, inputs, node.attrs, node.outputs, node.source, node.phase)
        env.update(zip(node.outputs, b.add(node)))
    if stats is not None:
        for name, n in b.fired.items():
            stats[name] = stats.get(name, 0) + n
        if b.merged:
            stats["cse"] = stats.get("cse", 0) + b.merged
    if not b.fired and not b.merged:
        return graph
    out = Graph(list(graph.inputs), b.nodes, [env[v] for v in graph.outputs])
    return remove_dead_nodes(out)


def cse(graph: Graph, stats: dict | None = None) -> Graph:
    """The sweep with no rules: `graph` with each repeated computation done once (and no dead
    nodes), merged by the interning builder; `graph` itself if none repeats.

    >>> import numpy as np
    >>> from tracejit.ir.primitives import get
    >>> x, a, b = (Value((2,), np.float32) for _ in range(3))
    >>> sin = get("sin")
    >>> g = Graph([x], [Node(sin, [x], {}, [a]), Node(sin, [x], {}, [b])], [a, b])
    >>> [n.prim.name for n in cse(g).nodes]
    ['sin']
    """
    return rewrite(graph, (), stats)
