"""The control-flow primitives: `scan`, `while_loop` and `cond`, whose bodies are regions.

    scan[body, length, reverse, n_consts, n_carry] consts... init... xs...
        -> final carry..., ys...
    body: (consts..., carry..., x slices...) -> (new carry..., y slices...)
    iteration t (t = 0..length-1, or length-1..0 when reverse) reads xs[t], writes ys[t].

    while_loop[cond, body, n_cond_consts] cond_consts... body_consts... init...
        -> final carry...
    cond: (cond_consts..., carry...) -> bool[];  body: (body_consts..., carry...) -> carry...

    cond[branches] index operands... -> outputs...
    branch k: (operands...) -> outputs...; index (int32[]) is clamped to [0, len(branches)).

The NumPy reference implementations run the regions with the reference interpreter; the
CPU backend compiles the bodies and runs the loop in generated C++ (backend_cpu/loops.py).
"""

from __future__ import annotations

import numpy as np

from tracejit.errors import ShapeError
from tracejit.ir.interpret import evaluate
from tracejit.ir.kernel import Fallback, Step
from tracejit.ir.primitives import CONTROL, register
from tracejit.ir.regions import Region, aval_str, same_avals


def _mismatch(what: str, got: list[tuple], want: list[tuple]) -> ShapeError:
    g = ", ".join(aval_str(a) for a in got)
    w = ", ".join(aval_str(a) for a in want)
    return ShapeError(f"{what}: got ({g}), the region expects ({w})")


# ---------------------------------------------------------------- scan


def _scan_rule(avals, body: Region, length: int, reverse: bool, n_consts: int, n_carry: int):
    n_fixed = n_consts + n_carry
    fixed, xs = avals[:n_fixed], avals[n_fixed:]
    want = body.in_avals
    if len(avals) != len(want):
        raise ShapeError(f"scan: {len(avals)} operands for a body of {len(want)} inputs")
    if not same_avals(fixed, want[:n_fixed]):
        raise _mismatch("scan consts and carry", fixed, want[:n_fixed])
    slices = [(tuple(s[1:]), d, w) for s, d, w in xs]
    if any(not s or s[0] != length for s, _, _ in xs) or not same_avals(slices, want[n_fixed:]):
        stacked = [((length,) + tuple(s), d, w) for s, d, w in want[n_fixed:]]
        raise _mismatch(f"scan xs (length {length})", list(xs), stacked)
    outs = body.out_avals
    if not same_avals(outs[:n_carry], want[n_consts:n_fixed]):
        raise _mismatch("scan body's carry output", outs[:n_carry], want[n_consts:n_fixed])
    carry = [(s, d, False) for s, d, _ in want[n_consts:n_fixed]]
    ys = [((length,) + tuple(s), d, False) for s, d, _ in outs[n_carry:]]
    return carry + ys


def _scan_impl(*args, body: Region, length, reverse, n_consts, n_carry):
    consts = list(args[:n_consts])
    carry = list(args[n_consts : n_consts + n_carry])
    xs = args[n_consts + n_carry :]
    y_vals = body.graph.outputs[n_carry:]
    ys = [np.empty((length,) + v.shape, v.dtype) for v in y_vals]
    for it in range(length):
        t = length - 1 - it if reverse else it
        outs = evaluate(body.graph, consts + carry + [x[t] for x in xs])
        carry = outs[:n_carry]
        for y, o in zip(ys, outs[n_carry:]):
            y[t] = o
    return tuple(carry + ys)


# ---------------------------------------------------------------- while_loop


def _while_rule(avals, cond: Region, body: Region, n_cond_consts: int):
    n_carry = len(body.graph.outputs)
    n_body_consts = len(body.graph.inputs) - n_carry
    if len(avals) != n_cond_consts + n_body_consts + n_carry:
        raise ShapeError(f"while_loop: {len(avals)} operands do not fit its regions")
    carry = avals[n_cond_consts + n_body_consts :]
    cond_in = avals[:n_cond_consts] + carry
    body_in = avals[n_cond_consts : n_cond_consts + n_body_consts] + carry
    if not same_avals(cond_in, cond.in_avals):
        raise _mismatch("while_loop cond operands", cond_in, cond.in_avals)
    if not same_avals(body_in, body.in_avals):
        raise _mismatch("while_loop body operands", body_in, body.in_avals)
    if not same_avals(cond.out_avals, [((), np.dtype(np.bool_), False)]):
        raise _mismatch("while_loop cond result", cond.out_avals, [((), np.dtype(np.bool_), 0)])
    if not same_avals(body.out_avals, carry):
        raise _mismatch("while_loop body's carry output", body.out_avals, carry)
    return [(s, d, False) for s, d, _ in carry]


def _while_impl(*args, cond: Region, body: Region, n_cond_consts: int):
    n_carry = len(body.graph.outputs)
    n_body_consts = len(body.graph.inputs) - n_carry
    cond_consts = list(args[:n_cond_consts])
    body_consts = list(args[n_cond_consts : n_cond_consts + n_body_consts])
    carry = list(args[n_cond_consts + n_body_consts :])
    while bool(evaluate(cond.graph, cond_consts + carry)[0]):
        carry = evaluate(body.graph, body_consts + carry)
    return tuple(carry)


# ---------------------------------------------------------------- cond / switch


def _cond_rule(avals, branches: tuple[Region, ...]):
    index, operands = avals[0], avals[1:]
    if tuple(index[0]) != () or np.dtype(index[1]) != np.int32:
        raise ShapeError(f"cond: the branch index must be int32[], got {aval_str(index)}")
    first = branches[0].out_avals
    for k, br in enumerate(branches):
        if not same_avals(list(operands), br.in_avals):
            raise _mismatch(f"cond operands of branch {k}", list(operands), br.in_avals)
        if not same_avals(br.out_avals, first):
            raise _mismatch(f"cond branch {k} outputs", br.out_avals, first)
    return [(s, d, False) for s, d, _ in first]


def clamp_index(index, n: int) -> int:
    return int(min(max(int(index), 0), n - 1))


def _cond_impl(index, *operands, branches):
    branch = branches[clamp_index(index, len(branches))]
    return tuple(evaluate(branch.graph, list(operands)))


CONTROL_PRIMS = ("scan", "while_loop", "cond")


def is_loop(step: Step) -> bool:
    """Whether schedule step `step` runs a control primitive (each backend's loops.py)."""
    return isinstance(step, Fallback) and step.prim in CONTROL_PRIMS


def regions_in_order(prim: str, attrs: dict) -> list[Region]:
    """The regions of a control node in the order backends compile them: scan's body;
    while_loop's cond then body; cond's branches."""
    if prim == "scan":
        return [attrs["body"]]
    if prim == "while_loop":
        return [attrs["cond"], attrs["body"]]
    return list(attrs["branches"])


register("scan", CONTROL, _scan_rule, _scan_impl, multiple_results=True)
register("while_loop", CONTROL, _while_rule, _while_impl, multiple_results=True)
register("cond", CONTROL, _cond_rule, _cond_impl, multiple_results=True)

__all__ = ["CONTROL", "CONTROL_PRIMS", "clamp_index", "is_loop", "regions_in_order"]
