"""tracejit.lax on the NumPy side (the oracle of `F.lax.` steps), and the bound of a loop.

The loops run their body as Python on NumPy values; dynamic_slice and dynamic_update_slice
clamp their starts so the slice fits, as lax documents (and JAX does). A loop's bound is its
body's rule applied once per iteration (_fuzz_eval.evaluate_step on the carry's Shadow).
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish


def _clamped(starts, shape, sizes):
    return tuple(min(max(int(s), 0), n - k) for s, n, k in zip(starts, shape, sizes))


class NumpyLax:
    @staticmethod
    def fori_loop(lower, upper, body, init):
        carry = init
        for i in range(lower, upper):
            carry = body(i, carry)
        return carry

    @staticmethod
    def while_loop(cond, body, init):
        carry = init
        while cond(carry):
            carry = body(carry)
        return carry

    @staticmethod
    def scan(f, init, xs, reverse=False):
        carry, ys = init, {}
        order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
        for t in order:
            carry, ys[t] = f(carry, xs[t])
        return carry, np.stack([np.asarray(ys[t]) for t in range(len(xs))])

    @staticmethod
    def cond(pred, true_fun, false_fun, *operands):
        return true_fun(*operands) if pred else false_fun(*operands)

    @staticmethod
    def switch(index, branches, *operands):
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)

    @staticmethod
    def associative_scan(fn, x, reverse=False, axis=0):
        if reverse:
            return np.flip(fn.accumulate(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return fn.accumulate(x, axis=axis, dtype=x.dtype)

    @staticmethod
    def dynamic_slice(x, starts, sizes):
        starts = _clamped(starts, x.shape, sizes)
        return x[tuple(slice(s, s + k) for s, k in zip(starts, sizes))].copy()

    @staticmethod
    def dynamic_update_slice(x, update, starts):
        starts = _clamped(starts, x.shape, update.shape)
        y = x.copy()
        y[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
        return y


def _at(s: Shadow, t: int) -> Shadow:
    return Shadow(s.value[t], s.err[t], s.unk[t])


def loop_shadow(step, out, args: list[Shadow], evaluate) -> Shadow:
    """The bound of a loop step: `evaluate(body, env)` per iteration, env's 0 the carry."""
    kind, body, count, extra = step.params
    env = dict(enumerate(args))
    if kind in ("cond", "switch"):  # the body's branch is taken at 1 and up (cond), at 1
        index = int(args[-1].value)  # (switch, which clamps its index into [0, 2])
        count = int(index > 0 if kind == "cond" else min(max(index, 0), 2) == 1)
    if kind in ("fori", "while", "cond", "switch"):
        for _ in range(count):
            env[0] = evaluate(body, env)
        return finish(out, env[0].err, env[0].unk)
    reverse, which = extra  # scan over args[1]'s leading axis
    n = args[1].value.shape[0]
    ys = {}
    for t in range(n - 1, -1, -1) if reverse else range(n):
        env[1] = _at(args[1], t)
        env[0] = ys[t] = evaluate(body, env)
    if which == 0:
        return finish(out, env[0].err, env[0].unk)
    err = np.stack([ys[t].err for t in range(n)])
    return finish(out, err, np.stack([ys[t].unk for t in range(n)]))


def assoc_shadow(step, out, a: Shadow) -> Shadow:
    """associative_scan: add as a sum in any order (cumsum's bound), maximum/minimum as
    running extrema (the largest bound so far; a zero after mixed signed zeros is TINY)."""
    from _fuzz_reduce import cumsum_rule

    op, axis, reverse = step.params
    flip = (lambda t: np.flip(t, axis)) if reverse else (lambda t: t)
    a = Shadow(flip(a.value), flip(a.err), flip(a.unk))
    if op == "add":
        s = cumsum_rule(flip(out), a, axis)
        return finish(out, flip(s.err), flip(s.unk))
    err = np.maximum.accumulate(a.err, axis=axis) if a.err.size else a.err
    if a.value.dtype.kind == "f" and a.value.size:
        zero = a.value == 0
        neg = np.logical_or.accumulate(zero & np.signbit(a.value), axis=axis)
        pos = np.logical_or.accumulate(zero & ~np.signbit(a.value), axis=axis)
        err = np.where(neg & pos & (flip(out) == 0), np.maximum(err, TINY), err)
    unk = np.logical_or.accumulate(a.unk, axis=axis) if a.unk.size else a.unk
    return finish(out, flip(err), flip(unk))
