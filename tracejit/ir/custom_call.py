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

Forward mode transposes the VJP, so through this node it transposes `bwd`: the JVP only when
`bwd` is linear in its cotangent. A `custom_vjp` call records why it is not (its `bwd` read
by ir/linearity.py), and forward mode refuses such a call (`check_forward_mode`, and this
node's JVP rule) with `CustomVJPForwardModeError`, as JAX refuses every `custom_vjp`.
"""

from __future__ import annotations

from collections.abc import Callable

from tracejit.errors import CustomVJPForwardModeError, UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import VJP_RULES, Emitter
from tracejit.ir.forward import JVP_RULES, jvp_by_transpose
from tracejit.ir.graph import Graph, Node, Value, inline_graph
from tracejit.ir.interpret import evaluate
from tracejit.ir.linearity import LINEAR_RULES, NotLinear, State, states_of
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import OPAQUE, register
from tracejit.ir.regions import regions_of

# fwd, bwd, and a function giving why bwd is not linear in its cotangent (None when it is)
Rules = tuple[Graph, Graph, Callable[[], "str | None"]]
_UNKNOWN = object()


class CustomCall:
    """The graphs of one custom-derivative function at one signature (hashed by identity).

    `fwd` and `bwd` are traced when a transformation first needs them (`rules()` returns
    both, and a function telling why `bwd` is not linear in its cotangent, asked only by
    forward mode): evaluating, compiling and batching a call need the primal only, and the
    user's forward usually calls the function itself, recording this same call.
    """

    def __init__(self, name: str, primal: Graph, rules: Callable[[], Rules]):
        self.name = name
        self.primal = primal
        self._rules: Callable[[], Rules] | None = rules
        self._graphs: Rules | None = None
        self._nonlinear = _UNKNOWN

    def _derivative_graphs(self) -> Rules:
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

    @property
    def traced(self) -> bool:
        """Whether `fwd` and `bwd` have been traced."""
        return self._graphs is not None

    @property
    def tracing(self) -> bool:
        """Whether `fwd` and `bwd` are being traced now (a call made by its own rules)."""
        return self._graphs is None and self._rules is None

    @property
    def nonlinear(self) -> str | None:
        """Why `bwd` is not linear in its cotangent (None when it is)."""
        if self._nonlinear is _UNKNOWN:
            self._nonlinear = self._derivative_graphs()[2]()
        return self._nonlinear

    def check_forward_mode(self) -> None:
        """Raise `CustomVJPForwardModeError` unless forward mode may transpose `bwd`."""
        why = self.nonlinear
        if why is not None:
            raise CustomVJPForwardModeError(
                f"forward-mode autodiff (jvp, jacfwd, linearize, hessian) cannot go through "
                f"{why}. Forward mode transposes a custom_vjp's bwd, which is "
                "its derivative only when bwd is linear in the cotangent (JAX refuses forward "
                "mode through every custom_vjp). Define the function with tj.custom_jvp "
                "(reverse mode transposes its jvp), or use reverse mode (grad, vjp, jacrev)."
            )

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


@JVP_RULES.register(custom_vjp_call_p)
def _jvp_rule(e: Emitter, node: Node, ins: list[Value], tins: list) -> tuple:
    node.attrs["call"].check_forward_mode()
    return jvp_by_transpose(e, node, ins, tins)


@LINEAR_RULES.register(custom_vjp_call_p)
def _linear_rule(node: Node, states: list[State]) -> list[State]:
    """As its primal, when forward mode may transpose its own `bwd` (if it reads the inputs)."""
    call = node.attrs["call"]
    if any(s.linear for s in states) and (call.tracing or call.nonlinear is not None):
        raise NotLinear(node)  # tracing: it is called in its own bwd
    return states_of(call.primal, states)


def check_forward_mode(graph: Graph, wrt) -> None:
    """Raise `CustomVJPForwardModeError` if forward mode through `graph` w.r.t. its inputs
    `wrt` (by transposing its VJP) would transpose a `bwd` that is not linear in its
    cotangent: a live custom call reached from them, directly or in a region (any region of
    a node reached from them, conservatively)."""
    graph = remove_dead_nodes(graph)
    reached = {graph.inputs[i] for i in wrt}
    for node in graph.nodes:
        if not any(v in reached for v in node.inputs):
            continue
        reached.update(node.outputs)
        if node.prim is custom_vjp_call_p:
            node.attrs["call"].check_forward_mode()
        for _, _, region in regions_of(node):
            check_forward_mode(region.graph, range(len(region.graph.inputs)))


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


__all__ = [
    "CustomCall",
    "check_forward_mode",
    "custom_vjp_call_p",
    "expand_custom_calls",
    "inline_graph",
]
