"""`while_loop` on CUDA with few predicate readbacks: guarded iterations, launched in batches.

The host must know whether to launch the body, and the predicate lives on the device, so a
plain loop reads one bool back (a stream synchronization) per iteration. Instead the loop
launches a *guarded step*, one region compiled from the predicate and the body:

    step(cond_consts, body_consts, carry, p) -> (carry', p')
    carry' = body(carry) where p else carry;  p' = cond(carry')

A guarded step after the loop has ended changes nothing (p stays false), so the host may
queue k of them and read p back once. k starts at 1 and doubles up to `MAX_BATCH` per
readback: a loop of n iterations reads back about log2(MAX_BATCH) + n / MAX_BATCH times
instead of n + 1, and computes at most min(n, MAX_BATCH - 1) discarded bodies (indices are
clamped, so a discarded body reads in bounds; its values never reach the carry: a select,
not a product, so NaNs do not leak).

Used when the step runs on the GPU alone (kernels and cuBLAS only): a body with a host step
(a debug print, a NumPy fallback, a nested loop, a collective) would repeat that step's
effect or synchronize anyway, so such loops keep the per-iteration readback.
"""

from __future__ import annotations

import numpy as np

from tracejit.ir.builder import GraphBuilder
from tracejit.ir.graph import Graph, Value, fresh
from tracejit.ir.primitives import get as get_primitive

MAX_BATCH = 32  # guarded steps queued per readback, at most


def guarded_step(cond: Graph, body: Graph, n_cond_consts: int) -> Graph:
    """The guarded step of a while loop's `cond` and `body` regions (see the module doc)."""
    n_carry = len(body.outputs)
    n_body_consts = len(body.inputs) - n_carry
    b = GraphBuilder()
    cond_consts = fresh(cond.inputs[:n_cond_consts])
    body_consts = fresh(body.inputs[:n_body_consts])
    carry = fresh(body.inputs[n_body_consts:])
    p = Value((), np.bool_)
    b.graph.inputs = [*cond_consts, *body_consts, *carry, p]
    select, broadcast = get_primitive("select"), get_primitive("broadcast_in_dim")
    kept = []
    for new, old in zip(b.inline(body, [*body_consts, *carry]), carry):
        mask = b.bind(broadcast, [p], {"shape": old.shape, "dims": ()})[0] if old.shape else p
        kept.append(b.bind(select, [mask, new, old], {})[0])
    b.graph.outputs = [*kept, *b.inline(cond, [*cond_consts, *kept])]
    return b.graph


def run_batched(cond, step, cond_consts: list, body_consts: list, carry: list, scalar) -> list:
    """The final carry of the loop: `cond` and `step` (the guarded step) are compiled CUDA
    functions, `scalar(x)` reads a device bool back."""
    p = cond.run_plain([*cond_consts, *carry])[0]
    k = 1
    while scalar(p):
        for _ in range(k):
            *carry, p = step.run_plain([*cond_consts, *body_consts, *carry, p])
        k = min(2 * k, MAX_BATCH)
    return carry


__all__ = ["MAX_BATCH", "guarded_step", "run_batched"]
