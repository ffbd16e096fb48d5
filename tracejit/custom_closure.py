"""Closure conversion for `tj.custom_vjp`: a custom function whose primal, `fwd` or `bwd`
closes over traced values (defined inside `jit`, or over a value being differentiated).

The closed-over tracers become extra operands of the `custom_vjp_call` node (after the
explicit ones), and each graph of the call takes them as extra inputs, so the call is closed
as every region is. The user's `bwd` gives the cotangents of the explicit arguments; it says
nothing about the closed-over values, so their cotangents are the primal's own derivative
(reverse mode through the primal graph): a gradient that flows into a closed-over value is
the true one, never silently zero. (JAX raises in that case and asks for `closure_convert`.)

`fwd` passes the explicit and closed-over inputs on as extra residuals, so `bwd` (which
reads them) and the primal's derivative run in the backward pass without a recomputation
of anything but the primal's own backward.

The rules are traced lazily (when a transformation first needs them), which works only for
rules that read no tracer: a trace they close over has usually ended by then.
`closes_over_tracers` tells, without tracing, when they may read one (a live tracer
reachable from their closure cells, defaults, partial arguments or bound object), and the
caller then traces them at once, while those traces are live.
"""

from __future__ import annotations

import functools
import types

from tracejit.ir import dtypes
from tracejit.ir.autodiff import joint_graph
from tracejit.ir.custom_call import inline_graph
from tracejit.ir.graph import Graph, Value
from tracejit.tracer.core import Tracer
from tracejit.tracer.jit import Traced

_WALK_LIMIT = 4096  # objects looked at before assuming the rules may read a tracer
_OPAQUE = (type, types.ModuleType, str, bytes, int, float, complex, bool, type(None), Graph)


def _referents(obj) -> list:
    """The objects a rule may read through `obj` (not its module's globals)."""
    if isinstance(obj, types.FunctionType):
        cells = []
        for cell in obj.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:  # a cell not yet bound
                pass
        return cells + list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
    if isinstance(obj, types.MethodType):
        return [obj.__func__, obj.__self__]
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()]
    if hasattr(type(obj), "rule_functions"):  # a custom function: its own and its rules
        return obj.rule_functions()
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, _OPAQUE):
        return []
    try:
        return list(vars(obj).values())
    except Exception:  # noqa: BLE001 (no __dict__, or an attribute hook that fails: opaque)
        return []


def closes_over_tracers(*funs) -> bool:
    """Whether the functions may read a tracer of a live trace through what they close over
    (True also when there is too much to look through)."""
    seen: set[int] = set()
    stack = list(funs)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        if len(seen) >= _WALK_LIMIT:
            return True
        seen.add(id(obj))
        if isinstance(obj, Tracer):
            if obj._trace.active:
                return True
            continue
        stack.extend(_referents(obj))
    return False


def union(*traced: Traced) -> list[Tracer]:
    """The tracers the traced functions close over, each once, in first-seen order."""
    seen: dict[int, Tracer] = {}
    for t in traced:
        for x in t.captured:
            seen.setdefault(id(x), x)
    return list(seen.values())


def with_inputs(traced: Traced, n_explicit: int, closed: list[Tracer]) -> Graph:
    """`traced.graph` taking its explicit inputs, then one input per `closed` tracer (an
    unused one where it does not read that tracer)."""
    g = traced.graph
    own = {id(x): v for x, v in zip(traced.captured, g.inputs[n_explicit:])}
    extra = [own.get(id(x)) for x in closed]
    extra = [v if v is not None else Value(x.shape, x.dtype, x.weak) for v, x in zip(extra, closed)]
    return Graph(list(g.inputs[:n_explicit]) + extra, list(g.nodes), list(g.outputs))


def closed_call_graphs(primal: Graph, fwd: Graph, bwd: Graph, n_explicit: int, n_out: int):
    """(fwd', bwd') of a call with closed-over inputs (see the module doc).

    primal: (explicit, closed) -> outs;  fwd: (explicit, closed) -> outs + residuals;
    bwd: (residuals, output cts, closed) -> explicit cts.
    fwd': (explicit, closed) -> outs + residuals + explicit + closed;
    bwd': (residuals, explicit, closed, output cts) -> explicit cts + closed cts.
    """
    ins = list(fwd.inputs)
    fwd2 = Graph(ins, list(fwd.nodes), list(fwd.outputs) + ins)
    n_closed = len(primal.inputs) - n_explicit
    res = [Value(v.shape, v.dtype, v.weak) for v in fwd.outputs[n_out:]]
    xs = [Value(v.shape, v.dtype, v.weak) for v in primal.inputs]
    cts = [Value(v.shape, v.dtype) for v in primal.outputs]
    graph = Graph(res + xs + cts, [], [])
    closed = xs[n_explicit:]
    user = inline_graph(graph.nodes, bwd, res + cts + closed)
    wrt = [n_explicit + k for k in range(n_closed) if dtypes.is_float(closed[k].dtype)]
    seeded = [j for j, v in enumerate(primal.outputs) if dtypes.is_float(v.dtype)]
    joint = joint_graph(primal, wrt, seeded)
    auto = inline_graph(graph.nodes, joint, xs + [cts[j] for j in seeded])[len(primal.outputs) :]
    closed_cts = dict(zip(wrt, auto))
    graph.outputs = user + [closed_cts.get(n_explicit + k, closed[k]) for k in range(n_closed)]
    return fwd2, graph


__all__ = ["closed_call_graphs", "closes_over_tracers", "union", "with_inputs"]
