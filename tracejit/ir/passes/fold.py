"""Constant folding: evaluate at compile time what depends on constants only.

Two cases, both through the one rewrite engine:

- every input is a materialized `const` (or there is none: `iota`): the node is run by the
  reference interpreter and becomes a `const`, if its result has at most `FOLD_LIMIT`
  elements. Larger results stay computed at run time: materializing them would bloat the
  graph text, the cache key and the generated source.
- an elementwise node whose inputs are all splats (a scalar constant broadcast to a shape,
  the form `tracejit.numpy` gives Python scalars): it is computed on the scalars and becomes a
  splat again, whatever its shape.

A broadcast of a scalar constant is itself left alone: it is the canonical splat, which the
simplifier's patterns read and the fuser turns into a scalar in the kernel. Folding uses the
reference implementations, so a folded result is bit-identical to the unfolded one.
"""

from __future__ import annotations

import numpy as np

from tracejit.ir.graph import ConstValue, Graph
from tracejit.ir.interpret import apply_primitive
from tracejit.ir.passes.rewrite import ANY_OP, Builder, P, Rule, rewrite
from tracejit.ir.primitives import CONTROL, ELEMENTWISE, OPAQUE

# Results with more elements than this stay computed at run time (4 KiB of float32).
FOLD_LIMIT = 1024


def _const_array(b: Builder, v):
    node = b.node_of(v)
    if node is None or node.prim.name != "const":
        return None
    return node.attrs["value"].array


def _is_splat_broadcast(node) -> bool:
    return node.prim.name == "broadcast_in_dim" and node.inputs[0].size == 1


def _emit_const(b: Builder, arr, out):
    """A const node holding `arr` with `out`'s dtype and weakness."""
    attrs = {"value": ConstValue(np.asarray(arr, dtype=out.dtype))}
    if out.weak:
        attrs["weak"] = True
    return b.emit("const", **attrs)


def _run(node, arrays):
    try:
        (result,) = apply_primitive(node.prim, arrays, node.attrs)
    except (ValueError, ArithmeticError, IndexError):  # e.g. max of an empty axis
        return None
    return result


def _fold(b: Builder, m: dict):
    node = m["node"]
    out = node.outputs[0]
    if node.prim.name == "const" or _is_splat_broadcast(node) or node.prim.kind == CONTROL:
        return None  # a loop or branch is not folded: running it could take any time
    if node.prim.kind == OPAQUE:
        return None  # its result depends on more than its operands (collectives: the process)
    arrays = [_const_array(b, v) for v in node.inputs]
    if all(a is not None for a in arrays):
        if out.size > FOLD_LIMIT:
            return None
        result = _run(node, arrays)
        return None if result is None else _emit_const(b, result, out)
    if node.prim.kind != ELEMENTWISE:
        return None
    scalars = [b.splat_value(v) for v in node.inputs]
    if any(s is None for s in scalars):
        return None
    result = _run(node, [np.asarray(s, dtype=v.dtype) for s, v in zip(scalars, node.inputs)])
    if result is None:
        return None
    c = _emit_const(b, result.reshape(()), out)
    if out.shape == ():
        return c
    return b.emit("broadcast_in_dim", c, shape=out.shape, dims=())


RULES: list[Rule] = [Rule("fold", P(ANY_OP, name="node"), _fold)]


def fold(graph: Graph, stats: dict | None = None) -> Graph:
    """Fold constant subexpressions of `graph` (see the module docstring for the limits).

    >>> import numpy as np, tracejit as tj
    >>> from tracejit.ir.passes.dce import remove_dead_nodes
    >>> g = tj.make_ir(lambda x: x * (np.float64(2.0) + np.ones(2)))(np.ones(2))
    >>> print(fold(g))
    { lambda a:f64[2] . let
        b:f64[2] = const[value=[3.,3.]]
        c:f64[2] = mul a b
      in (c,) }
    """
    return rewrite(graph, RULES, stats)
