"""bfloat16 steps: a drawer and its bound. ml_dtypes' bfloat16 is not a NumPy float kind
(its kind is 'V') and mixes with Python floats as float64 in NumPy, so bfloat16 values stay
inside one step: float32 values are converted to bfloat16, combined, and converted back.

    np.sum((v0.astype(F.bfloat16) * v1.astype(F.bfloat16)), axis=0).astype(np.float32)

Bounds (u = 2^-8, the unit roundoff of bfloat16's 8-bit significand): the conversion from
float32 rounds to nearest even, so exact operands convert exactly (bit for bit) and an
inexact one may move by its bound plus one bfloat16 ulp. + - * compute in float32 and round
to bfloat16 (ml_dtypes and tracejit alike; a double rounding): within their propagated
bound plus one ulp. max is exact on exact operands. A sum or cumsum of n terms: ml_dtypes
rounds every partial sum to bfloat16, tracejit accumulates in float32 and rounds once (as
JAX): both within (n - 1) u sum |x| plus one ulp. Non-finite results of inexact operands
are undecided.
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish
from _fuzz_ops import Pool, Step, partner
from hypothesis import strategies as st

U = 2.0**-8
ERRSTATE = {"all": "ignore"}


def bf16_ulp(x) -> np.ndarray:
    """The spacing of bfloat16 at |x| (float32's spacing times 2^16; inf where not finite)."""
    with np.errstate(**ERRSTATE):
        return np.spacing(np.abs(np.asarray(x, np.float32))).astype(np.float64) * 2.0**16


def bf16(draw, pool: Pool) -> Step | None:
    a = pool.pick(draw, kinds="f")
    if a is None or pool.dtype(a) != np.float32:
        a = pool.add_input(pool.shape(a) if a is not None else (3,), "float32")
    op = draw(st.sampled_from(["+", "-", "*", "max", "convert"]))
    x = "{0}.astype(F.bfloat16)"
    if op in ("+", "-", "*", "max"):
        b = partner(draw, pool, a, "f")
        if pool.dtype(b) != np.float32:
            b = pool.add_input(pool.shape(b), "float32")
        args, y = (a, b), "{1}.astype(F.bfloat16)"
        expr = f"np.maximum({x}, {y})" if op == "max" else f"({x} {op} {y})"
    else:
        args, expr = (a,), x
    reduce = draw(st.sampled_from([None, None, "sum", "cumsum"]))
    axis = None
    if reduce:
        ndim = len(pool.shape(a))  # the reduction axis of the (broadcast) result, below
        axis = None if ndim == 0 or draw(st.booleans()) else draw(st.integers(0, ndim - 1))
        expr = f"np.{reduce}({expr}, axis={axis})"
    return Step(f"{expr}.astype(np.float32)", args, "bf16", (op, reduce, axis))


def _to_bf16(s: Shadow) -> Shadow:
    """float32 -> bfloat16 (as float64 values): exact where s is, else + one ulp."""
    import ml_dtypes

    with np.errstate(**ERRSTATE):
        v = s.value.astype(ml_dtypes.bfloat16).astype(np.float64)
        err = np.where(s.err > 0, s.err + bf16_ulp(v), 0.0)
    return Shadow(v, err, s.unk | ((s.err > 0) & ~np.isfinite(v)))


def bf16_rule(out, args: list[Shadow], op: str, reduce, axis) -> Shadow:
    xs = [_to_bf16(a) for a in args]
    if len(xs) == 2:
        shape = np.broadcast_shapes(xs[0].value.shape, xs[1].value.shape)
        xs = [Shadow(*(np.broadcast_to(t, shape) for t in (s.value, s.err, s.unk))) for s in xs]
    x = xs[0]
    with np.errstate(**ERRSTATE):
        if op in ("+", "-", "*"):
            y = xs[1]
            r = {"+": x.value + y.value, "-": x.value - y.value, "*": x.value * y.value}[op]
            prop = x.err + y.err
            if op == "*":
                prop = x.err * np.abs(y.value) + y.err * np.abs(x.value) + x.err * y.err
            # float32 then bfloat16: a double rounding, never exact in general
            err = np.where(np.isfinite(r), prop + bf16_ulp(r), np.where(prop > 0, np.inf, 0))
            x = Shadow(r, np.maximum(err, np.where(r == 0, TINY, 0.0)), x.unk | y.unk)
        elif op == "max":
            y = xs[1]
            r = np.maximum(x.value, y.value)
            mixed = (r == 0) & (np.signbit(x.value) != np.signbit(y.value))
            err = np.maximum(np.maximum(x.err, y.err), np.where(mixed, TINY, 0.0))
            x = Shadow(r, err, x.unk | y.unk)
        if reduce:
            x = _reduced(x, reduce, axis)
    return finish(out, np.where(x.unk, 0.0, x.err), x.unk | ~np.isfinite(x.err))


def _reduced(x: Shadow, reduce: str, axis) -> Shadow:
    v, e, unk = x.value, x.err, x.unk
    if axis is None:
        v, e, unk, axis = v.reshape(-1), e.reshape(-1), unk.reshape(-1), 0
    finite = np.where(np.isfinite(v), np.abs(v), 0.0)
    special = ~np.isfinite(v)
    if reduce == "sum":
        n = v.shape[axis]
        total = np.sum(v, axis=axis)
        err = np.sum(e, axis=axis) + max(n - 1, 0) * U * np.sum(finite, axis=axis)
        err = err + bf16_ulp(total) + TINY
        err = np.where(np.any(special, axis=axis), 0.0, err)
        return Shadow(total, err, np.any(unk | (special & (e > 0)), axis=axis) | ~np.isfinite(err))
    steps = np.arange(v.shape[axis]).reshape([-1 if i == axis else 1 for i in range(v.ndim)])
    total = np.cumsum(v, axis=axis)
    err = np.cumsum(e, axis=axis) + steps * U * np.cumsum(finite, axis=axis)
    err = err + bf16_ulp(total) + TINY
    seen = np.logical_or.accumulate(special, axis=axis) if v.size else special
    unk = np.logical_or.accumulate(unk | (special & (e > 0)), axis=axis) if v.size else unk
    return Shadow(total, np.where(seen, 0.0, err), unk | ~np.isfinite(err))
