"""`tj.checkpoint` (alias `tj.remat`): recompute a region in the backward instead of saving it.

Inside a traced function, `checkpoint(f, policy=...)` marks what `f` records; the min-cut
partition (`ir/partition.py`) then saves only the region's inputs, its outputs and the values
the policy allows, and the backward recomputes the rest: in `tj.vjp` between the forward and
the backward call, and in `grad` (jitted or not) inside its one program, where each region is
recomputed right before its backward (`ir/rematerialize.py`). `policy` decides per node:

    tj.checkpoint_policies.nothing_saveable     save nothing inside (the default)
    tj.checkpoint_policies.dots_saveable        save matmul outputs, recompute the rest
    tj.checkpoint_policies.everything_saveable  no constraint (the partition decides)

>>> import numpy as np, tracejit as tj
>>> f = tj.checkpoint(lambda x: np.sin(np.sin(x)))
>>> _, f_vjp = tj.vjp(lambda x: f(x).sum(), np.ones(3))
>>> [v.type_str for v in f_vjp.residual_values]
['f64[3]']
"""

from __future__ import annotations

from collections.abc import Callable

from tracejit.errors import TracejitTypeError
from tracejit.ir.graph import Node
from tracejit.ir.primitives import MATMUL
from tracejit.ir.remat import Policy, keep, mark, remat_barrier_p
from tracejit.pytree import tree_flatten, tree_leaves, tree_unflatten
from tracejit.tracer.core import Tracer, bind


class checkpoint_policies:
    """Policies for `checkpoint`: `policy(node) -> bool`, may the node's outputs be saved."""

    @staticmethod
    def nothing_saveable(node: Node) -> bool:
        return False

    @staticmethod
    def everything_saveable(node: Node) -> bool:
        return True

    @staticmethod
    def dots_saveable(node: Node) -> bool:
        return node.prim.kind == MATMUL

    checkpoint_dots = dots_saveable


def checkpoint(fun: Callable, *, policy: Policy | None = None) -> Callable:
    """`fun`, with what it computes recomputed in the backward rather than saved."""
    if not callable(fun):
        raise TracejitTypeError(f"checkpoint expects a function, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise TracejitTypeError(f"checkpoint: policy must be a function of a node, got {policy!r}")
    rule = policy or checkpoint_policies.nothing_saveable

    def checkpointed(*args, **kwargs):
        traces = [x._trace for x in tree_leaves((args, kwargs)) if isinstance(x, Tracer)]
        if not traces:
            return fun(*args, **kwargs)  # concrete values: nothing is recorded to mark
        trace = max(traces, key=lambda t: t.level)
        start = len(trace.graph.nodes)
        out = fun(*args, **kwargs)
        mark(trace.graph.nodes[start:], rule)
        # Each output leaves the region through an identity: the copy outside is a value of
        # the enclosing computation (saved if its backward needs it, never recomputed), and
        # what the region's own VJP derives from the inside value is recomputed with it.
        leaves, tree = tree_flatten(out)
        leaves = [_boundary(x, trace) for x in leaves]
        keep(x._value for x in leaves if isinstance(x, Tracer) and x._trace is trace)
        return tree_unflatten(tree, leaves)

    checkpointed.__name__ = f"checkpoint({getattr(fun, '__name__', 'function')})"
    return checkpointed


def _boundary(x, trace):
    if isinstance(x, Tracer) and x._trace is trace:
        return bind(remat_barrier_p, x)
    return x


remat = checkpoint

__all__ = ["checkpoint", "checkpoint_policies", "remat"]
