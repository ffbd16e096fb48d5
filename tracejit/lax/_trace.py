"""Tracing a user function into a closed region, and the checks shared by every construct.

`trace_region(fun, args_tree, avals, label)` calls `fun` on fresh tracers of a new trace and
returns a `Traced` region whose graph takes `(captured..., explicit...)`: values captured
from enclosing traces come first and become the region node's leading operands (consts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tracejit.errors import ShapeError
from tracejit.ir import dtypes
from tracejit.ir.graph import Graph
from tracejit.ir.regions import aval_str
from tracejit.pytree import PyTreeDef, keystr_paths
from tracejit.tracer.arguments import abstractify
from tracejit.tracer.core import Tracer, bind
from tracejit.tracer.tracing import trace_flat

AVal = tuple  # (shape, dtype, weak)


@dataclass
class Traced:
    graph: Graph  # inputs: captured values, then the explicit arguments
    out_tree: PyTreeDef
    consts: list  # the outer values (tracers) standing for the captured inputs


leaf_aval = abstractify  # (shape, dtype, weak) of an operand leaf; a clear error for others


def trace_region(fun: Callable, in_tree: PyTreeDef, avals: list[AVal], label: str) -> Traced:
    """Trace `fun(*tree_unflatten(in_tree, tracers))` into a closed region graph."""
    names = [f"{label} argument"] * len(avals)
    traced = trace_flat(fun, lambda tree: (tree, {}), in_tree, avals, names, label)
    graph, n = traced.graph, len(avals)
    graph.inputs = graph.inputs[n:] + graph.inputs[:n]  # captured values first
    return Traced(graph, traced.out_tree, traced.captured)


def out_avals(graph: Graph, start: int = 0, stop: int | None = None) -> list[AVal]:
    return [(v.shape, v.dtype, v.weak) for v in graph.outputs[start:stop]]


def check_same_types(
    what: str,
    got_tree,
    got: list[AVal],
    want_tree,
    want: list[AVal],
    names=("output", "input"),
    prefix: str = "",
) -> None:
    """Raise ShapeError naming both sides when two pytrees of avals differ in structure,
    shape or dtype (weak flags aside)."""
    if got_tree != want_tree:
        raise ShapeError(
            f"{what}: the {names[0]} has structure {got_tree} but the {names[1]} has "
            f"structure {want_tree}; they must be the same"
        )
    paths = keystr_paths(want_tree, prefix)
    for path, a, b in zip(paths, got, want):
        if tuple(a[0]) != tuple(b[0]) or np.dtype(a[1]) != np.dtype(b[1]):
            where = f" {path}" if path else ""
            raise ShapeError(
                f"{what}: the {names[0]}{where} has type {aval_str(a)} but the {names[1]}"
                f"{where} has type {aval_str(b)}; they must match exactly (cast with .astype, or "
                "reshape/broadcast the value)"
            )


def promote_weak(init_avals: list[AVal], body_out: list[AVal]) -> list[AVal] | None:
    """Carry avals retyped where a weak (Python scalar) initial value met a stronger dtype in
    the body's output; None when nothing changes."""
    new, changed = [], False
    for a, b in zip(init_avals, body_out):
        if a[2] and tuple(a[0]) == tuple(b[0]) and np.dtype(a[1]) != np.dtype(b[1]):
            new.append((a[0], np.dtype(b[1]), False))
            changed = True
        else:
            new.append(a)
    return new if changed else None


def cast_leaves(leaves: list, avals: list[AVal]) -> list:
    """Leaves converted to the dtypes of `avals` (tracers by a `convert` node)."""
    out = []
    for x, (_, dtype, _) in zip(leaves, avals):
        if isinstance(x, Tracer):
            out.append(x if x.dtype == dtype else bind("convert", x, dtype=np.dtype(dtype)))
        else:
            out.append(np.asarray(x, dtype=dtype))
    return out


def scalar_index(x, what: str):
    """A branch index or predicate operand as int32[] (concrete or traced)."""
    shape, dtype, _ = leaf_aval(x, what)
    if tuple(shape) != ():
        raise ShapeError(f"{what} must be a scalar, got {aval_str((shape, dtype, False))}")
    if not (dtypes.is_bool(dtype) or dtypes.is_int(dtype)):
        raise ShapeError(
            f"{what} must be a boolean or integer scalar, got {aval_str((shape, dtype, False))}; "
            "compare it first (e.g. x > 0)"
        )
    if isinstance(x, Tracer):
        return x if x.dtype == np.int32 else bind("convert", x, dtype=np.dtype(np.int32))
    return np.asarray(x).astype(np.int32)


__all__ = [
    "Traced",
    "cast_leaves",
    "check_same_types",
    "leaf_aval",
    "out_avals",
    "promote_weak",
    "scalar_index",
    "trace_region",
]
