"""`custom_vjp_call`: a node whose gradient is given by the user, not derived.

The node holds a `CustomCall`: three closed graphs traced from the user's functions,

    primal(inputs)                 -> outputs
    fwd(inputs)                    -> outputs + residuals
    bwd(residuals + output cts)    -> one cotangent per input

It evaluates as `primal` (the reference interpreter runs it; `jit` inlines it before the
graph passes with `expand_custom_calls`, so no backend ever sees the node). Its VJP rule
inlines `fwd` and `bwd` into the joint graph, so the backward is the user's, and since `bwd`
is made of ordinary primitives, a second derivative differentiates it like any code.
`custom_jvp` produces the same node: its `bwd` is the transpose of the user's JVP.
"""

from __future__ import annotations

from collections.abc import Callable

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES, Emitter
from tracejit.ir.graph import Graph, Node, Value, inline_graph
from tracejit.ir.interpret import evaluate
from tracejit.ir.primitives import OPAQUE, register


class CustomCall:
    """The graphs of one custom-derivative function at one signature (hashed by identity).

    `fwd` and `bwd` are traced on first use (`rules()` returns both): the user's forward
    usually calls the function itself, which records this same call without needing them.
    """

    def __init__(self, name: str, primal: Graph, rules: Callable[[], tuple[Graph, Graph]]):
        self.name = name
        self.primal = primal
        self._rules: Callable[[], tuple[Graph, Graph]] | None = rules
        self._graphs: tuple[Graph, Graph] | None = None

    def _derivative_graphs(self) -> tuple[Graph, Graph]:
        if self._graphs is None:
            rules = self._rules
            if rules is None:
                raise UnsupportedError(f"{self.name}: its fwd/bwd need their own derivative")
            self._rules = None  # re-entry while tracing them would recurse forever
            try:
                self._graphs = rules()
            finally:
                self._rules = rules if self._graphs is None else None
        return self._graphs

    @property
    def fwd(self) -> Graph:
        return self._derivative_graphs()[0]

    @property
    def bwd(self) -> Graph:
        return self._derivative_graphs()[1]

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _rule(avals, call: CustomCall):
    return [(v.shape, v.dtype, v.weak) for v in call.primal.outputs]


def _impl(*args, call: CustomCall):
    return tuple(evaluate(call.primal, args))


custom_vjp_call_p = register("custom_vjp_call", OPAQUE, _rule, _impl, multiple_results=True)


def _vjp_rule(e: Emitter, cts, *inputs, out, call: CustomCall):
    nodes = e.graph.nodes
    residuals = inline_graph(nodes, call.fwd, inputs, "forward")[len(out) :]
    seeds = [c if c is not None else e.full(0.0, o) for c, o in zip(cts, out)]
    in_cts = inline_graph(nodes, call.bwd, residuals + seeds, "backward")
    return [ct if dtypes.is_inexact(x.dtype) else None for ct, x in zip(in_cts, inputs)]


VJP_RULES.register(custom_vjp_call_p)(_vjp_rule)


def expand_custom_calls(graph: Graph) -> Graph:
    """`graph` with every custom call replaced by its primal graph (nested ones too)."""
    if not any(n.prim is custom_vjp_call_p for n in graph.nodes):
        return graph
    nodes: list[Node] = []
    rename: dict[Value, Value] = {}
    for node in graph.nodes:
        ins = [rename.get(v, v) for v in node.inputs]
        if node.prim is custom_vjp_call_p:
            primal = expand_custom_calls(node.attrs["call"].primal)
            outs = inline_graph(nodes, primal, ins)
            rename.update(zip(node.outputs, outs))
        else:
            nodes.append(Node(node.prim, ins, node.attrs, node.outputs, node.source, node.phase))
    return Graph(list(graph.inputs), nodes, [rename.get(v, v) for v in graph.outputs])


__all__ = ["CustomCall", "custom_vjp_call_p", "expand_custom_calls", "inline_graph"]
