"""tracejit.lax on the NumPy side (the oracle of `F.lax.` steps), and the bound of a loop.

The loops run their body as Python on NumPy values; dynamic_slice and dynamic_update_slice
clamp their starts so the slice fits, as lax documents (and JAX does). A loop's bound is its
body's rule applied once per iteration (_fuzz_eval.evaluate_step on the carry's Shadow).
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import Shadow, finish


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
    if kind in ("fori", "while") or (kind == "cond" and int(args[-1].value) > 0):
        for _ in range(count):
            env[0] = evaluate(body, env)
        return finish(out, env[0].err, env[0].unk)
    if kind == "cond":
        return finish(out, args[0].err, args[0].unk)
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
