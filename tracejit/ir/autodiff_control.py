"""VJP rules of the control-flow primitives (ir/control.py): `scan`, `cond`, `while_loop`.

scan: the body's joint graph is split by the same min-cut partition as straight-line code
(ir/partition.py, under `tj.config.memory_budget`), giving a forward body that also returns the *residuals* and a backward
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
which transposes the pullback) differentiates the emitted loops again. `while_loop` has no
VJP; forward mode through it is ir/forward.py's.
"""

from __future__ import annotations

from tracejit.errors import UnsupportedError
from tracejit.ir import control  # noqa: F401  (registers scan, cond, while_loop)
from tracejit.ir.autodiff import defvjp, float_indices, joint_graph, scattered
from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Graph, Node, Value, dependents, inline_graph
from tracejit.ir.partition import needed_nodes, partition
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import get
from tracejit.ir.regions import Region


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
    return e.bind_all(prim, *inputs, **attrs)[len(out) :]


def _memory_budget() -> float:
    """The user's memory budget (tj.config.memory_budget) for what a loop body saves."""
    from tracejit.config import config  # a leaf module; imported late, ir stays importable alone

    return float(config.memory_budget)


def _hoist(e: Emitter, forward: Graph, values: list[Value], consts: list[Value], n: int):
    """Compute the loop-invariant `values` of `forward` once, outside the loop: copies of
    the nodes they need, reading the scan's outer consts; their outer values."""
    hoisted = Graph(list(forward.inputs[:n]), needed_nodes(forward.nodes, values), list(values))
    return inline_graph(e.graph.nodes, hoisted, consts, "forward")


class _Residuals:
    """Where each residual of the partitioned body comes from in the backward loop."""

    def __init__(self, part, g: Graph, n_consts: int, n_carry: int):
        n_fixed = n_consts + n_carry
        position = {v: i for i, v in enumerate(g.inputs)}
        varying = dependents(part.forward.nodes, part.forward.inputs[n_consts:])  # not invariant
        self.position = position
        self.consts = [r for r in part.residuals if position.get(r, n_fixed) < n_consts]
        self.xs = [r for r in part.residuals if position.get(r, -1) >= n_fixed]
        rest = [r for r in part.residuals if r not in position]
        self.invariant = [r for r in rest if r not in varying]  # computed once, outside
        carried = [r for r in part.residuals if n_consts <= position.get(r, -1) < n_fixed]
        self.stacked = carried + [r for r in rest if r in varying]  # one per iteration


@defvjp("scan")
def _scan_vjp(e, cts, *inputs, out, body, length, reverse, n_consts, n_carry):
    g = body.graph
    n_fixed = n_consts + n_carry
    consts, xs = list(inputs[:n_consts]), list(inputs[n_fixed:])
    wrt = float_indices(g.inputs)
    seeded = float_indices(g.outputs[:n_carry])
    seeded += [n_carry + j for j, c in enumerate(cts[n_carry:]) if c is not None]
    joint = joint_graph(g, wrt, seeded)
    part = partition(joint, len(g.inputs), len(g.outputs), _memory_budget())
    res = _Residuals(part, g, n_consts, n_carry)

    forward = Graph(list(g.inputs), list(part.forward.nodes), list(g.outputs) + res.stacked)
    fwd_attrs = {"body": Region(forward), "length": length, "reverse": reverse}
    fwd_attrs.update(n_consts=n_consts, n_carry=n_carry)
    stacked_outer = _replace_forward(e, out, inputs, fwd_attrs, res.stacked)
    hoisted = _hoist(e, part.forward, res.invariant, consts, n_consts)

    bwd, float_consts, float_carry, float_xs = _backward_body(part, g, res, wrt, n_consts, n_carry)
    init = [cts[j] if cts[j] is not None else e.full(0.0, out[j]) for j in float_carry]
    init += [e.full(0.0, consts[i]) for i in float_consts]
    b_consts = [consts[res.position[r]] for r in res.consts] + hoisted
    b_xs = stacked_outer + [xs[res.position[r] - n_fixed] for r in res.xs]
    b_xs += [cts[j] for j in seeded if j >= n_carry]
    n_b_carry = len(init)
    attrs = {"body": Region(bwd), "length": length, "reverse": not reverse}
    attrs.update(n_consts=len(b_consts), n_carry=n_b_carry)
    results = e.bind_all("scan", *b_consts, *init, *b_xs, **attrs)
    return scattered(
        len(inputs),
        ([n_consts + j for j in float_carry], results),
        (float_consts, results[len(float_carry) : n_b_carry]),
        ([n_fixed + j for j in float_xs], results[n_b_carry:]),
    )


def _backward_body(part, g: Graph, res: _Residuals, wrt, n_consts: int, n_carry: int):
    """The backward loop body: (invariants, carry cts, const-ct sums, stacked residuals,
    xs residuals, y cts) -> (carry cts, const-ct sums, xs cts)."""
    n_fixed = n_consts + n_carry
    seeds = part.backward.inputs[len(part.residuals) :]  # one per seeded output, in order
    carry_seeds = seeds[: len(float_indices(g.outputs[:n_carry]))]
    y_seeds = seeds[len(carry_seeds) :]
    ct_of = dict(zip(wrt, part.backward.outputs))
    float_consts = [i for i in wrt if i < n_consts]
    float_carry = [i - n_consts for i in wrt if n_consts <= i < n_fixed]
    float_xs = [i - n_fixed for i in wrt if i >= n_fixed]
    bwd = Graph([], list(part.backward.nodes), [])
    accs = [Value(g.inputs[i].shape, g.inputs[i].dtype) for i in float_consts]
    be = Emitter(bwd, "backward")
    sums = [be.add(acc, ct_of[i]) for acc, i in zip(accs, float_consts)]
    bwd.inputs = res.consts + res.invariant + carry_seeds + accs + res.stacked + res.xs + y_seeds
    bwd.outputs = [ct_of[n_consts + j] for j in float_carry] + sums
    bwd.outputs += [ct_of[n_fixed + j] for j in float_xs]
    return bwd, float_consts, float_carry, float_xs


@defvjp("cond")
def _cond_vjp(e, cts, index, *operands, out, branches):
    first = branches[0].graph
    wrt = float_indices(first.inputs)
    seeded = [j for j, c in enumerate(cts) if c is not None]
    backward = []
    for br in branches:
        joint = joint_graph(br.graph, wrt, seeded)
        n_out = len(br.graph.outputs)
        backward.append(
            Region(remove_dead_nodes(Graph(joint.inputs, joint.nodes, joint.outputs[n_out:])))
        )
    seeds = [cts[j] for j in seeded]
    results = e.bind_all("cond", index, *operands, *seeds, branches=tuple(backward))
    return scattered(1 + len(operands), ([1 + i for i in wrt], results))


class WhileLoopNotReversible(UnsupportedError):
    """Reverse mode met a `while_loop` (forward mode, `tj.jvp`, then takes ir/forward.py)."""


@defvjp("while_loop")
def _while_vjp(e, cts, *inputs, out, cond, body, n_cond_consts):
    where = f"\n  at {e.source}" if e.source else ""
    raise WhileLoopNotReversible(
        "Reverse-mode differentiation (grad, vjp, jacrev) does not work for lax.while_loop: "
        "its trip count is only known at run time, so the iterations to save cannot be "
        "planned. Use lax.scan, or lax.fori_loop with concrete (Python int) bounds, which "
        f"runs as a scan; forward mode (tj.jvp, tj.jacfwd) works through while_loop.{where}"
    )


__all__: list[str] = []
