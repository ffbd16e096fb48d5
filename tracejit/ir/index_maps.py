"""How fusion folds a layout primitive into the index of its operand's loads: `INDEX_MAPS`.

A kernel indexes every value with an affine map of its loop variables, one row per axis:
`(offset, coefficients)`. A primitive of fusion class FOLDED or RESHAPE (ir/primitives.py)
computes nothing; its rule here gives, from the rows indexing its output (`amap`), the rows
indexing its one operand, so the load reads the operand directly (`zero` is the row of an
axis of extent 1, always index 0). The rules are keyed by the primitive, like every rule table.

>>> import numpy as np
>>> from tracejit.ir.graph import Node, Value
>>> from tracejit.ir.primitives import get
>>> x = Value((3,), np.dtype(np.float32))
>>> node = Node(get("rev"), [x], {"axes": (0,)}, [Value((3,), x.dtype)])
>>> INDEX_MAPS[node.prim](node, ((0, (1,)),), (0, (0,)))
((2, (-1,)),)
"""

from __future__ import annotations

from tracejit.ir import structural  # noqa: F401  (registers the layout primitives)
from tracejit.ir.graph import Node
from tracejit.ir.primitives import RuleTable

INDEX_MAPS = RuleTable("index map")


@INDEX_MAPS.register("broadcast_in_dim")
def _broadcast(node: Node, amap: tuple, zero: tuple) -> tuple:
    (u,) = node.inputs
    return tuple(amap[d] if u.shape[j] != 1 else zero for j, d in enumerate(node.attrs["dims"]))


@INDEX_MAPS.register("transpose")
def _transpose(node: Node, amap: tuple, zero: tuple) -> tuple:
    rows = [zero] * node.inputs[0].ndim
    for k, p in enumerate(node.attrs["perm"]):
        rows[p] = amap[k]
    return tuple(rows)


@INDEX_MAPS.register("slice")
def _slice(node: Node, amap: tuple, zero: tuple) -> tuple:
    return tuple(
        (a + s * c, tuple(s * x for x in coefs))
        for (c, coefs), a, s in zip(amap, node.attrs["starts"], node.attrs["steps"])
    )


@INDEX_MAPS.register("rev")
def _rev(node: Node, amap: tuple, zero: tuple) -> tuple:
    axes = node.attrs["axes"]
    return tuple(
        (n - 1 - c, tuple(-x for x in coefs)) if j in axes else (c, coefs)
        for j, (n, (c, coefs)) in enumerate(zip(node.inputs[0].shape, amap))
    )


@INDEX_MAPS.register("reshape")
def _reshape(node: Node, amap: tuple, zero: tuple) -> tuple:
    """Only a reshape that adds or removes size-1 axes is folded (fusion's `classify`)."""
    big = iter([row for row, d in zip(amap, node.outputs[0].shape) if d != 1])
    return tuple(next(big) if d != 1 else zero for d in node.inputs[0].shape)


__all__ = ["INDEX_MAPS"]
