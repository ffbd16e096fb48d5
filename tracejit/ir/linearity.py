"""Which primitives are linear in which operands, and whether a graph is linear in some inputs.

Forward mode (`jvp`, `jacfwd`, `linearize`) through a `tj.custom_vjp` transposes the user's
`bwd` (ir/custom_call.py): that is the JVP only when `bwd` is linear in its cotangent.
`first_nonlinear(graph, inputs)` walks `graph` from `inputs` and returns the first node on a
path from them that is not linear in what it reads from them (None when every one is):

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda ct, x: (ct * x, np.round(ct)))(np.ones(2), np.ones(2))
>>> first_nonlinear(g, [0]).prim.name, first_nonlinear(g, [1])
('round', None)

`LINEAR_RULES[prim](node, dep)` is None when `node` is linear in the operands flagged in
`dep` (the others held fixed), else the node that is not (a node inside a region or a nested
custom call, for its source line). A primitive without a rule counts as nonlinear: a clear
refusal is better than a silently wrong derivative. "Linear" is what autodiff can transpose:
a term that does not depend on the inputs (`ct + c`, `where(m, ct, 0)`) is accepted (its
transpose is the linear part's), and `stop_gradient`, whose transpose is zero, is not linear.
A cast between float types is taken as linear (it rounds, as every float operation does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracejit.ir import dtypes
from tracejit.ir.graph import Graph, Node, dependents
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import RuleTable

Rule = Callable[[Node, list[bool]], "Node | None"]


def _jointly(node: Node, dep: list[bool]) -> Node | None:
    """Linear in all its operands together (a sum, a layout change, a collective...)."""
    return None


def _one_factor(node: Node, dep: list[bool]) -> Node | None:
    """A product: linear in each operand, not in two at once."""
    return None if sum(dep) <= 1 else node


def _only(*positions: int) -> Rule:
    """Linear in the operands at `positions`; the others (a divisor, a condition, indices)
    must not depend on the inputs."""

    def rule(node: Node, dep: list[bool]) -> Node | None:
        return None if all(i in positions for i, d in enumerate(dep) if d) else node

    return rule


def _float_cast(node: Node, dep: list[bool]) -> Node | None:
    """A cast between float or complex types (a cast to an integer rounds)."""
    inexact = dtypes.is_inexact(node.inputs[0].dtype) and dtypes.is_inexact(node.outputs[0].dtype)
    return None if inexact else node


def _cond(node: Node, dep: list[bool]) -> Node | None:
    """Linear when the branch index is fixed and every branch is linear in the operands."""
    if dep[0]:
        return node
    wrt = [i - 1 for i, d in enumerate(dep) if d and i > 0]
    for branch in node.attrs["branches"]:
        bad = first_nonlinear(branch.graph, wrt)
        if bad is not None:
            return bad
    return None


def _scan(node: Node, dep: list[bool]) -> Node | None:
    """Linear when the body is, in its consts, carries and slices that depend on the inputs
    (a carry that the body makes depend on them depends on them from the next step on)."""
    body = node.attrs["body"].graph
    n_consts, n_carry = node.attrs["n_consts"], node.attrs["n_carry"]
    flags = list(dep)
    while True:
        found = dependents(body.nodes, [v for v, d in zip(body.inputs, flags) if d])
        carried = [n_consts + j for j, v in enumerate(body.outputs[:n_carry]) if v in found]
        if all(flags[i] for i in carried):
            return first_nonlinear(body, [i for i, d in enumerate(flags) if d])
        for i in carried:
            flags[i] = True


_BY_NAME: dict[str, Rule] = {
    **dict.fromkeys(
        ["add", "sub", "neg", "reduce_sum", "cumsum", "broadcast_in_dim", "reshape"]
        + ["transpose", "rev", "slice", "concatenate", "pad", "real", "imag", "conj"]
        + ["complex", "remat_barrier", "fft", "psum", "all_gather", "psum_scatter"]
        + ["ppermute"],
        _jointly,
    ),
    "mul": _one_factor,
    "matmul": _one_factor,
    "div": _only(0),
    "select": _only(1, 2),
    "take": _only(0),
    "take_along_axis": _only(0),
    "take_add": _only(0, 2),
    "take_along_add": _only(0, 2),
    "solve": _only(1),
    "convert": _float_cast,
    "cond": _cond,
    "scan": _scan,
}

# Keyed by Primitive like every rule table; a primitive may register its own rule
# (`register(..., rules={LINEAR_RULES: rule})`), the built-in ones are found by name.
LINEAR_RULES = RuleTable("linearity", default=lambda prim: _BY_NAME.get(prim.name))


def first_nonlinear(graph: Graph, inputs: Iterable[int]) -> Node | None:
    """The first node of `graph` on a path from `graph.inputs[inputs]` to an output that is
    not linear in what it reads from them (see the module doc); None when there is none."""
    live = remove_dead_nodes(graph)
    dep = {live.inputs[i] for i in inputs}
    for node in live.nodes:
        flags = [v in dep for v in node.inputs]
        if not any(flags):
            continue
        rule = LINEAR_RULES.get(node.prim)
        bad = node if rule is None else rule(node, flags)
        if bad is not None:
            return bad
        dep.update(node.outputs)
    return None


__all__ = ["LINEAR_RULES", "first_nonlinear"]
