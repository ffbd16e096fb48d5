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

from tracejit.ir.autodiff import VJP_RULES
from tracejit.ir.c_render import C_RULES
from tracejit.ir.graph import Node, Value
from tracejit.ir.primitives import ELEMENTWISE, register
from tracejit.ir.regions import region_graphs

Policy = Callable[[Node], bool]
_MARKS: weakref.WeakKeyDictionary[Value, Policy] = weakref.WeakKeyDictionary()


# Outputs of a checkpointed region: values of the enclosing computation, computed in the
# forward and never recomputed (JAX saves a checkpoint's outputs as residuals).
_OUTPUTS: weakref.WeakKeyDictionary[Value, bool] = weakref.WeakKeyDictionary()


def mark(nodes: Iterable[Node], policy: Policy) -> None:
    for node in nodes:
        for v in node.outputs:
            _MARKS.setdefault(v, policy)  # an inner checkpoint's policy wins


def keep(outputs: Iterable[Value]) -> None:
    """Mark a region's outputs: computed in the forward, saved when the backward needs them."""
    for v in outputs:
        _OUTPUTS[v] = True


def region_outputs(fwd_nodes: Iterable[Node]) -> set[Value]:
    """The forward values that are outputs of a checkpointed region."""
    return {v for n in fwd_nodes for v in n.outputs if v in _OUTPUTS}


def has_marks(graph) -> bool:
    """Whether any value of `graph` (or of its regions, at any depth) carries a mark: its
    text (`cache.graph_key`) does not show them, so its differentiation is not stored."""
    if not _MARKS and not _OUTPUTS:  # no checkpoint in this process (the usual case)
        return False
    stack = [graph]
    while stack:
        for node in stack.pop().nodes:
            if any(v in _MARKS or v in _OUTPUTS for v in node.outputs):
                return True
            stack.extend(region_graphs(node))
    return False


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


def _barrier_rule(avals):
    ((shape, dtype, weak),) = avals
    return (shape, dtype, weak)


# An identity the graph passes do not see through: recomputed values read their inputs
# through it, so common-subexpression elimination cannot merge a recomputation back into
# the forward computation it repeats (JAX's optimization_barrier, for one value).
remat_barrier_p = register(
    "remat_barrier",
    ELEMENTWISE,
    _barrier_rule,
    lambda x: x,
    rules={VJP_RULES: lambda e, ct, x, *, out: [ct], C_RULES: lambda args, *_: args[0]},
)


__all__ = [
    "Policy",
    "checkpointed_values",
    "keep",
    "mark",
    "must_recompute",
    "region_outputs",
    "remat_barrier_p",
]
