"""Forward-mode autodiff as a graph-to-graph transformation, for what reverse mode cannot do.

`jvp_graph(graph, wrt)` returns one graph that computes the outputs and their tangents:

    jvp(inputs..., tangents of inputs[wrt]...) -> (outputs..., tangents of float outputs...)

`tj.jvp` and `tj.linearize` normally transpose reverse mode (ir/autodiff.py), which needs
every primitive's VJP only. A `while_loop` has no VJP (its trip count is unknown, so nothing
can be saved per iteration), but forward mode needs no saving: its tangent is carried along
with the primal through the loop (JAX's rule). So graphs that hold a `while_loop` are
differentiated here, node by node:

- control flow (`while_loop`, `scan`, `cond`) by the rules in `JVP_RULES`, which differentiate
  their bodies with `jvp_graph` and run primal and tangent in one loop (or branch);
- every other node by the double-VJP trick on that node alone: its pullback is linear in
  the cotangent, and the transpose of that linear map (its VJP) is the JVP.

Tangents are symbolic zeros (absent) until some input with a tangent reaches them; a float
output with no tangent gets a zero array, so callers always see one tangent per float output.
"Float" here means inexact: complex values carry complex tangents, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracejit.ir import dtypes
from tracejit.ir.autodiff import float_indices, joint_graph, scattered
from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Graph, Node, Value, fresh, inline_graph
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import RuleTable
from tracejit.ir.regions import nested_graphs

JVP_RULES = RuleTable("JVP")  # keyed by Primitive; the rest go through their VJP
defjvp = JVP_RULES.register


def has_while(graph: Graph) -> bool:
    """Whether `graph` or any region nested in it runs a `while_loop`."""
    graphs = [graph, *nested_graphs(graph)]
    return any(node.prim.name == "while_loop" for g in graphs for node in g.nodes)


def jvp_graph(graph: Graph, wrt: Sequence[int]) -> Graph:
    """The forward-mode graph of `graph` w.r.t. its float inputs `wrt` (see the module doc)."""
    inputs = fresh(graph.inputs)
    tangents = [Value(graph.inputs[i].shape, graph.inputs[i].dtype) for i in wrt]
    out = Graph(inputs + tangents, [], [])
    e = Emitter(out, "backward")
    env: dict[Value, Value] = dict(zip(graph.inputs, inputs))
    tan: dict[Value, Value] = {graph.inputs[i]: t for i, t in zip(wrt, tangents)}
    for node in graph.nodes:
        ins = [env[v] for v in node.inputs]
        tins = [tan.get(v) for v in node.inputs]
        if all(t is None for t in tins) or not float_indices(node.outputs):
            outs = fresh(node.outputs)
            out.nodes.append(Node(node.prim, ins, node.attrs, outs, node.source, "forward"))
            env.update(zip(node.outputs, outs))
            continue
        e.source = node.source
        rule = JVP_RULES.get(node.prim, jvp_by_transpose)
        outs, touts = rule(e, node, ins, tins)
        env.update(zip(node.outputs, outs))
        tan.update((v, t) for v, t in zip(node.outputs, touts) if t is not None)
    out.outputs = [env[v] for v in graph.outputs]
    floats = [graph.outputs[i] for i in float_indices(graph.outputs)]
    out.outputs += [tangent_or_zero(e, tan.get(v), env[v]) for v in floats]
    return remove_dead_nodes(out)


def tangent_or_zero(e: Emitter, t: Value | None, like: Value) -> Value:
    return t if t is not None else e.full(0.0, like)


def jvp_by_transpose(e: Emitter, node: Node, ins: list[Value], tins: list) -> tuple:
    """One node's JVP: the VJP (w.r.t. the cotangent) of the node's own VJP."""
    single = Graph(fresh(node.inputs), [], [])
    outs = fresh(node.outputs)
    single.nodes.append(Node(node.prim, list(single.inputs), node.attrs, outs, node.source))
    single.outputs = outs
    wrt = [i for i, t in enumerate(tins) if t is not None and dtypes.is_inexact(ins[i].dtype)]
    seeded = float_indices(outs)
    joint = joint_graph(single, wrt, seeded)  # (x, ct) -> (y, x_ct)
    n_in, n_out = len(ins), len(outs)
    ct_inputs = list(range(n_in, n_in + len(seeded)))
    x_cts = list(range(n_out, n_out + len(wrt)))
    twice = joint_graph(joint, ct_inputs, x_cts)  # (x, ct, t) -> (y, x_ct, J t)
    zeros = [e.full(0.0, outs[j]) for j in seeded]
    results = inline_graph(e.graph.nodes, twice, ins + zeros + [tins[i] for i in wrt], "forward")
    return results[:n_out], scattered(n_out, (seeded, results[n_out + len(wrt) :]))


def emit_forward(e: Emitter, prim, *inputs: Value, **attrs) -> list[Value]:
    """Every output of a node of the forward phase (a loop or branch running primal and
    tangent together), at the line of the node being differentiated."""
    e.phase = "forward"
    try:
        return e.bind_all(prim, *inputs, **attrs)
    finally:
        e.phase = "backward"


__all__ = ["JVP_RULES", "defjvp", "has_while", "jvp_by_transpose", "jvp_graph"]
