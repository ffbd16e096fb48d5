"""Which primitives are linear in which operands, and whether a graph is linear in some inputs.

Forward mode (`jvp`, `jacfwd`, `linearize`) through a `tj.custom_vjp` transposes the user's
`bwd` (ir/custom_call.py): that is the JVP only when `bwd` is linear in its cotangent.
`first_nonlinear(graph, inputs)` walks `graph` from `inputs` and returns a `NotLinear` naming
the first node that is not linear in them (None when every one is):

>>> import numpy as np, tracejit as tj
>>> g = tj.make_ir(lambda ct, x: (ct * x, np.round(ct), ct + x))(np.ones(2), np.ones(2))
>>> [(f.node.prim.name, f.affine) for f in (first_nonlinear(g, [0]), first_nonlinear(g, [1]))]
[('round', False), ('add', True)]

Linear means what transposing keeps: a term that does not depend on the inputs (`ct + x`,
`where(m, ct, x)`, `concatenate([ct, ones])`) is dropped by the transpose, so an affine node
is not linear (`affine` set). Every value is given a `State`: whether it depends on the inputs
(`linear`, then linearly) and whether it may hold a term that does not (`offset`; a value
known to be zero, as `zeros`, `0 * y`, `pad` with 0 or a reshape of zeros, holds none). A node
combining a dependent part with an offset raises; so does `first_nonlinear(...,
linear_outputs=True)` for an output with an offset (a cotangent `bwd` makes up).

`LINEAR_RULES[prim](node, states)` gives `node`'s output states (one, or one per output) from
its operands', or raises `NotLinear` (naming a node inside a region or a nested custom call,
for its source line). A primitive without a rule is nonlinear in a dependent operand and has
an offset otherwise: a clear refusal is better than a silently wrong derivative.
`stop_gradient`, whose transpose is zero, is not linear. A cast between float types is taken
as linear (it rounds, as every float operation does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np

from tracejit.errors import TracejitError
from tracejit.ir import dtypes
from tracejit.ir.graph import Graph, Node
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import RuleTable


class State(NamedTuple):
    """What a value is made of: a part linear in the inputs (`linear`), a part that does not
    depend on them and is not known to be zero (`offset`). Never both: that raises."""

    linear: bool
    offset: bool

    def __or__(self, other: tuple) -> State:  # either one's parts (a join)
        return State(self.linear or other[0], self.offset or other[1])


ZERO, LINEAR, OTHER = State(False, False), State(True, False), State(False, True)


class NotLinear(TracejitError, AssertionError):
    """`node` is not linear in what it reads from the inputs (a signal inside tracejit:
    forward mode turns it into CustomVJPForwardModeError; an AssertionError, which no code
    on its way catches); `affine`: it is linear but adds a term that does not depend on
    them; `returned`: that term is an output of the graph (`node` made it, None when it is
    an input of the graph)."""

    def __init__(self, node: Node | None, affine: bool = False, returned: bool = False):
        super().__init__(node)
        self.node, self.affine, self.returned = node, affine, returned

    def describe(self, inputs: str) -> str:
        """What the graph does to `inputs` (as "the cotangent") that is not linear in them."""
        node = self.node
        what = f"`{node.prim.name}`{f' at {node.source}' if node.source else ''}" if node else ""
        if not self.returned:
            doing = f"applies {what} to {inputs}"
        else:
            made = f" (made by {what})" if node else " (an input, or a closed-over value)"
            doing = f"returns a value that does not read {inputs}{made}"
        affine = f" (affine: adds a term that does not depend on {inputs})" if self.affine else ""
        return f"{doing}, which is not linear in it{affine}"


Rule = Callable[[Node, list[State]], "State | list[State]"]


def _joined(node: Node, parts: Iterable[State]) -> State:
    out = ZERO
    for part in parts:
        out = out | part
    if out.linear and out.offset:
        raise NotLinear(node, affine=True)
    return out


def _sum_of(*positions: int) -> Rule:
    """Linear in the operands at `positions` (all when none given) jointly: the output adds,
    places or picks them (a sum, a layout change, a select's branches, a scatter-add...).
    The others (a condition, indices) must not depend on the inputs."""

    def rule(node: Node, states: list[State]) -> State:
        picked = positions or range(len(states))
        if any(s.linear for i, s in enumerate(states) if i not in picked):
            raise NotLinear(node)
        return _joined(node, (states[i] for i in picked))

    return rule


def _scaled(*positions: int) -> Rule:
    """A product: linear in each operand at `positions`, one at a time, the others being
    factors that must not depend on the inputs; zero when an operand at `positions` is."""

    def rule(node: Node, states: list[State]) -> State:
        dep = [i for i, s in enumerate(states) if s.linear]
        if len(dep) > 1 or any(i not in positions for i in dep):
            raise NotLinear(node)
        if dep:
            return LINEAR
        return ZERO if any(states[i] == ZERO for i in positions) else OTHER

    return rule


def _float_cast(node: Node, states: list[State]) -> State:
    """A cast between float or complex types (a cast to an integer rounds; zero stays zero)."""
    inexact = dtypes.is_inexact(node.inputs[0].dtype) and dtypes.is_inexact(node.outputs[0].dtype)
    if states[0].linear and not inexact:
        raise NotLinear(node)
    return states[0]


def _const(node: Node, states: list[State]) -> State:
    value = node.attrs["value"]
    return OTHER if np.any(getattr(value, "array", value)) else ZERO  # -0.0 is zero


def _cond(node: Node, states: list[State]) -> list[State]:
    """Linear when the branch index is fixed and every branch is linear in the operands; a
    branch's offset where another's output is linear makes the cond affine."""
    if states[0].linear:
        raise NotLinear(node)
    outs = [states_of(branch.graph, states[1:]) for branch in node.attrs["branches"]]
    return [_joined(node, parts) for parts in zip(*outs)]


def _scan(node: Node, states: list[State]) -> list[State]:
    """Linear when the body is, in its consts, carries and slices; a carry's state joins its
    initial value's and the body's (a carry linear in one step and not in another, as one
    starting from a constant and then overwritten by the inputs, makes the scan affine)."""
    body = node.attrs["body"].graph
    carry = slice(node.attrs["n_consts"], node.attrs["n_consts"] + node.attrs["n_carry"])
    ins = list(states)
    while True:
        outs = states_of(body, ins)
        joined = [_joined(node, pair) for pair in zip(ins[carry], outs)]
        if joined == ins[carry]:
            return joined + outs[len(joined) :]
        ins[carry] = joined


_BY_NAME: dict[str, Rule] = {
    **dict.fromkeys(
        ["add", "sub", "neg", "reduce_sum", "cumsum", "broadcast_in_dim", "reshape"]
        + ["transpose", "rev", "slice", "concatenate", "pad", "real", "imag", "conj"]
        + ["complex", "remat_barrier", "fft", "psum", "all_gather", "psum_scatter"]
        + ["ppermute"],
        _sum_of(),
    ),
    "select": _sum_of(1, 2),
    "take": _sum_of(0),
    "take_along_axis": _sum_of(0),
    "take_add": _sum_of(0, 2),
    "take_along_add": _sum_of(0, 2),
    "mul": _scaled(0, 1),
    "matmul": _scaled(0, 1),
    "div": _scaled(0),
    "solve": _scaled(1),
    "convert": _float_cast,
    "const": _const,
    "cond": _cond,
    "scan": _scan,
}

# Keyed by Primitive like every rule table; a primitive may register its own rule
# (`register(..., rules={LINEAR_RULES: rule})`), the built-in ones are found by name.
LINEAR_RULES = RuleTable("linearity", default=lambda prim: _BY_NAME.get(prim.name))


def _node_states(node: Node, states: list[State]) -> list[State]:
    if node.inputs and all(s == OTHER for s in states):
        return [OTHER] * len(node.outputs)  # nothing from the inputs, nothing known zero
    rule = LINEAR_RULES.get(node.prim)
    if rule is None:
        if any(s.linear for s in states):
            raise NotLinear(node)
        return [OTHER] * len(node.outputs)
    out = rule(node, states)
    return [out] * len(node.outputs) if isinstance(out, State) else list(out)


def states_of(graph: Graph, states: list[State]) -> list[State]:
    """The `State` of each output of `graph` given its inputs'; raises `NotLinear` at the
    first node that is not linear in what it reads from the inputs."""
    live = remove_dead_nodes(graph)
    env = dict(zip(live.inputs, states))
    for node in live.nodes:
        outs = _node_states(node, [env.get(v, OTHER) for v in node.inputs])
        env.update(zip(node.outputs, outs))
    return [env.get(v, OTHER) for v in live.outputs]


def first_nonlinear(
    graph: Graph, inputs: Iterable[int], linear_outputs: bool = False
) -> NotLinear | None:
    """Why `graph` is not linear in `graph.inputs[inputs]` (the first node that is not linear
    in what it reads from them, see the module doc); None when it is. With `linear_outputs`,
    an output holding a term that does not depend on them (not known zero) is not linear."""
    wrt = set(inputs)
    ins = [LINEAR if i in wrt else OTHER for i in range(len(graph.inputs))]
    try:
        outs = states_of(graph, ins)
    except NotLinear as found:
        return found
    if linear_outputs:
        made_by = {v: n for n in graph.nodes for v in n.outputs}
        for v, state in zip(graph.outputs, outs):
            if state.offset:
                return NotLinear(made_by.get(v), affine=True, returned=True)
    return None


__all__ = ["LINEAR", "LINEAR_RULES", "OTHER", "ZERO", "NotLinear", "State", "first_nonlinear"]
