"""VJP rules of the control-flow primitives (ir/control.py): `scan`, `cond`, `while_loop`.

scan: the body's joint graph is split by the same min-cut partition as straight-line code
(ir/partition.py), giving a forward body that also returns the *residuals* and a backward
body that consumes them. The forward `scan` node is replaced, in place, by one running the
forward body: it defines the same outputs plus one stacked array per residual computed in the
body. Residuals that are body inputs are not stacked: a loop-invariant one is read directly
by the backward loop, an `xs` slice is re-sliced from `xs`. The backward is a `scan` in the
opposite direction whose carry holds the carry cotangents and the accumulated cotangents of
the loop invariants, and whose `ys` are the cotangents of `xs`.

cond: the backward is a `cond` on the same index whose branch k is branch k's joint graph
(it recomputes branch k's forward from the operands): only the chosen branch runs, and
nothing is saved for it.

Both rules emit only primitives with VJP rules, so higher order (grad of grad, and `jvp`,
which transposes the pullback) differentiates the emitted loops again.
"""

from __future__ import annotations

from tracejit.errors import UnsupportedError
from tracejit.ir import dtypes
from tracejit.ir.autodiff import Emitter, defvjp, eliminate_dead_code, joint_graph
from tracejit.ir.graph import Graph, Node, Value
from tracejit.ir.partition import partition
from tracejit.ir.primitives import get
from tracejit.ir.regions import Region


def _emit(e: Emitter, name: str, inputs: list[Value], attrs: dict) -> list[Value]:
    """Append a multi-result node (Emitter.bind returns only the first result)."""
    prim = get(name)
    avals = prim.abstract_eval([(v.shape, v.dtype, v.weak) for v in inputs], attrs)
    outs = [Value(*a) for a in avals]
    e.graph.nodes.append(Node(prim, list(inputs), attrs, outs, e.source, "backward"))
    return outs


def _replace_forward(e: Emitter, out: list[Value], inputs, attrs: dict, extra: list) -> list:
    """Swap the forward node defining `out` for one with `attrs` and `extra` more outputs;
    the new outputs. The node keeps its place, so its users stay after it; if it is not in
    the graph being built (a caller outside `joint_graph`), a fresh node is appended."""
    prim = get("scan")
    new_outs = [Value((attrs["length"],) + v.shape, v.dtype) for v in extra]
    for i, node in enumerate(e.graph.nodes):
        if node.outputs is out:
            outs = list(out) + new_outs
            e.graph.nodes[i] = Node(prim, list(inputs), attrs, outs, node.source, node.phase)
            return new_outs
    return _emit(e, "scan", list(inputs), attrs)[len(out) :]


def _float_indices(values: list[Value]) -> list[int]:
    return [i for i, v in enumerate(values) if dtypes.is_float(v.dtype)]


@defvjp("scan")
def _scan_vjp(e, cts, *inputs, out, body, length, reverse, n_consts, n_carry):
    g = body.graph
    n_fixed = n_consts + n_carry
    consts, xs = list(inputs[:n_consts]), list(inputs[n_fixed:])
    wrt = _float_indices(g.inputs)
    seeded = _float_indices(g.outputs[:n_carry])
    seeded += [n_carry + j for j, c in enumerate(cts[n_carry:]) if c is not None]
    joint = joint_graph(g, wrt, seeded)
    part = partition(joint, len(g.inputs), len(g.outputs))
    position = {v: i for i, v in enumerate(g.inputs)}
    res_consts = [r for r in part.residuals if position.get(r, n_fixed) < n_consts]
    res_xs = [r for r in part.residuals if position.get(r, -1) >= n_fixed]
    stacked = [r for r in part.residuals if r not in res_consts and r not in res_xs]

    forward = Graph(list(g.inputs), list(part.forward.nodes), list(g.outputs) + stacked)
    fwd_attrs = {"body": Region(forward), "length": length, "reverse": reverse}
    fwd_attrs.update(n_consts=n_consts, n_carry=n_carry)
    stacked_outer = _replace_forward(e, out, inputs, fwd_attrs, stacked)

    seeds = part.backward.inputs[len(part.residuals) :]  # one per seeded output, in order
    carry_seeds = seeds[: len(_float_indices(g.outputs[:n_carry]))]
    y_seeds = seeds[len(carry_seeds) :]
    ct_of = dict(zip(wrt, part.backward.outputs))
    float_consts = [i for i in wrt if i < n_consts]
    float_carry = [i - n_consts for i in wrt if n_consts <= i < n_fixed]
    float_xs = [i - n_fixed for i in wrt if i >= n_fixed]

    bwd = Graph(list(part.backward.inputs), list(part.backward.nodes), [])
    accs = [Value(g.inputs[i].shape, g.inputs[i].dtype) for i in float_consts]
    be = Emitter(bwd)
    sums = [be.add(acc, ct_of[i]) for acc, i in zip(accs, float_consts)]
    bwd.inputs = res_consts + carry_seeds + accs + stacked + res_xs + y_seeds
    bwd.outputs = [ct_of[n_consts + j] for j in float_carry] + sums
    bwd.outputs += [ct_of[n_fixed + j] for j in float_xs]

    init = [cts[j] if cts[j] is not None else e.full(0.0, out[j]) for j in float_carry]
    init += [e.full(0.0, consts[i]) for i in float_consts]
    b_xs = stacked_outer + [xs[position[r] - n_fixed] for r in res_xs]
    b_xs += [cts[j] for j in seeded if j >= n_carry]
    b_consts = [consts[position[r]] for r in res_consts]
    n_b_carry = len(float_carry) + len(float_consts)
    results = _emit(
        e,
        "scan",
        b_consts + init + b_xs,
        {
            "body": Region(bwd),
            "length": length,
            "reverse": not reverse,
            "n_consts": len(b_consts),
            "n_carry": n_b_carry,
        },
    )
    in_cts: list = [None] * len(inputs)
    for j, v in zip(float_carry, results):
        in_cts[n_consts + j] = v
    for i, v in zip(float_consts, results[len(float_carry) : n_b_carry]):
        in_cts[i] = v
    for j, v in zip(float_xs, results[n_b_carry:]):
        in_cts[n_fixed + j] = v
    return in_cts


@defvjp("cond")
def _cond_vjp(e, cts, index, *operands, out, branches):
    first = branches[0].graph
    wrt = _float_indices(first.inputs)
    seeded = [j for j, c in enumerate(cts) if c is not None]
    backward = []
    for br in branches:
        joint = joint_graph(br.graph, wrt, seeded)
        n_out = len(br.graph.outputs)
        backward.append(
            Region(eliminate_dead_code(Graph(joint.inputs, joint.nodes, joint.outputs[n_out:])))
        )
    seeds = [cts[j] for j in seeded]
    results = _emit(e, "cond", [index, *operands, *seeds], {"branches": tuple(backward)})
    in_cts: list = [None] * (1 + len(operands))
    for i, v in zip(wrt, results):
        in_cts[1 + i] = v
    return in_cts


@defvjp("while_loop")
def _while_vjp(e, cts, *inputs, out, cond, body, n_cond_consts):
    where = f"\n  at {e.source}" if e.source else ""
    raise UnsupportedError(
        "Reverse-mode differentiation does not work for lax.while_loop: its trip count is "
        "only known at run time, so the iterations to save cannot be planned. Use lax.scan, "
        f"or lax.fori_loop with concrete (Python int) bounds, which runs as a scan.{where}"
    )


__all__: list[str] = []
