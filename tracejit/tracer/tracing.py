"""The trace API every transformation uses: `trace` a function into a graph, `inline` a graph.

- `trace(fun, args, kwargs)` calls `fun` with tracers standing for the array leaves of the
  arguments and returns a `Traced`: the `Graph`, the output tree, and the outer tracers the
  function closed over (the graph reads them after its explicit inputs).
- `inline(graph, args)` runs a graph on arrays (eagerly, through NumPy) or, when an argument
  is a tracer, records the graph's nodes into that tracer's trace: this is how `jit` inside a
  trace, `grad`, `vjp`, `vmap` and the rest compose.
- `TraceCache` traces once per abstract signature (argument structure, leaf shapes and dtypes,
  static values), as `jit` and the transformations do.

>>> import numpy as np
>>> traced = trace(lambda x: np.sin(x) * 2.0, (np.ones(3, np.float32),))
>>> [n.prim.name for n in traced.graph.nodes]
['sin', 'const', 'broadcast_in_dim', 'mul']
>>> inline(traced.graph, [np.zeros(3, np.float32)])
[array([0., 0., 0.], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tracejit.cache.deferred import DEFER
from tracejit.config import config
from tracejit.const_array import ConstArray
from tracejit.errors import ArgumentError
from tracejit.ir.graph import Graph, verify
from tracejit.ir.interpret import eval_graph
from tracejit.pytree import PyTreeDef, tree_flatten, tree_unflatten
from tracejit.tracer import checks
from tracejit.tracer.arguments import ArgSpec, SplitCall, abstractify
from tracejit.tracer.core import Trace, Tracer, bind, innermost_trace, leak_error


@dataclass
class Traced:
    """A traced function: its graph, the structure of its outputs, what it closed over."""

    graph: Graph
    out_tree: PyTreeDef
    captured: list  # outer tracers the graph reads after its explicit inputs
    # Traced while `grad` could defer its joint graphs (tracejit.cache.deferred): jit's
    # persistent key is taken from such a graph only, so that it does not depend on whether
    # `lower` or `make_ir` traced the signature first
    deferring: bool = False


def trace_flat(fun: Callable, rebuild: Callable, treedef: PyTreeDef, avals, names, label: str):
    """Call `fun(*args, **kwargs)`, where `(args, kwargs) = rebuild(tree of tracers)` and the
    tracers stand for leaves of abstract values `avals` (named `names`); its `Traced`."""
    trace = Trace(label)
    trace.defer_joints = DEFER.get()  # jit's first trace only (tracejit.cache.deferred)
    token = DEFER.set(False)
    try:
        tracers = [trace.new_input(s, d, w, n) for (s, d, w), n in zip(avals, names)]
        args, kwargs = rebuild(tree_unflatten(treedef, tracers))
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        for i, leaf in enumerate(out_leaves):
            if not isinstance(leaf, Tracer):
                _check_output(leaf, i, label)
        graph = trace.finish(out_leaves)
        if config.verify_graphs:
            verify(graph)
    finally:
        trace.active = False
        DEFER.reset(token)
    return Traced(graph, out_tree, [t for t, _ in trace.captured], trace.defer_joints)


def _check_output(leaf, i: int, label: str) -> None:
    try:
        abstractify(leaf, f"output {i} of {label}")
    except ArgumentError:
        if isinstance(leaf, np.ndarray):
            raise  # a subclass: its own message
        raise checks.bad_output(leaf, i, label) from None


def trace(fun: Callable, args: Sequence, kwargs: dict | None = None, label: str = "") -> Traced:
    """Trace `fun(*args, **kwargs)`: every array or Python-scalar leaf of the arguments is a
    tracer of its shape and dtype (a `ShapeDtypeStruct` stands for an array)."""
    label = label or getattr(fun, "__name__", "function")
    cache = TraceCache(fun, ArgSpec(fun, label=label), label)
    return cache.get(tuple(args), dict(kwargs or {}))[0]


class TraceCache:
    """Traces `fun` once per abstract signature of its calls (see `ArgSpec`)."""

    def __init__(self, fun: Callable, spec: ArgSpec, label: str):
        self.fun = fun
        self.spec = spec
        self.label = label
        self._traces: dict[tuple, Traced] = {}

    def get(self, args: tuple, kwargs: dict) -> tuple[Traced, list]:
        """The `Traced` of a call with these arguments, and the call's traced leaves."""
        return self.trace_call(self.spec.split(args, kwargs))

    def trace_call(self, call: SplitCall) -> tuple[Traced, list]:
        leaves, treedef = tree_flatten(call.dynamic)
        names = self.spec.leaf_names(call)
        avals = tuple(abstractify(x, n) for x, n in zip(leaves, names))
        key = (treedef, avals, call.static)
        traced = self._traces.get(key)
        if traced is None:
            traced = trace_flat(self.fun, call.rebuild, treedef, avals, names, self.label)
            if not traced.captured:  # a graph reading outer tracers is valid for this call only
                self._traces[key] = traced
        return traced, leaves

    def forget(self, traced: Traced) -> None:
        """Drop `traced` from the cache (the next call of its signature traces again)."""
        self._traces = {k: t for k, t in self._traces.items() if t is not traced}

    def leaf_names(self, args: tuple, kwargs: dict) -> list[str]:
        return self.spec.leaf_names(self.spec.split(args, kwargs))


# ---------------------------------------------------------------- inlining


def _rebinder(trace: Trace | None):
    """Re-bind one node: NumPy when eager, a node of `trace` when tracing. The phase of the
    node is kept (a backward node stays marked backward, for debug_nans reports)."""

    def apply(node, xs):
        if trace is None:
            if node.prim.name == "const":
                return [node.attrs["value"].array]
            out = bind(node.prim, *xs, **node.attrs)
            return out if node.prim.multiple_results else [out]
        inputs = [trace.to_value(x) for x in xs]
        outs = trace.record(node.prim, inputs, node.attrs, node.source, node.phase)
        return [Tracer(trace, v, node.source) for v in outs]

    return apply


def inline(graph: Graph, args: Sequence) -> list:
    """Evaluate `graph` on arrays (eagerly) or on tracers (recording into their trace).

    When tracing, concrete arguments and constants become nodes of the trace, so nothing is
    folded into large constant arrays behind the enclosing trace's back. Eager results are
    ordinary writable arrays.
    """
    if len(args) != len(graph.inputs):
        raise ArgumentError(f"graph takes {len(graph.inputs)} inputs, got {len(args)}")
    trace = innermost_trace(args)
    for a in args:
        if isinstance(a, Tracer) and not a._trace.active:
            raise leak_error(a)
    inputs = []
    for a, v in zip(args, graph.inputs):
        if not isinstance(a, Tracer):
            a = np.asarray(a, dtype=v.dtype)
            if trace is not None:
                a = Tracer(trace, trace.to_value(a), None)
        inputs.append(a)
    outs = eval_graph(graph, inputs, _rebinder(trace))
    return [owned(o) for o in outs]


def owned(x):
    """Copy read-only views (broadcasts, constants) so users get ordinary writable arrays,
    returned (as `jit` returns them) as ConstArray views, which have `.block_until_ready()`."""
    if type(x) is np.ndarray:
        if not (x.flags.owndata and x.flags.writeable):
            x = np.array(x, copy=True)
        return x.view(ConstArray)
    return x


__all__ = ["TraceCache", "Traced", "inline", "owned", "trace", "trace_flat"]
