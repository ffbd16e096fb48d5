"""Reverse-mode autodiff as a graph-to-graph transformation.

`joint_graph(graph, wrt, seeded)` returns one graph that computes the forward outputs and the
cotangents of the inputs listed in `wrt`, given one cotangent input per output in `seeded`:

    joint(inputs..., cotangents...) -> (outputs..., input cotangents...)

One VJP rule per primitive lives in `VJP_RULES`, keyed by the `Primitive` (registered with
`@defvjp(prim_or_name, ...)`, the registry's one decorator, `RuleTable.register`). A rule receives an
`Emitter` (which appends primitive nodes to the joint graph), the output cotangent, the
primal inputs as `Value`s, the primal output and the node's attributes, and returns one
cotangent per input (`None` for a symbolic zero). Rules are written with primitives only, so
the joint graph is itself differentiable: `grad(grad(f))` just differentiates it again.

Symbolic zeros: a value with no cotangent is absent from the cotangent map; rules are not run
for nodes whose outputs carry no cotangent, and no zero array is built except for a requested
input cotangent that is zero.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from tracejit.errors import InternalError, TracejitTypeError, UnsupportedError
from tracejit.ir import (
    dtypes,
    structural,  # noqa: F401  (registers the primitives ruled on here)
)
from tracejit.ir.builder import Emitter
from tracejit.ir.graph import Graph, Node, Value, dependents
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.primitives import RuleTable

Rule = Callable[..., list]


# ---------------------------------------------------------------- shared helpers


def unbroadcast(e: Emitter, ct: Value, shape: tuple[int, ...], dims: tuple[int, ...]) -> Value:
    """The transpose of `broadcast_in_dim(x: shape -> ct.shape, dims)`: sum what was copied.

    Every broadcasting rule ends here: elementwise primitives take operands of one shape, so
    NumPy-style broadcasting reaches autodiff only as explicit `broadcast_in_dim` nodes.
    """
    expanded = [i for i, d in enumerate(dims) if shape[i] == 1 and ct.shape[d] != 1]
    summed = tuple(sorted(set(range(ct.ndim)) - set(dims)) + [dims[i] for i in expanded])
    out = e.reduce_sum(ct, axes=tuple(sorted(summed))) if summed else ct
    return out if out.shape == tuple(shape) else e.reshape(out, shape=tuple(shape))


def _bcast_to(e: Emitter, x: Value, shape: tuple[int, ...], kept: Sequence[int]) -> Value:
    """Broadcast `x` (the result of reducing away every axis not in `kept`) back to `shape`."""
    if x.shape == tuple(shape):
        return x
    return e.broadcast_in_dim(x, shape=tuple(shape), dims=tuple(kept))


def float_indices(values: Sequence[Value]) -> list[int]:
    """The positions of the inexact (float or complex) values: those a derivative flows to."""
    return [i for i, v in enumerate(values) if dtypes.is_inexact(v.dtype)]


def scattered(n: int, *parts) -> list:
    """`n` entries, None (a symbolic zero) but where a `(positions, values)` part puts its
    values: a rule's per-operand results from the ones it computed."""
    out: list = [None] * n
    for positions, values in parts:
        for i, v in zip(positions, values):
            out[i] = v
    return out


def _kept_axes(ndim: int, axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _inverse_perm(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


# ---------------------------------------------------------------- the rule table

VJP_RULES = RuleTable("VJP")
defvjp = VJP_RULES.register


def zero_vjp(e, ct, *inputs, out, **attrs):
    """The VJP of a primitive through which no derivative flows (piecewise constant, integer
    or no results): a symbolic zero for every input."""
    return [None] * len(inputs)


# Piecewise-constant or non-float results: their derivative is zero almost everywhere.
_ZERO_DERIVATIVE = "argmax argmin iota const"
defvjp(*_ZERO_DERIVATIVE.split())(zero_vjp)


# ---------------------------------------------------------------- reductions and scans


@defvjp("reduce_sum")
def _reduce_sum(e, ct, x, *, out, axes):
    return [_bcast_to(e, ct, x.shape, _kept_axes(x.ndim, axes))]


def _reduce_chooser(e, ct, x, *, out, axes):
    # Ties share the cotangent evenly, as in JAX's reduce_max: the result is symmetric in the
    # tied elements and is the average of the one-hot subgradients.
    kept = _kept_axes(x.ndim, axes)
    hit = e.eq(x, _bcast_to(e, out, x.shape, kept))
    ones = e.select(hit, e.full(1.0, x), e.full(0.0, x))
    count = e.reduce_sum(ones, axes=axes)
    share = e.div(ct, count)
    return [e.mul(ones, _bcast_to(e, share, x.shape, kept))]


defvjp("reduce_max", "reduce_min")(_reduce_chooser)


@defvjp("reduce_prod")
def _reduce_prod(e, ct, x, *, out, axes):
    # d out / d x_i = prod_{j != i} x_j, computed without dividing by x_i so zeros are exact:
    # move the reduced axes last, flatten them to n, and take the product over an (n, n) grid
    # whose diagonal is replaced by ones. O(n^2) per row; reductions of products are short.
    kept = _kept_axes(x.ndim, axes)
    perm = kept + tuple(axes)
    xt = e.transpose(x, perm=perm) if perm != tuple(range(x.ndim)) else x
    rows = math.prod(x.shape[a] for a in kept)
    n = math.prod(x.shape[a] for a in axes)
    flat = e.reshape(xt, shape=(rows, n))
    grid = e.broadcast_in_dim(flat, shape=(rows, n, n), dims=(0, 2))
    i = e.iota(shape=(rows, n, n), dtype=np.dtype(np.int64), axis=1)
    j = e.iota(shape=(rows, n, n), dtype=np.dtype(np.int64), axis=2)
    others = e.reduce_prod(e.select(e.eq(i, j), e.full(1.0, grid), grid), axes=(2,))
    others = e.reshape(others, shape=xt.shape)
    if perm != tuple(range(x.ndim)):
        others = e.transpose(others, perm=_inverse_perm(perm))
    return [e.mul(others, _bcast_to(e, ct, x.shape, kept))]


@defvjp("cumsum")
def _cumsum(e, ct, x, *, out, axis):
    return [e.rev(e.cumsum(e.rev(ct, axes=(axis,)), axis=axis), axes=(axis,))]


def _axis_slice(e, x: Value, axis: int, start: int, stop: int) -> Value:
    starts, stops = [0] * x.ndim, list(x.shape)
    starts[axis], stops[axis] = start, stop
    return e.slice(x, starts=tuple(starts), stops=tuple(stops), steps=(1,) * x.ndim)


@defvjp("cumprod")
def _cumprod(e, ct, x, *, out, axis):
    # The VJP of the log-depth (Hillis-Steele) scan x <- concat(x[:s], x[s:] * x[:n-s]) for
    # s = 1, 2, 4, ...: multiplies only, no division, so zeros in x are exact (JAX likewise
    # differentiates its associative scan). The forward products are recomputed here.
    n = x.shape[axis]
    levels, s = [], 1
    while s < n:
        levels.append((x, s))
        done, hi, lo = (_axis_slice(e, x, axis, a, b) for a, b in ((0, s), (s, n), (0, n - s)))
        x = e.concatenate(done, e.mul(hi, lo), axis=axis)
        s *= 2
    zero = e.full(0.0, Value((), ct.dtype))
    for x, s in reversed(levels):
        ct_done, ct_rest = _axis_slice(e, ct, axis, 0, s), _axis_slice(e, ct, axis, s, n)
        hi, lo = _axis_slice(e, x, axis, s, n), _axis_slice(e, x, axis, 0, n - s)
        widths = tuple((0, s) if a == axis else (0, 0) for a in range(x.ndim))
        to_lo = e.pad(e.mul(ct_rest, hi), zero, widths=widths)
        ct = e.add(e.concatenate(ct_done, e.mul(ct_rest, lo), axis=axis), to_lo)
    return [ct]


# ---------------------------------------------------------------- layout


@defvjp("reshape")
def _reshape(e, ct, x, *, out, shape):
    return [e.reshape(ct, shape=x.shape)]


@defvjp("transpose")
def _transpose(e, ct, x, *, out, perm):
    return [e.transpose(ct, perm=_inverse_perm(perm))]


@defvjp("broadcast_in_dim")
def _broadcast_in_dim(e, ct, x, *, out, shape, dims):
    return [unbroadcast(e, ct, x.shape, dims)]


@defvjp("rev")
def _rev(e, ct, x, *, out, axes):
    return [e.rev(ct, axes=axes)]


def _interleave_zeros(e, ct, axis: int, step: int, length: int) -> Value:
    """Spread `ct` along `axis` to positions 0, step, 2*step, ... of an axis of `length`."""
    shape = ct.shape
    col = e.reshape(ct, shape=shape[: axis + 1] + (1,) + shape[axis + 1 :])
    zeros_shape = shape[: axis + 1] + (step - 1,) + shape[axis + 1 :]
    zeros = e.full(0.0, Value(zeros_shape, ct.dtype))
    spread = e.concatenate(col, zeros, axis=axis + 1)
    spread = e.reshape(spread, shape=shape[:axis] + (shape[axis] * step,) + shape[axis + 1 :])
    return _axis_slice(e, spread, axis, 0, length)


@defvjp("slice")
def _slice(e, ct, x, *, out, starts, stops, steps):
    for axis, step in enumerate(steps):
        if step > 1:
            ct = _interleave_zeros(e, ct, axis, step, stops[axis] - starts[axis])
    widths = tuple((a, n - b) for a, b, n in zip(starts, stops, x.shape))
    if all(w == (0, 0) for w in widths):
        return [ct]
    zero = e.full(0.0, Value((), ct.dtype))
    return [e.pad(ct, zero, widths=widths)]


@defvjp("concatenate")
def _concatenate(e, ct, *xs, out, axis):
    ends = list(itertools.accumulate(x.shape[axis] for x in xs))
    return [_axis_slice(e, ct, axis, end - x.shape[axis], end) for x, end in zip(xs, ends)]


@defvjp("pad")
def _pad(e, ct, x, value, *, out, widths):
    starts = tuple(lo for lo, _ in widths)
    stops = tuple(lo + n for (lo, _), n in zip(widths, x.shape))
    ct_x = e.slice(ct, starts=starts, stops=stops, steps=(1,) * ct.ndim)
    everything = tuple(range(ct.ndim))
    total = e.reduce_sum(ct, axes=everything) if everything else ct
    inner = e.reduce_sum(ct_x, axes=everything) if everything else ct_x
    return [ct_x, e.sub(total, inner)]  # the padding value's cotangent: the padded cells' sum


# ---------------------------------------------------------------- gather / scatter


@defvjp("take")
def _take(e, ct, x, idx, *, out, axis):
    return [e.take_add(e.full(0.0, x), idx, ct, axis=axis), None]


@defvjp("take_add")
def _take_add(e, ct, x, idx, upd, *, out, axis):
    return [ct, None, e.take(ct, idx, axis=axis)]


@defvjp("take_along_axis")
def _take_along_axis(e, ct, x, idx, *, out, axis):
    return [e.take_along_add(e.full(0.0, x), idx, ct, axis=axis), None]


@defvjp("take_along_add")
def _take_along_add(e, ct, x, idx, upd, *, out, axis):
    return [ct, None, e.take_along_axis(ct, idx, axis=axis)]


# ---------------------------------------------------------------- matmul


def swap_last(e, x: Value) -> Value:
    """The transpose of the last two axes."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return e.transpose(x, perm=perm)


@defvjp("matmul")
def _matmul(e, ct, a, b, *, out):
    return [e.matmul(ct, swap_last(e, b)), e.matmul(swap_last(e, a), ct)]


# ---------------------------------------------------------------- the transformation


def _rule_for(node: Node) -> Rule:
    rule = VJP_RULES.get(node.prim)
    if rule is None:
        where = f"\n  at {node.source}" if node.source else ""
        raise UnsupportedError(
            f"no VJP rule for {node.prim.name!r}: tracejit cannot differentiate through it. "
            f"Wrap its input in tnp.stop_gradient if no gradient must flow there.{where}"
        )
    return rule


def _accumulate(e: Emitter, cts: dict[Value, Value], v: Value, ct: Value) -> None:
    if not dtypes.is_inexact(v.dtype):
        return  # integer and bool values carry no cotangent
    if ct.shape != v.shape or ct.dtype != v.dtype:
        raise InternalError(f"a VJP rule gave a {ct.type_str} cotangent for {v.type_str}")
    cts[v] = e.add(cts[v], ct) if v in cts else ct


def active_values(graph: Graph, wrt: Sequence[int]) -> set[Value]:
    """The values of `graph` that depend on its inputs `wrt` other than through
    `stop_gradient`: only they carry cotangents the inputs `wrt` can receive."""
    through = [n for n in graph.nodes if n.prim.name != "stop_gradient"]
    return dependents(through, [graph.inputs[i] for i in wrt])


def backward_pass(
    e: Emitter, graph: Graph, cts: dict[Value, Value], active: set[Value] | None = None
) -> dict[Value, Value]:
    """Propagate cotangents from `cts` (seeded at outputs) back through `graph`'s nodes;
    with `active`, only into those values (so a node computing a constant of the
    differentiation, a `while_loop` among them, is never asked for its VJP)."""
    for node in reversed(graph.nodes):
        out_cts = [cts.get(v) for v in node.outputs]
        if all(c is None for c in out_cts):
            continue  # symbolic zero: nothing flows back through this node
        rule = _rule_for(node)
        e.source = node.source
        if node.prim.multiple_results:  # the rule takes every cotangent and every output
            in_cts = rule(e, out_cts, *node.inputs, out=node.outputs, **node.attrs)
        else:
            in_cts = rule(e, out_cts[0], *node.inputs, out=node.outputs[0], **node.attrs)
        for v, ct in zip(node.inputs, in_cts):
            if ct is not None and (active is None or v in active):
                _accumulate(e, cts, v, ct)
    e.source = None
    return cts


def joint_graph(graph: Graph, wrt: Sequence[int], seeded: Sequence[int]) -> Graph:
    """The forward + backward graph of `graph`.

    Inputs: `graph.inputs` then one cotangent per output index in `seeded` (float outputs).
    Outputs: `graph.outputs` then the cotangent of each input index in `wrt` (zeros if none).
    Backward nodes have `node.phase == "backward"`.
    """
    joint = Graph(list(graph.inputs), list(graph.nodes), list(graph.outputs))
    e = Emitter(joint, "backward")
    cts: dict[Value, Value] = {}
    for i in seeded:
        out = graph.outputs[i]
        if not dtypes.is_inexact(out.dtype):
            raise TracejitTypeError(
                f"output {i} has dtype {out.dtype}: only float outputs take a cotangent"
            )
        ct = Value(out.shape, out.dtype)
        joint.inputs.append(ct)
        _accumulate(e, cts, out, ct)
    backward_pass(e, graph, cts, active_values(graph, wrt))
    for i in wrt:
        x = graph.inputs[i]
        joint.outputs.append(cts[x] if x in cts else e.full(0.0, x))
    return remove_dead_nodes(joint)


__all__ = [
    "VJP_RULES",
    "Emitter",
    "backward_pass",
    "defvjp",
    "float_indices",
    "joint_graph",
    "unbroadcast",
    "zero_vjp",
]
