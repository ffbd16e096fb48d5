"""JVP rules of the control-flow primitives (ir/control.py) for forward mode (ir/forward.py).

Each differentiates its bodies with `jvp_graph` and runs primal and tangent together, as
JAX does: a `while_loop` (or `scan`) whose carry is extended by the tangents of the float
carries (and whose loop invariants are extended by the tangents of the invariants that have
one), and a `cond` whose branches return their outputs' tangents too. The predicate of a
`while_loop` reads only the primal carry, so the trip count is the primal's.
"""

from __future__ import annotations

from tracejit.ir import control, dtypes  # noqa: F401  (control registers the primitives)
from tracejit.ir.autodiff import float_indices, scattered
from tracejit.ir.builder import Emitter
from tracejit.ir.forward import defjvp, emit_forward, jvp_graph, tangent_or_zero
from tracejit.ir.graph import Graph, Node, Value, fresh
from tracejit.ir.regions import Region


def _with_tangent(tins: list, values: list[Value], start: int, count: int) -> list[int]:
    """Indices i < count whose operand start + i is a float with a (nonzero) tangent."""
    return [
        i
        for i in range(count)
        if tins[start + i] is not None and dtypes.is_inexact(values[start + i].dtype)
    ]


@defjvp("while_loop")
def _while_jvp(e: Emitter, node: Node, ins: list[Value], tins: list) -> tuple:
    cond, body, n_cc = node.attrs["cond"], node.attrs["body"], node.attrs["n_cond_consts"]
    g = body.graph
    n_carry = len(g.outputs)
    n_bc = len(g.inputs) - n_carry
    dc = _with_tangent(tins, ins, n_cc, n_bc)  # body invariants with a tangent
    fc = float_indices(g.inputs[n_bc:])  # every float carry carries a tangent
    jg = jvp_graph(g, dc + [n_bc + j for j in fc])
    k, J = len(g.inputs), jg.inputs
    new_body = Graph(J[:n_bc] + J[k : k + len(dc)] + J[n_bc:k] + J[k + len(dc) :], jg.nodes, [])
    new_body.outputs = list(jg.outputs)  # carry, then the float carries' tangents
    c = cond.graph
    new_cond = Graph(list(c.inputs) + fresh(J[k + len(dc) :]), list(c.nodes), list(c.outputs))
    init = ins[n_cc + n_bc :]
    operands = ins[: n_cc + n_bc] + [tins[n_cc + i] for i in dc] + init
    operands += [tangent_or_zero(e, tins[n_cc + n_bc + j], init[j]) for j in fc]
    attrs = {"cond": Region(new_cond), "body": Region(new_body), "n_cond_consts": n_cc}
    outs = emit_forward(e, node.prim, *operands, **attrs)
    return outs[:n_carry], scattered(n_carry, (fc, outs[n_carry:]))


@defjvp("scan")
def _scan_jvp(e: Emitter, node: Node, ins: list[Value], tins: list) -> tuple:
    attrs = node.attrs
    g = attrs["body"].graph
    nc, ncar = attrs["n_consts"], attrs["n_carry"]
    nfix, n_out = nc + ncar, len(g.outputs)
    dc = _with_tangent(tins, ins, 0, nc)
    fc = float_indices(g.inputs[nc:nfix])
    dx = _with_tangent(tins, ins, nfix, len(ins) - nfix)
    jg = jvp_graph(g, dc + [nc + j for j in fc] + [nfix + i for i in dx])
    k, J = len(g.inputs), jg.inputs
    tc, tcar, tx = (
        J[k : k + len(dc)],
        J[k + len(dc) : k + len(dc) + len(fc)],
        J[k + len(dc) + len(fc) :],
    )
    body_in = J[:nc] + tc + J[nc:nfix] + tcar + J[nfix:k] + tx
    prim, tans = jg.outputs[:n_out], jg.outputs[n_out:]  # tangents: float carries, float ys
    body_out = prim[:ncar] + tans[: len(fc)] + prim[ncar:] + tans[len(fc) :]
    new_attrs = dict(attrs, body=Region(Graph(body_in, jg.nodes, body_out)))
    new_attrs.update(n_consts=nc + len(dc), n_carry=ncar + len(fc))
    operands = ins[:nc] + [tins[i] for i in dc] + ins[nc:nfix]
    operands += [tangent_or_zero(e, tins[nc + j], ins[nc + j]) for j in fc]
    operands += ins[nfix:] + [tins[nfix + i] for i in dx]
    outs = emit_forward(e, node.prim, *operands, **new_attrs)
    n_ys = n_out - ncar
    ys = outs[ncar + len(fc) : ncar + len(fc) + n_ys]
    float_ys = [ncar + j for j in float_indices(g.outputs[ncar:])]
    tys = outs[ncar + len(fc) + n_ys :]
    return outs[:ncar] + ys, scattered(n_out, (fc, outs[ncar : ncar + len(fc)]), (float_ys, tys))


@defjvp("cond")
def _cond_jvp(e: Emitter, node: Node, ins: list[Value], tins: list) -> tuple:
    branches = node.attrs["branches"]
    first = branches[0].graph
    d = _with_tangent(tins, ins, 1, len(ins) - 1)
    new = tuple(Region(jvp_graph(b.graph, d)) for b in branches)
    outs = emit_forward(e, node.prim, *ins, *[tins[1 + i] for i in d], branches=new)
    n_out = len(first.outputs)
    return outs[:n_out], scattered(n_out, (float_indices(first.outputs), outs[n_out:]))


__all__: list[str] = []
