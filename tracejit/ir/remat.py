"""Checkpoint marks: forward values the min-cut partition must recompute, not save.

`tj.checkpoint` marks the outputs of the nodes a region records with its policy, a
predicate `policy(node) -> bool` ("may this node's outputs be saved?"). The partition gives
an unsaveable value an uncuttable edge and lets it be recomputed whatever its kind, so the
backward recomputes it from the region's inputs or from the values the policy saves.

Marks are kept beside the graph, keyed by `Value` (weakly), so the graph passes, which copy
nodes but keep their output values, carry them along without knowing about them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable

from tracejit.ir.graph import Node, Value

Policy = Callable[[Node], bool]
_MARKS: weakref.WeakKeyDictionary[Value, Policy] = weakref.WeakKeyDictionary()


def mark(nodes: Iterable[Node], policy: Policy) -> None:
    for node in nodes:
        for v in node.outputs:
            _MARKS.setdefault(v, policy)  # an inner checkpoint's policy wins


def must_recompute(node: Node) -> bool:
    """Whether `node` lies in a checkpoint region whose policy does not save it."""
    policy = _MARKS.get(node.outputs[0]) if node.outputs else None
    return policy is not None and not policy(node)


def checkpointed_values(fwd_nodes: Iterable[Node]) -> set[Value]:
    """The forward values that must be recomputed: outputs of unsaveable region nodes, and
    of the nodes autodiff added on the forward side (`1 - tanh(x)**2` for tanh's VJP) that
    read one: in JAX's terms they belong to the region's own backward."""
    out: set[Value] = set()
    for node in fwd_nodes:
        derived = node.phase == "backward" and any(v in out for v in node.inputs)
        if derived or must_recompute(node):
            out.update(node.outputs)
    return out


__all__ = ["Policy", "checkpointed_values", "mark", "must_recompute"]
