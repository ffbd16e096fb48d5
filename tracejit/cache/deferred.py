"""Deferred joint graphs: jit's cache key of `grad(f)` without differentiating (issue 10).

`jit(grad(f))` traces `f`, differentiates it and inlines the joint (forward + backward)
graph into jit's trace, then keys the compiled function by the text of that whole graph. A
fresh process with a warm disk cache paid all of it before its lookup: loading the stored
joint graph, re-recording its thousands of nodes into jit's trace, and fingerprinting them.

While `jit` traces a function for its first compile (`DEFER` is set around the trace; the
trace made then has `defer_joints`), `grad`/`value_and_grad` called directly in that trace
records one node instead: `deferred_joint[joint=<key>]`, whose key is the joint graph's
disk-cache key (`tracejit.cache.joint.joint_parts`: the exact text of `f`'s traced graph,
what is differentiated, tracejit's sources, NumPy's version, the output settings), and
whose output types are derived (the function's outputs, then one gradient per
differentiated input, of that input's shape and dtype). jit's key, taken from that graph, is thus a
pure function of what the expanded graph is made from. On a hit nothing more is needed;
on a miss `expand` inlines the joint graphs (loaded or built, as before) and the compile
goes on with exactly the graph the trace would have recorded. Should a joint graph's
output types differ from the derived ones, `expand` returns None and jit traces again
without deferring.

The node never leaves `jit._compile`: a trace that holds one is expanded (miss) or dropped
from jit's trace cache (hit) before anything else can read it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

from tracejit.errors import InternalError
from tracejit.ir.builder import GraphBuilder
from tracejit.ir.graph import Graph, Value
from tracejit.ir.primitives import OPAQUE, Primitive

# Set by jit around the trace of a first compile; trace_flat hands it to that trace only.
DEFER: contextvars.ContextVar[bool] = contextvars.ContextVar("tracejit_defer", default=False)


class DeferredJoint:
    """The joint graph of one traced function, built only when asked (`graph()`).

    Equal only to itself: two `grad` calls are two nodes (expanding them interns their
    equal nodes as the trace would, and keeps random ones apart as the trace would)."""

    __slots__ = ("_build", "_graph", "avals", "key")

    def __init__(self, key: str, avals: tuple, build: Callable[[], Graph]):
        self.key = key
        self.avals = avals
        self._build = build
        self._graph: Graph | None = None

    def graph(self) -> Graph:
        if self._graph is None:
            self._graph = self._build()
        return self._graph

    def __repr__(self) -> str:
        return f"joint:{self.key[:16]}"


def _rule(in_avals, *, joint: DeferredJoint):
    return list(joint.avals)


def _impl(*args, joint: DeferredJoint):
    raise InternalError(f"a deferred joint graph ({joint!r}) was run before it was expanded")


# Not in the registry: no transformation or backend ever sees it (see the module docstring).
DEFERRED_JOINT = Primitive("deferred_joint", OPAQUE, _rule, _impl, multiple_results=True)


def joint_avals(graph: Graph, wrt: tuple[int, ...]) -> tuple:
    """The output types of `graph`'s joint graph: its outputs, then the differentiated
    inputs' (a cotangent has its primal's shape and dtype, and is never weak)."""
    grads = [graph.inputs[i] for i in wrt]
    return tuple((v.shape, v.dtype, v.weak) for v in graph.outputs) + tuple(
        (v.shape, v.dtype, False) for v in grads
    )


def record(traceable, traced, wrt: tuple[int, ...], seeded: tuple[int, ...], args: list):
    """One deferred node for the joint graph of `traced` (a `transforms._Traceable`'s
    trace) applied to `args`, when they belong to a trace that defers: its output tracers;
    else None (the caller inlines the joint graph)."""
    from tracejit.cache import cache_key
    from tracejit.cache.joint import joint_parts
    from tracejit.tracer.core import Tracer, innermost_trace

    trace = innermost_trace(args)
    if trace is None or traced.captured:
        return None
    if not (trace.defer_joints and trace.active):
        return None
    parts = joint_parts(traced.graph, traceable.joint_what(wrt, seeded, remat=True))
    if parts is None:
        return None

    def build() -> Graph:
        return traceable.joint(traced, wrt, seeded, remat=True)

    joint = DeferredJoint(cache_key(parts), joint_avals(traced.graph, wrt), build)
    ins = [trace.to_value(a) for a in args]
    return [
        Tracer(trace, v, None) for v in trace.record(DEFERRED_JOINT, ins, {"joint": joint}, None)
    ]


def has_deferred(graph: Graph) -> bool:
    return any(node.prim is DEFERRED_JOINT for node in graph.nodes)


def expand(graph: Graph) -> Graph | None:
    """`graph` with each deferred joint inlined, as the trace would have recorded it; None
    when a joint graph's output types are not the derived ones."""
    builder = GraphBuilder(Graph(inputs=list(graph.inputs)))
    env: dict[Value, Value] = {v: v for v in graph.inputs}
    for node in graph.nodes:
        ins = [env[v] for v in node.inputs]
        if node.prim is DEFERRED_JOINT:
            joint = node.attrs["joint"].graph()
            if [(v.shape, v.dtype, v.weak) for v in joint.outputs] != [
                (v.shape, v.dtype, v.weak) for v in node.outputs
            ]:
                return None
            outs = builder.inline(joint, ins)
        else:
            outs = builder.bind(node.prim, ins, node.attrs, node.source, node.phase)
        env.update(zip(node.outputs, outs))
    builder.graph.outputs = [env[v] for v in graph.outputs]
    return builder.graph


__all__ = [
    "DEFER",
    "DEFERRED_JOINT",
    "DeferredJoint",
    "expand",
    "has_deferred",
    "joint_avals",
    "record",
]
